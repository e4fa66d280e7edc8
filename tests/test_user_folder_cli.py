"""The real command line on a user's folder (issue 39, item 1): `veille check` starts no flow run on
the Prefect API and writes nothing; `veille run --request "…"` takes the request as text with the
documents at the folder's root. Processes forked from a pre-imported zygote (tests/crashkit.py)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.crashkit import Zygote, run_folder_from_output, start_zygote

pytestmark = pytest.mark.process

FIXTURES = Path(__file__).parent / "fixtures"
REQUEST_TEXT = (
    "Quel moteur d'inférence choisir pour 2027 : Kestrel, Tamaris ou Orvet ? "
    "Comparez-les sur les performances, le coût sur 3 ans et la sécurité."
)


@pytest.fixture(scope="module")
def zygote(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zygote]:
    process = start_zygote(tmp_path_factory.mktemp("user-folder"))
    try:
        yield process
    finally:
        process.close()


def _flow_runs() -> int:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return len(client.read_flow_runs(limit=200))


def test_check_starts_no_flow_run_and_run_takes_the_request_as_text(zygote: Zygote, tmp_path: Path) -> None:
    folder = tmp_path / "dossier"
    folder.mkdir()
    for doc in (FIXTURES / "mini_corpus" / "docs").glob("*.md"):
        shutil.copy(doc, folder / doc.name)
    shutil.copy(FIXTURES / "real" / "The-Basics.html", folder / "page.html")
    warehouse = tmp_path / "entrepot"
    common = ["--corpus", str(folder), "--warehouse", str(warehouse)]

    before = _flow_runs()
    missing = zygote.run(["check", *common])  # no request anywhere: an error, nothing recorded
    assert missing.code == 1, missing.out + missing.err
    assert "no request file" in missing.out and "veille init" in missing.out
    ok = zygote.run(["check", *common, "--request", REQUEST_TEXT])
    assert ok.code == 0, ok.out + ok.err
    assert "documents read in the folder's root: 5 file(s)" in ok.out
    assert _flow_runs() == before and not warehouse.exists()

    night = zygote.run(["run", *common, "--backend", "offline", "--request", REQUEST_TEXT])
    assert night.code == 0, night.err[-3000:]
    assert _flow_runs() == before + 1
    run_dir = run_folder_from_output(night.out)
    plan = json.loads((run_dir / "plan.json").read_text(encoding="utf-8"))
    assert plan["request"]["options"] == ["Kestrel", "Tamaris", "Orvet"]
    assert "Quel moteur d'inférence choisir pour 2027" in (run_dir / "report.md").read_text(encoding="utf-8")
