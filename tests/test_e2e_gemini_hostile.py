"""Issue 23 item 3 through the real google-genai SDK against the fake Gemini server: model text is
data. A planner, analysts and a writer answering schema-valid but hostile text (HTML, links, images,
footnotes, headings, tables, look-alike citations) leave a report.md and a Prefect report artifact
with none of it: no ``<``, no ``](``, no ``[^``, no ``evil``; every heading, link and image token
markdown-it finds is one code wrote."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from testkit.fake_gemini import FakeGemini, Reply
from testkit.flowkit import AXES, write_corpus
from testkit.gemini_script import gemini_responder, role_of
from tests.gemini_env import use_fake_gemini
from veille.flows.veille import veille_flow
from veille.tasks.record import REPORT_ARTIFACT

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

HOSTILE = (
    "Kestrel <script>alert('xss')</script> débit <img src=x onerror=alert(1)> "
    "[ici](http://evil.example/phish) ![img](http://evil.example/p.png) [^1] "
    "<a href='http://evil.example/a'>lien</a> | a | b | ## titre --- <http://evil.example/auto>"
)
LOOKALIKES = "Kestrel mène [ 1 ] puis ［2］ et [n°1] [#2] [^1] (source 2) [1-2] [ 99 ] [40-41]"
FORBIDDEN = ("<", "](", "[^", "evil")


def _text(content: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in content.get("parts", []))


def _respond(body: dict[str, Any], model: str, others: Any) -> Reply:
    role, prompt = role_of(body), _text(body["contents"][0])
    if role == "planner":
        sub_tasks = [
            {"id": f"st-{i}", "question": f"{q} {HOSTILE}", "doc_ids": ids}
            for i, (q, ids) in enumerate(AXES, 1)
        ]
        return Reply.json({"sub_tasks": sub_tasks, "excluded": []})
    if role == "analyst":
        ids = re.findall(r'<document id="([^"]+)"', prompt)
        findings = [{"statement": f"{HOSTILE} [^1]: http://evil.example/foot", "doc_ids": [i]} for i in ids]
        return Reply.json({"findings": findings, "open_questions": [HOSTILE]})
    if role in ("writer", "reviser"):
        match = re.search(r"Numéros de sources disponibles : ([\d, ]+)\.", prompt)
        numbers = [int(n) for n in match.group(1).split(",")] if match else []
        numbers = numbers or [int(n) for n in re.findall(r"^\[(\d+)\] ", prompt, flags=re.MULTILINE)]
        axes = re.findall(r"^### (st-\d+) \(axe", prompt, flags=re.MULTILINE)
        axes = axes or re.findall(r"^- (st-\d+) : ", prompt, flags=re.MULTILINE)
        cited = {"text": LOOKALIKES, "citations": numbers[:1]}
        dossier = {
            "synthesis": [
                cited,
                {"text": HOSTILE, "citations": numbers[:1]},
                {"text": HOSTILE, "citations": numbers[:1]},
            ],
            "sections": [
                {"axis": a, "points": [{"text": HOSTILE, "citations": [n], "superseded": False}, {**cited}]}
                for a, n in zip(axes, numbers, strict=False)
            ],
            "contradictions": [
                {"subject": HOSTILE, "retained": numbers[:1], "rejected": numbers[1:2], "reason": HOSTILE}
            ],
            "uncertainties": [{"text": HOSTILE, "citations": []}],
            "recommendation": [{"text": HOSTILE, "citations": numbers[:1]}],
        }
        return Reply.json(dossier)
    return others(body, model)


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    others = gemini_responder()
    with FakeGemini() as fake:
        fake.responder = lambda body, model: _respond(body, model, others)
        yield fake


def _report_artifact(flow_run_id: Any) -> str:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
        )
    # The report's artifact (the metrics artifact is Markdown too): its key starts with the report's.
    markdown = [
        str(a.data) for a in artifacts if a.type == "markdown" and (a.key or "").startswith(REPORT_ARTIFACT)
    ]
    assert len(markdown) == 1, [(a.type, a.key) for a in artifacts]
    return markdown[0]


def _code_structure_only(markdown: str) -> None:
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    inline = [child for t in tokens for child in (t.children or [])]
    kinds = {t.type for t in [*tokens, *inline]}
    assert not kinds & {"link_open", "image", "html_block", "html_inline", "table_open", "hr", "fence"}
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    code_made = {"Synthèse", "Points clés", "Contradictions tranchées", "Ce qui reste incertain"}
    code_made |= {"Recommandation", "Sources", "Nouveautés"}
    assert headings[0].startswith("Kestrel, Tamaris ou Orvet")  # the request's title
    axes = [h for h in headings[1:] if h not in code_made]  # the axis headings, by code (issue 36):
    assert len(axes) == len(set(axes)) == 3, axes  # one per axis, none shown twice,
    assert not any(re.search(r"\bst-\d", h) for h in axes), axes  # no sub-task id in the text


def test_hostile_model_text_reaches_the_report_and_artifact_as_text_only(
    server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_gemini(monkeypatch, server, tmp_path / "warehouse", key="AIza-test-key")
    corpus = write_corpus(tmp_path / "corpus")
    state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert state.is_completed(), state.message
    run_dir = Path(state.result())

    report = (run_dir / "report.md").read_text(encoding="utf-8")
    artifact = _report_artifact(state.state_details.flow_run_id)
    # Look-alikes moved to the citation list ([1], [2]) or removed ([ 99 ], [40-41]: no such source).
    assert "Kestrel mène puis et" in report and "99" not in report and "40" not in report
    for text in (report, artifact):
        assert not [s for s in FORBIDDEN if s in text], [s for s in FORBIDDEN if s in text]
        _code_structure_only(text)
    codes = {a["code"] for a in json.loads((run_dir / "alerts.json").read_text(encoding="utf-8"))}
    assert "report.lookalike_citation" in codes
