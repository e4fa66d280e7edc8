"""What the dossier reads and says, measured on every corpus (issues 36 and 37, "Done when").

    .venv/bin/python bench/substance.py                        # both backends, Markdown table
    .venv/bin/python bench/substance.py --backend offline      # offline only (≈ 5 s a corpus)
    .venv/bin/python bench/substance.py --corpus datafusion-en --json

Corpora: the bundled ``corpus/`` and every ``tests/corpora/*`` holding a request.md. Backends:

- ``offline``: the library pipeline on the offline engine (testkit/offline_pipeline.py
  ``run_bundled_pipeline``: ingest → plan → analysts → writer → review → final report);
- ``fake-gemini``: the Prefect flow (``veille_flow``, backend gemini) through the real google-genai
  SDK against the loopback fake Gemini (testkit/fake_gemini.py), as the e2e tests run it, in one
  ephemeral Prefect API. The fake answers every role as testkit/gemini_script.py does: its planner
  proposes the flowkit test corpus's sub-tasks (ids that do not exist here: code builds the plan),
  its critic validates; its analyst (here) states, per document it is shown, the first sentence
  holding a figure, verbatim; its writer writes each axis from its own findings
  (``findings_dossier``); its reviser returns the draft it is shown unchanged. A model that quotes
  its documents faithfully: what goes wrong downstream is the pipeline's.

What is measured, per corpus and backend (checks in bench/substance_checks.py):

- reading, from the plan: share of on-topic documents placed in a sub-task, contradictory pairs
  whose documents share one sub-task, off-topic (and out-of-period) documents placed;
- the ledger, from report.md: its entries, and those opposing no reference pair (no expected pair
  holds both a retained and a rejected document: a contradiction the reference does not know);
- the dossier, from report.md: figures of cited sentences unsupported by the cited documents or
  misattributed to a subject their passages do not name; cited sources dated by their file's clock;
  headings cut or carrying an internal id; the alerts a verifier raised for figures or ledger
  entries it dropped (codes holding ``unsupported``, ``misattributed`` or ``not_a_contradiction``).

What is on or off topic, which pairs contradict and which names are subjects comes from the
corpus's ``reference/substance.yaml`` when it has one (written by hand before the first run):
``on_topic``, ``off_topic``, ``out_of_period`` (lists of ids), ``pairs`` (each with ``docs``),
``subjects`` (subject → names). Otherwise from reference/facts.yaml and traps.yaml: on topic =
``keep``, off topic = ``exclude`` and traps' ``off_topic``, pairs = the contradictions' documents,
subjects = the request's terms (each its own name).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from substance_checks import (  # noqa: E402
    check_figures,
    document_body,
    document_title,
    file_clock_dates,
    heading_problems,
    ledger_entries,
    report_sources,
)

from veille.corpus.document import parse_document  # noqa: E402
from veille.corpus.request import load_request  # noqa: E402
from veille.corpus.terms import derive_terms  # noqa: E402
from veille.dossier import LEDGER_SECTION  # noqa: E402

BACKENDS = ("offline", "fake-gemini")
DROP_CODES = ("unsupported", "misattributed", "not_a_contradiction")


@dataclass
class Expected:
    on_topic: list[str]
    off_topic: list[str]
    out_of_period: list[str]
    pairs: list[list[str]]
    subjects: dict[str, list[str]]
    origin: str


@dataclass
class Row:
    corpus: str
    backend: str
    on_topic_read: int
    on_topic: int
    pairs_together: int
    pairs: int
    off_topic_read: int
    off_topic: int
    out_of_period_read: int
    out_of_period: int
    ledger_entries: int
    ledger_not_in_reference: int
    figures_checked: int
    unsupported: int
    misattributed: int
    file_clock_dates: int
    headings_cut: int
    headings_with_id: int
    verifier_dropped: int
    expected_from: str
    details: dict[str, list[str]]
    failed: str = ""  # the run ended without a dossier: why (the other figures are then 0)


def corpora(only: Sequence[str] = ()) -> list[Path]:
    found = [
        ROOT / "corpus",
        *sorted(p for p in (ROOT / "tests" / "corpora").iterdir() if (p / "request.md").is_file()),
    ]
    return [p for p in found if not only or p.name in only]


def _yaml(path: Path) -> dict[str, Any]:
    return (yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if path.is_file() else {}


def expected(corpus: Path) -> Expected:
    substance = _yaml(corpus / "reference" / "substance.yaml")
    if substance:
        return Expected(
            on_topic=list(substance.get("on_topic") or []),
            off_topic=list(substance.get("off_topic") or []),
            out_of_period=list(substance.get("out_of_period") or []),
            pairs=[list(p["docs"]) for p in substance.get("pairs") or []],
            subjects={str(k): [str(a) for a in v] for k, v in (substance.get("subjects") or {}).items()},
            origin="substance.yaml",
        )
    facts, traps = _yaml(corpus / "reference" / "facts.yaml"), _yaml(corpus / "traps.yaml")
    request = load_request(corpus)
    return Expected(
        on_topic=list(facts.get("keep") or []),
        off_topic=sorted(set(facts.get("exclude") or []) | set(traps.get("off_topic") or [])),
        out_of_period=[],
        pairs=[list(c["docs"]) for c in facts.get("contradictions") or []],
        subjects={t: [t] for t in (request.terms or derive_terms(request))},
        origin="facts.yaml",
    )


def document_files(corpus: Path) -> dict[str, Path]:
    """Document id → file (ids as ingestion derives them: front matter, else the path)."""
    out = {}
    for path in sorted((corpus / "docs").rglob("*.md")):
        out[parse_document(path).id] = path
    return out


SAVE_DIR: Path | None = None  # --save: each dossier measured is written there, to be read


def measure(
    corpus: Path, backend: str, plan: dict[str, Any], report: str, alerts: list[dict[str, Any]]
) -> Row:
    if SAVE_DIR is not None:
        SAVE_DIR.mkdir(parents=True, exist_ok=True)
        (SAVE_DIR / f"{corpus.name}.{backend}.md").write_text(report, encoding="utf-8")
    want, files = expected(corpus), document_files(corpus)
    plan = plan.get("plan", plan)  # run_bundled_pipeline nests the plan; plan.json does not
    branches = [set(st["doc_ids"]) for st in plan.get("sub_tasks", [])]
    placed = set().union(*branches) if branches else set()
    together = [p for p in want.pairs if any(set(p) <= b for b in branches)]

    sources = report_sources(report)
    texts = {i: p.read_text(encoding="utf-8") for i, p in files.items()}
    cited = {
        s.number: (document_title(texts[s.doc_id]), document_body(texts[s.doc_id]))
        for s in sources
        if s.doc_id in texts
    }
    figures = check_figures(report, cited, want.subjects)
    clock = file_clock_dates(sources, files)
    cut, with_id = heading_problems(report)
    dropped = [a for a in alerts if any(code in str(a.get("code", "")) for code in DROP_CODES)]
    ids = {s.number: s.doc_id for s in sources}
    entries = [
        ([ids.get(n, "?") for n in kept], [ids.get(n, "?") for n in out])
        for kept, out in ledger_entries(report, LEDGER_SECTION)
    ]
    stray = [
        (kept, out)
        for kept, out in entries
        if not any(set(kept) & set(p) and set(out) & set(p) for p in want.pairs)
    ]
    return Row(
        corpus=corpus.name,
        backend=backend,
        on_topic_read=len(placed & set(want.on_topic)),
        on_topic=len(want.on_topic),
        pairs_together=len(together),
        pairs=len(want.pairs),
        off_topic_read=len(placed & set(want.off_topic)),
        off_topic=len(want.off_topic),
        out_of_period_read=len(placed & set(want.out_of_period)),
        out_of_period=len(want.out_of_period),
        ledger_entries=len(entries),
        ledger_not_in_reference=len(stray),
        figures_checked=figures.checked,
        unsupported=len(figures.unsupported),
        misattributed=len(figures.misattributed),
        file_clock_dates=len(clock),
        headings_cut=len(cut),
        headings_with_id=len(with_id),
        verifier_dropped=len(dropped),
        expected_from=want.origin,
        details={
            "on_topic_not_read": sorted(set(want.on_topic) - placed),
            "off_topic_read": sorted(placed & set(want.off_topic)),
            "pairs_apart": [" + ".join(p) for p in want.pairs if p not in together],
            "ledger_not_in_reference": [
                f"retenu {', '.join(k)} ; écarté {', '.join(o) or '–'}" for k, o in stray
            ],
            "unsupported": figures.unsupported,
            "misattributed": figures.misattributed,
            "file_clock_dates": clock,
            "headings_cut": cut,
            "headings_with_id": with_id,
            "verifier_dropped": [f"{a.get('code')}: {a.get('message', '')[:200]}" for a in dropped],
        },
    )


def failed_row(corpus: Path, backend: str, why: str) -> Row:
    want = expected(corpus)
    totals = {"on_topic", "pairs", "off_topic", "out_of_period"}  # what was expected: known without a run
    zeros = {f.name: 0 for f in fields(Row) if f.type == "int" and f.name not in totals}
    return Row(
        corpus=corpus.name,
        backend=backend,
        on_topic=len(want.on_topic),
        pairs=len(want.pairs),
        off_topic=len(want.off_topic),
        out_of_period=len(want.out_of_period),
        expected_from=want.origin,
        details={"run_failed": [why[:300]]},
        failed=why,
        **zeros,
    )


# ---------------------------------------------------------------------------------------- offline
def run_offline(corpus: Path) -> Row:
    from testkit.offline_pipeline import run_bundled_pipeline

    try:
        out = run_bundled_pipeline(corpus)
    except Exception as exc:  # a row saying so; the other corpora still run
        return failed_row(corpus, "offline", f"{type(exc).__name__}: {exc}")
    alerts = [*out["plan"].get("alerts", []), *out["alerts"]]
    return measure(corpus, "offline", out["plan"], out["report"], alerts)


# ------------------------------------------------------------------------------------ fake Gemini
def _quoting_analyst(prompt: str) -> Any:
    """Per document block of the analyst's prompt, its first sentence holding a figure, verbatim."""
    import re

    from veille.numbers import read_numbers
    from veille.roles.analyst import Finding, Findings

    findings = []
    for doc_id, text in re.findall(r'<document id="([^"]+)"[^>]*>(.*?)</document>', prompt, re.S):
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n\s*\n", text) if len(s.strip()) > 20]
        with_figure = [s for s in sentences if any(r.role == "figure" for r in read_numbers(s))]
        chosen = (with_figure or sentences or [f"Document {doc_id}."])[0]
        chosen = " ".join(chosen.split())[:400]
        figures = [r.text for r in read_numbers(chosen) if r.role == "figure"]
        findings.append(Finding(statement=chosen, doc_ids=[doc_id], figures=figures))
    return Findings(findings=findings or [Finding(statement="Aucun document lu.", doc_ids=["doc-01"])])


def _responder() -> Callable[[dict[str, Any], str], Any]:
    from testkit.fake_gemini import Reply
    from testkit.gemini_script import findings_dossier, gemini_responder, role_of

    others = gemini_responder(writer=findings_dossier)

    def respond(body: dict[str, Any], model: str) -> Any:
        role = role_of(body)
        prompt = "".join(part.get("text", "") for part in body["contents"][0].get("parts", []))
        if role in ("analyst", "analyst_update"):
            return Reply.json(_quoting_analyst(prompt), prompt_tokens=len(prompt) // 4, output_tokens=200)
        if role == "reviser":  # changes nothing: the draft it is shown, as it is
            start, end = prompt.find("<brouillon>"), prompt.rfind("</brouillon>")
            if start != -1 and end > start:
                draft = json.loads(prompt[start + len("<brouillon>") : end])
                return Reply.json(draft, prompt_tokens=len(prompt) // 4, output_tokens=200)
        return others(body, model)

    return respond


@contextmanager
def _fake_gemini_env() -> Iterator[Callable[[Path], Row]]:
    from prefect.testing.utilities import prefect_test_harness

    from testkit.fake_gemini import FakeGemini

    saved = dict(os.environ)
    os.environ.update({"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"})
    try:
        with FakeGemini() as fake, prefect_test_harness(server_startup_timeout=120):
            fake.responder = _responder()
            from veille.flows.veille import veille_flow

            def run(corpus: Path) -> Row:
                with tempfile.TemporaryDirectory(prefix="veille-substance-") as tmp:
                    os.environ.update(
                        {
                            "GEMINI_API_KEY": "fake-key-for-the-loopback-server",
                            "VEILLE_WAREHOUSE_DIR": tmp,
                            "VEILLE_GEMINI_BASE_URL": fake.base_url,
                            "VEILLE_GEMINI_API_VERSION": "v1beta",
                            "VEILLE_HTTP_RETRY_INITIAL_DELAY_S": "0.01",
                        }
                    )
                    state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
                    if not state.is_completed():  # a row saying so; the other corpora still run
                        return failed_row(corpus, "fake-gemini", f"{state.type}: {state.message}")
                    folder = Path(state.result())
                    plan = json.loads((folder / "plan.json").read_text(encoding="utf-8"))
                    report = (folder / "report.md").read_text(encoding="utf-8")
                    alerts = json.loads((folder / "alerts.json").read_text(encoding="utf-8"))
                    return measure(corpus, "fake-gemini", plan, report, alerts)

            yield run
    finally:
        os.environ.clear()
        os.environ.update(saved)


# ----------------------------------------------------------------------------------------- output
def _share(k: int, n: int) -> str:
    return f"{k}/{n}" if n else "–"


def markdown(rows: Sequence[Row]) -> str:
    head = (
        "| corpus | backend | on-topic read | pairs together | off-topic read | out-of-period read | "
        "ledger entries (not in reference) | figures checked | unsupported | misattributed | file-clock dates | "
        "headings cut | headings with id | verifier dropped |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    lines = [
        f"| {r.corpus} | {r.backend} | run failed: {r.failed[:120]} |" + " – |" * 11
        if r.failed
        else f"| {r.corpus} | {r.backend} | {_share(r.on_topic_read, r.on_topic)} | {_share(r.pairs_together, r.pairs)} | "
        f"{_share(r.off_topic_read, r.off_topic)} | {_share(r.out_of_period_read, r.out_of_period)} | "
        f"{r.ledger_entries} ({r.ledger_not_in_reference}) | "
        f"{r.figures_checked} | {r.unsupported} | {r.misattributed} | {r.file_clock_dates} | {r.headings_cut} | "
        f"{r.headings_with_id} | {r.verifier_dropped} |"
        for r in rows
    ]
    return "\n".join([head, *lines])


def details(rows: Sequence[Row], per_kind: int = 3) -> str:
    out = []
    for r in rows:
        items = [(k, v) for k, v in r.details.items() if v]
        if not items:
            continue
        out.append(f"\n**{r.corpus} · {r.backend}** (expected facts from {r.expected_from})\n")
        for kind, values in items:
            shown = "; ".join(
                f"« {v[:160]} »" if kind in ("unsupported", "misattributed") else v for v in values[:per_kind]
            )
            more = f" (+{len(values) - per_kind})" if len(values) > per_kind else ""
            out.append(f"- {kind}: {shown}{more}")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--backend", choices=[*BACKENDS, "both"], default="both")
    parser.add_argument("--corpus", action="append", default=[], help="corpus folder name (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--save", type=Path, help="write each measured report.md into this folder")
    parser.add_argument("--json-out", type=Path, help="also write the rows as JSON into this file")
    args = parser.parse_args(argv)
    global SAVE_DIR
    SAVE_DIR = args.save
    chosen = corpora(args.corpus)
    rows: list[Row] = []
    if args.backend in ("offline", "both"):
        rows += [run_offline(c) for c in chosen]
    if args.backend in ("fake-gemini", "both"):
        with _fake_gemini_env() as run:
            rows += [run(c) for c in chosen]
    rows.sort(key=lambda r: (r.corpus, BACKENDS.index(r.backend)))
    if args.json_out:
        args.json_out.write_text(
            json.dumps([asdict(r) for r in rows], ensure_ascii=False, indent=2), encoding="utf-8"
        )
    if args.json:
        print(json.dumps([asdict(r) for r in rows], ensure_ascii=False, indent=2))
    else:
        print(markdown(rows))
        print(details(rows))


if __name__ == "__main__":
    main()
