"""The offline writer's scope sentence and foreign passages (issue 28, item 2).

« à partir de N sources » equals the number of entries of the shipped ``## Sources`` list, whatever
the sources given and cited; under a French request an English passage is shown as a quote in its
language, « … » (en), never as a French sentence.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from veille.offline.writer import quote_foreign, write
from veille.roles.writer import NumberedFinding, SourceRef, WriterInput
from veille.steps.finalize import finalize_report
from veille.steps.headings import axis_titles

_FINDINGS = [
    "Alvera — La latence de lecture relevée est de 12 ms.",
    "Bruneau — Le débit en écriture relevé est de 2,1 Go/s.",
    "Corvex — The measured write throughput is 1.8 GB/s under load.",
    "Alvera — Le prix de la licence est de 2 900 EUR par an.",
]


@settings(max_examples=30, deadline=None)
@given(
    given_sources=st.integers(1, 12),
    cited=st.lists(st.tuples(st.integers(0, 3), st.integers(1, 12)), min_size=1, max_size=6),
)
def test_the_scope_sentence_counts_the_listed_sources(
    given_sources: int, cited: list[tuple[int, int]]
) -> None:
    sources = [
        SourceRef(number=n, id=f"doc-{n:02d}", title=f"Document {n}", date="2026-05-01", source_type="note")
        for n in range(1, given_sources + 1)
    ]
    findings = [
        NumberedFinding(subtask_id="st-1", statement=_FINDINGS[k], sources=[min(n, given_sources)])
        for k, n in cited
    ]
    questions = {"st-1": "Que disent les documents sur la performance pour Alvera, Bruneau et Corvex ?"}
    data = WriterInput(
        request_title="Stockage : Alvera, Bruneau ou Corvex",
        request="Compare Alvera, Bruneau et Corvex.",
        questions=questions,
        axes={"st-1": "Performance"},
        findings=findings,
        sources=sources,
        options=["Alvera", "Bruneau", "Corvex"],
    )
    dossier = write(data)
    final = finalize_report("Titre", dossier, sources, axis_titles(questions))
    stated = re.findall(r"à partir de (\d+) sources?", final.markdown)
    assert stated == [str(len(final.sources))], final.markdown
    assert len(final.sources) == len(re.findall(r"(?m)^- \[\d+\] ", final.markdown.split("## Sources")[1]))


def test_english_passages_are_quotes_under_a_french_request() -> None:
    shown = quote_foreign("Corvex — The measured write throughput is 1.8 GB/s under load.", "fr")
    assert shown == "Corvex — « The measured write throughput is 1.8 GB/s under load » (en)."
    french = "Bruneau — Le débit en écriture relevé est de 2,1 Go/s."
    assert quote_foreign(french, "fr") == french
    english = "Corvex — The measured write throughput is 1.8 GB/s under load."
    assert quote_foreign(english, "en") == english
