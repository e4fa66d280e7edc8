"""End to end with the offline engine on a test corpus that is not the bundled one: English sources
under a French request whose axes are Markdown headings (tests/corpora/passerelles-api-en).

The whole flow (Prefect, run folder) on a corpus none of the engine's rules was written for; the
expectations come from its reference/facts.yaml and traps.yaml, not from literals.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from veille.citations import cited_numbers, invalid_citations
from veille.corpus.reference import load_reference
from veille.flows.veille import veille_flow
from veille.textstats import MODEL_SECTIONS, split_sections

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

CORPUS = Path(__file__).resolve().parent / "corpora" / "passerelles-api-en"


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    warehouse = tmp_path_factory.mktemp("warehouse")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VEILLE_WAREHOUSE_DIR", str(warehouse))
        state = veille_flow(corpus=str(CORPUS), backend="offline", return_state=True)
    assert state.is_completed(), state.message
    return Path(state.result())


def test_plan_follows_the_reference(run_folder: Path) -> None:
    reference = load_reference(CORPUS)
    assert reference is not None
    facts = reference.facts
    traps = yaml.safe_load((CORPUS / "traps.yaml").read_text(encoding="utf-8"))
    plan = _json(run_folder / "plan.json")
    scopes = [set(st["doc_ids"]) for st in plan["sub_tasks"]]
    used = set().union(*scopes)
    assert set(facts.keep) <= used, sorted(set(facts.keep) - used)
    assert not (set(facts.exclude) | set(traps["off_topic"])) & used
    for c in facts.contradictions:
        assert any(set(c.docs) <= scope for scope in scopes), c.id
    # One sub-task per heading of the request.
    assert len(plan["sub_tasks"]) == 5


def test_report_has_every_section_and_no_orphan_citation(run_folder: Path) -> None:
    report = (run_folder / "report.md").read_text(encoding="utf-8")
    sections = split_sections(report)
    for name in (*MODEL_SECTIONS, "Sources"):
        assert sections.get(name), f"section {name!r} missing or empty"
    sources = _json(run_folder / "sources.json")
    body = report.split("\n## Sources")[0]
    assert invalid_citations(body, [None] * len(sources)) == []
    assert cited_numbers(body) == [s["number"] for s in sources]
