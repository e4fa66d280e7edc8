"""Hostile front matter (issue 26 item 1): every document is loaded or refused with ONE bounded error
naming its file; the process never dies; memory stays bounded; metadata never carries control,
bidirectional or zero-width characters."""

from __future__ import annotations

import re
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.alertlines import alert_lines
from veille.alerts import alert
from veille.corpus.document import DocumentFields, parse_document_fields
from veille.corpus.errors import CorpusError

NAME = "docs/hostile.md"
_INVISIBLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]"
)
_MAX_MESSAGE = 1000  # path + field + problem (cut at 400) + expectation (cut at 400)


def _laughs(levels: int) -> str:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for k in range(1, levels):
        prev, name = chr(ord("a") + k - 1), chr(ord("a") + k)
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    return "\n".join(lines) + f"\ntitle: *{chr(ord('a') + levels - 1)}\n"


def _outcome(raw: bytes) -> DocumentFields | CorpusError:
    try:
        return parse_document_fields(raw, NAME, rel=NAME, mtime=0.0)
    except CorpusError as exc:
        return exc


def _check(raw: bytes) -> None:
    result = _outcome(raw)
    if isinstance(result, CorpusError):
        message = str(result)
        assert message.startswith(NAME + " : ") and len(message) <= _MAX_MESSAGE, message[:300]
        return
    for name in ("title", "summary", "author", "source_type", "id"):
        value = getattr(result, name)
        assert value is None or not _INVISIBLE.search(value), (name, value[:80])
    assert len(result.title) <= 300


HOSTILE = {
    "nesting 50,000 deep (flow)": "title: " + "[" * 50_000 + "]" * 50_000 + "\n",
    "nesting 1,000 deep in a mapping": "title: " + "{a: " * 1000 + "x" + "}" * 1000 + "\n",
    "block nesting by dashes": "title:\n" + "- " * 5_000 + "x\n",
    "billion laughs, 9 levels": _laughs(9),
    "billion laughs, 12 levels": _laughs(12),
    "terminal escape in a quoted title": 'title: "x\\e]0;pwned\\a y"\n',
    "bidi override and zero-width only": 'title: "\\u202e\\u200b\\u200d"\nsummary: "a\\u202eb"\n',
    "NUL and BEL": 'title: "a\\0b\\ac"\n',
    "a 1,000,000-character title": "title: " + "x" * 1_000_000 + "\n",
    "a 60,000-character title": "title: " + "x" * 60_000 + "\n",
    "python tag": "title: !!python/object/apply:os.system [echo pwned]\n",
    "custom tag": "title: !secret x\n",
    "binary tag": "title: !!binary aGVsbG8=\n",
    "10,000 keys": "".join(f"k{i}: v\n" for i in range(10_000)),
    "title as a mapping": "title: {a: 1}\n",
    "TOML-looking YAML": 'title = "x"\n',
}


@pytest.mark.parametrize("front", list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_front_matter_is_loaded_clean_or_refused_in_bounded_memory(front: str) -> None:
    raw = f"---\n{front}---\n\nCorps du document.\n".encode()
    tracemalloc.start()
    try:
        _check(raw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024**2 + 20 * len(raw), peak  # never the expansion of aliases or nesting


def test_control_characters_are_removed_and_the_document_loaded() -> None:
    result = _outcome(b'---\ntitle: "Rapport \\e]0;pwned\\a \\u202einvers\\u00e9"\n---\n\nCorps.\n')
    assert isinstance(result, DocumentFields)
    assert result.title == "Rapport ]0;pwned invers\u00e9"
    assert any("caractères invisibles" in note for note in result.notes)


def test_a_title_of_only_invisible_characters_is_derived_instead() -> None:
    result = _outcome(b'---\ntitle: "\\u200b\\u200d"\n---\n\n# Vrai titre\n\nCorps.\n')
    assert isinstance(result, DocumentFields) and result.title == "Vrai titre"


def test_alias_bomb_is_refused_naming_the_cause() -> None:
    result = _outcome(f"---\n{_laughs(9)}---\n\nCorps.\n".encode())
    assert isinstance(result, CorpusError) and "ancres et alias" in result.problem


_PIECES = st.sampled_from(
    [
        "title: ",
        "date: ",
        "id: ",
        "tags: ",
        "[",
        "]",
        "{",
        "}",
        "&a ",
        "*a",
        "!!python/object ",
        "!x ",
        '"',
        "'",
        "\\e",
        "\\u202e",
        "\\0",
        ": ",
        "\n",
        "  - ",
        "---",
        "+++",
        "2025-01-27 20:45:32 +0530",
        "x" * 30_000,
        "\u200b",
        "\x1b",
        "é",
    ]
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(
    pieces=st.lists(_PIECES, max_size=40),
    noise=st.text(max_size=60),
    depth=st.integers(0, 3000),
    encoding=st.sampled_from(["utf-8", "utf-16", "latin-1", "utf-8-sig"]),
    opener=st.sampled_from(["---\n", "+++\n", ""]),
)
def test_fuzzed_front_matter_never_escapes_one_bounded_outcome(
    pieces: list[str], noise: str, depth: int, encoding: str, opener: str
) -> None:
    front = "".join(pieces) + noise + "[" * depth
    closer = {"---\n": "\n---\n", "+++\n": "\n+++\n", "": "\n\n"}[opener]
    text = f"{opener}{front}{closer}\nCorps.\n"
    _check(text.encode(encoding, errors="replace"))


def test_two_thousand_invalid_documents_print_a_bounded_view() -> None:
    alerts = [
        alert(
            "ingest",
            "ingest.invalid_document",
            f"docs/d{i}.md: bad; expected good",
            severity="error",
            subject=f"docs/d{i}.md",
        )
        for i in range(2000)
    ] + [
        alert(
            "ingest", "ingest.document_note", f"docs/n{i}.md: note", severity="info", subject=f"docs/n{i}.md"
        )
        for i in range(2000)
    ]
    lines = alert_lines(alerts)
    assert len(lines) <= 35
    assert lines[0].startswith(
        "  [error] ingest.invalid_document ×2000 : docs/d0.md, docs/d1.md, docs/d2.md, … (+1997)"
    )
    assert sum("docs/d" in line for line in lines) == 26  # the header and 25 full messages
