"""Every corpus error a user reads is French (issue 39 item 4: « alerts once, in French, as text »).

A CorpusError renders « <fichier> : champ '<f>' : <problème> ; attendu : <attente> »: in the run
summary (the ``ingest.*`` alerts) and on the CLI error line. The catalogue of bad documents of
tests/test_bad_corpora.py (run there through a real ``veille run`` process, marked ``process``) is
ingested here in-process, so the frame and each documented fragment are checked on every run; a
fuzzed front matter checks the same frame for whatever error the parser raises.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fixtures.corpus_factory import copy_mini_corpus
from tests.test_bad_corpora import DOC_CASES, DocCase
from veille.corpus.document import parse_document_fields
from veille.corpus.errors import CorpusError, StrictModeError
from veille.store.ingest import ingest_corpus
from veille.store.lock import DatabaseBusyError, retry_on_lock

# The English frame words of the former rendering ("<file>: field 'f': <problem>; expected <what>")
# and of its most common problem texts: none may reach a French reader. (A library's own detail, such
# as PyYAML's "did not find expected node content", stays quoted as the library wrote it.)
ENGLISH = ("field '", "; expected ", "got a YAML", " got ", "is empty", "not found", "over the", "invalid ")
REFUSED = [case for case in DOC_CASES if case.outcome == "skip"]


def _french_frame(message: str, path: Path | str) -> None:
    assert message.startswith(f"{path} : "), message
    assert " ; attendu : " in message, message
    for word in ENGLISH:
        assert word not in message, (word, message)


@pytest.fixture(scope="module")
def lenient(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[tuple[str, str]]]]:
    """The mini corpus with every refused document of the catalogue, ingested once (lenient)."""
    root = tmp_path_factory.mktemp("french")
    corpus = copy_mini_corpus(root / "corpus")
    for case in REFUSED:
        case.make(corpus / "docs" / case.file)
    report = ingest_corpus(corpus, root / "veille.duckdb")
    by_subject: dict[str, list[tuple[str, str]]] = {}
    for alert in report.alerts:
        by_subject.setdefault(str(alert.subject), []).append((alert.code, alert.message))
    return corpus, by_subject


@pytest.mark.parametrize("case", REFUSED, ids=[case.name for case in REFUSED])
def test_every_refused_document_is_one_french_alert(
    lenient: tuple[Path, dict[str, list[tuple[str, str]]]], case: DocCase
) -> None:
    corpus, by_subject = lenient
    found = [
        (code, message) for code, message in by_subject.get(f"docs/{case.file}", []) if code == case.code
    ]
    assert len(found) == 1, (case.name, by_subject.get(f"docs/{case.file}"))
    message = found[0][1]
    _french_frame(message, corpus / "docs" / case.file)
    assert case.fragment in message, (case.name, message)


def test_the_strict_error_is_one_french_line_counting_the_others(tmp_path: Path) -> None:
    corpus = copy_mini_corpus(tmp_path / "corpus")
    for case in REFUSED[:3]:
        case.make(corpus / "docs" / case.file)
    with pytest.raises(StrictModeError) as info:
        ingest_corpus(corpus, tmp_path / "veille.duckdb", strict=True)
    first = sorted(case.file for case in REFUSED[:3])[0]
    _french_frame(str(info.value), corpus / "docs" / first)
    assert "(mode strict ; 2 autre(s) fichier(s) invalide(s) : " in str(info.value)


_PIECES = st.sampled_from(
    [
        "title: ",
        "date: ",
        "id: ",
        "source_type: ",
        "url: ",
        "summary: ",
        "[",
        "]",
        "{",
        "}",
        "&a ",
        "*a",
        "!!binary ",
        '"',
        "2026-02-30",
        "doc_01",
        "x",
        "1",
        "yes",
        "- ",
        "\n",
        "  ",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(front=st.lists(_PIECES, max_size=30).map("".join), body=st.sampled_from(["", "Corps.\n"]))
def test_any_refused_front_matter_renders_the_french_frame(front: str, body: str) -> None:
    name = "docs/fuzz.md"
    try:
        parse_document_fields(f"---\n{front}\n---\n\n{body}".encode(), name, rel=name, mtime=0.0)
    except CorpusError as exc:
        _french_frame(str(exc), name)
        if exc.field is not None:
            assert f" : champ '{exc.field}' : " in str(exc)


def test_a_database_held_by_another_run_is_one_french_line(tmp_path: Path) -> None:
    def held() -> None:
        raise duckdb.IOException('Could not set lock on file "veille.duckdb": Conflicting lock is held')

    with pytest.raises(DatabaseBusyError) as info:
        retry_on_lock(held, tmp_path / "veille.duckdb", wait_s=0)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'veille.duckdb'} : la base du corpus est encore verrouillée")
    assert " ; attendu : " in message and "; expected " not in message
