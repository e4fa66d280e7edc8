"""The incremental analyst's input costs what it needs (issue 40, five edited documents): the
previous findings of one document in full, the others as ids and figures, the contradictions
without their reason. The offline answer depends only on what the prompt shows in full, so it
is the answer the whole previous analysis gave (the engine never read the rest)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.offline.analyst import analyse, analyse_update
from veille.offline.authority import load_authority
from veille.roles.analyst import AnalystInput, ContradictionNote, DocumentText, Finding, Findings
from veille.roles.analyst_update import AnalystUpdateInput, KnownDocument, build_prompt, read_alone
from veille.settings import Settings

QUESTION = "Quel débit, quelle latence et quel coût annoncent Kestrel, Tamaris et Orvet ?"
CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "docs"
AUTHORITY = load_authority(Settings().authority_file)


def _read(path: Path) -> DocumentText:
    """A bundled document: its front matter's plain ``key: value`` lines, then its body."""
    _, head, body = path.read_text(encoding="utf-8").split("---", 2)
    meta = {
        k.strip(): v.strip().strip('"')
        for k, _, v in (line.partition(":") for line in head.splitlines())
        if k.strip()
    }
    return DocumentText(
        id=meta["id"], date=meta["date"], source_type=meta["source_type"], title=meta["title"], body=body
    )


POOL = [_read(p) for p in sorted(CORPUS.glob("doc-*.md"))[:16]]
MARK = "ZZDIGEST"  # in digested text only: the prompt must not show it


@st.composite
def _input(draw: st.DrawFn) -> AnalystUpdateInput:
    picked = draw(st.lists(st.sampled_from(POOL), min_size=3, max_size=6, unique_by=lambda d: d.id))
    cut = draw(st.integers(1, min(2, len(picked) - 1)))
    new, known = picked[:cut], picked[cut:]
    # What the offline analyst found in the known documents (some findings cite several), plus
    # findings of several documents and contradictions whose text only the digest would hide.
    found = analyse(AnalystInput(subtask_id="st-1", question=QUESTION, documents=known), AUTHORITY)
    ids = [d.id for d in known]
    cited = st.lists(st.sampled_from(ids), min_size=2, max_size=3, unique=True) if len(ids) > 1 else None
    extra = []
    notes = list(found.contradictions)
    if cited is not None:
        for n in range(draw(st.integers(0, 3))):
            extra.append(Finding(statement=f"{MARK} {n} 9 999 ms", doc_ids=draw(cited), figures=["9 999 ms"]))
        for _ in range(draw(st.integers(0, 2))):
            pair = draw(cited)
            notes.append(ContradictionNote(doc_ids=pair, retained=pair[0], reason=f"{MARK} plus récent"))
    previous = Findings(
        findings=[*found.findings, *extra], contradictions=notes, open_questions=found.open_questions
    )
    return AnalystUpdateInput(
        subtask_id="st-1",
        question=QUESTION,
        documents=new,
        known_documents=[
            KnownDocument(id=d.id, date=d.date, source_type=d.source_type, title=d.title) for d in known
        ],
        previous=previous,
    )


@settings(max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_input())
def test_the_offline_update_reads_only_what_the_prompt_shows_in_full(data: AnalystUpdateInput) -> None:
    prompt = build_prompt(data)
    alone = read_alone(data)
    # Every finding of one document is shown whole; the rest only as ids and figures.
    assert all(f.statement in prompt for f in alone)
    assert MARK not in prompt
    others = [f for f in data.previous.findings if f not in alone]
    assert all(f"[{', '.join(f.doc_ids)}]" in prompt for f in others)
    assert all(x in prompt for f in others for x in f.figures)
    # The answer from the whole previous analysis is the answer from what is shown in full.
    shown = data.model_copy(update={"previous": Findings(findings=alone)})
    assert analyse_update(data, AUTHORITY) == analyse_update(shown, AUTHORITY)


def test_a_finding_of_one_document_keeps_its_words_and_shows_a_figure_once() -> None:
    data = AnalystUpdateInput(
        subtask_id="st-1",
        question=QUESTION,
        documents=[POOL[0]],
        known_documents=[
            KnownDocument(id=d.id, date=d.date, source_type=d.source_type, title=d.title) for d in POOL[1:3]
        ],
        previous=Findings(
            findings=[
                Finding(
                    statement="Kestrel tient 2 100 tokens/s.",
                    doc_ids=[POOL[1].id],
                    figures=["2 100 tokens/s"],
                ),
                Finding(statement="Tamaris coûte cher.", doc_ids=[POOL[2].id], figures=["4 200 EUR"]),
                Finding(
                    statement="Les deux tiennent 40 ms.", doc_ids=[POOL[1].id, POOL[2].id], figures=["40 ms"]
                ),
            ],
            contradictions=[
                ContradictionNote(doc_ids=[POOL[1].id, POOL[2].id], retained=POOL[2].id, reason="récent")
            ],
        ),
    )
    prompt = build_prompt(data)
    assert prompt.count("2 100 tokens/s") == 1  # stated in the sentence: not repeated as a figure
    assert "(chiffres : 4 200 EUR)" in prompt  # not in the sentence: listed
    assert "Les deux tiennent" not in prompt and f"[{POOL[1].id}, {POOL[2].id}] 40 ms" in prompt
    assert f"{POOL[1].id}, {POOL[2].id} : {POOL[2].id}" in prompt and "récent" not in prompt
