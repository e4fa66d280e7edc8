"""The collect step in the nightly flow and `veille collect`, against a loopback feed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner

from tests.collectkit import rss, web, write_sources
from veille.collect.write import document_id

__all__ = ["web"]

ITEM = {
    "title": "Kestrel 2.1 annonce un débit de 2 900 tokens/s",
    "description": "Kestrel 2.1 atteint 2 900 tokens/s par GPU sur la charge de référence de l'éditeur.",
    "pubDate": "Mon, 20 Jul 2026 08:00:00 GMT",
}


def _corpus_with_feed(tmp_path: Path, web: HTTPServer) -> tuple[Path, str]:
    corpus = tmp_path / "corpus"
    shutil.copytree(Path(__file__).resolve().parents[1] / "corpus", corpus)
    link = web.url_for("/kestrel-2-1")
    web.expect_request("/feed.xml").respond_with_data(
        rss([{**ITEM, "link": link}]), content_type="application/rss+xml"
    )
    write_sources(
        corpus,
        [
            {
                "name": "kestrel-blog",
                "kind": "feed",
                "url": web.url_for("/feed.xml"),
                "source_type": "article-presse",
            },
            {
                "name": "dead",
                "kind": "feed",
                "url": web.url_for("/missing.xml"),
                "source_type": "article-presse",
            },
        ],
    )
    return corpus, document_id(link)


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_the_flow_collects_first_and_a_failing_source_does_not_fail_the_night(
    tmp_path: Path, web: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from veille.flows.veille import veille_flow
    from veille.store.readers import document_snapshot

    corpus, doc_id = _corpus_with_feed(tmp_path, web)
    monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(tmp_path / "warehouse"))
    state = veille_flow(corpus=str(corpus), backend="offline", return_state=True)
    assert state.is_completed(), state.message
    folder = Path(state.result())
    assert doc_id in dict(document_snapshot(tmp_path / "warehouse" / "veille.duckdb"))
    alerts = json.loads((folder / "alerts.json").read_text(encoding="utf-8"))
    failed = [a for a in alerts if a["code"] == "collect.source_failed"]
    assert [a["subject"] for a in failed] == ["dead"] and "HTTP 500" in failed[0]["message"]


def test_veille_collect_command(tmp_path: Path, web: HTTPServer) -> None:
    from veille.cli import _register_all, app

    corpus, doc_id = _corpus_with_feed(tmp_path, web)
    _register_all()
    result = CliRunner().invoke(app, ["collect", "--corpus", str(corpus)])
    assert result.exit_code == 0, result.output
    assert "1 added" in result.output and doc_id in result.output and "dead" in result.output
    assert (corpus / "docs" / f"{doc_id}.md").exists()
    again = CliRunner().invoke(app, ["collect", "--corpus", str(corpus)])
    assert "0 added" in again.output and "1 unchanged" in again.output
    (corpus / "sources.toml").write_text("[[source]]\nname = 3\n", encoding="utf-8")
    bad = CliRunner().invoke(app, ["collect", "--corpus", str(corpus)])
    assert bad.exit_code == 2 and "sources.toml" in bad.output
