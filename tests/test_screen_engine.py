"""The screen's RE2 engine finds exactly what the former pure-``re`` screen found (testkit/screen_reference.py).

RE2 and Python's ``re`` agree on the patterns' constructs over folded text (ASCII, single spaces); these
properties check it on hostile text built from strings each pattern generates, on id-like runs with every
boundary that matters (paths, extensions, hyphens, capitals NFKD leaves), and on every Markdown document of
the test corpora. Precision and recall are the reference's: no kind, excerpt or token may differ.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testkit.screen_reference import reference_fold, reference_scan, reference_tokens
from veille.steps import screen
from veille.steps.screen_engine import first_matches, fold, id_tokens
from veille.steps.screen_patterns import PATTERNS

ROOT = Path(__file__).resolve().parent.parent

# Characters the folding treats specially: line breaks of every kind, look-alikes, invisible characters,
# accents, a capital NFKD makes (U+210C → "H"), a no-break space, separators ids and paths use.
_EDGES = "\n\r\x0b\x0c\x1c\x85 \t\u00a0\u2028’‘`´—–\u00ad\u200bé\u210c\u212b./\\-_:#*[]<>|"
_ID_LIKE = st.from_regex(
    r"[/\\.]?[a-zA-Z_-]{0,5}[0-9]{1,4}[a-zA-Z0-9_-]{0,5}(\.[a-zA-Z0-9]{1,10})?", fullmatch=True
)
_LABEL = st.sampled_from(
    ["Sources :", "\n## Sources\n", "Références\n- ", "bibliography", "1. **doc-3** — t"]
)
_PHRASES = st.sampled_from([p for patterns in PATTERNS.values() for p in patterns]).flatmap(
    lambda p: st.from_regex(re.compile(p), fullmatch=True)
)
_FRAGMENT = st.one_of(_PHRASES, _ID_LIKE, _LABEL, st.text(alphabet=_EDGES + "abcdefsy019", max_size=12))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(_EDGES), max_size=300))
def test_fold_is_the_line_by_line_fold(text: str) -> None:
    assert fold(text) == reference_fold(text)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="abH19_-./\\ \n:x", max_size=80), st.data())
def test_id_tokens_are_the_reference_tokeniser_s_runs_with_a_letter(folded: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(folded)))
    end = data.draw(st.integers(start, len(folded)))
    expected = [t for t in reference_tokens(folded, start, end) if any(c.isalpha() for c in t)]
    block = folded[:end]
    assert id_tokens(block, block.encode("ascii"), start) == expected


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_FRAGMENT, max_size=8).map("".join))
def test_scan_equals_the_reference_on_hostile_text(text: str) -> None:
    assert screen.scan(text) == reference_scan(text)


@pytest.mark.parametrize("kind", list(PATTERNS))
def test_each_kind_is_found_where_its_patterns_match(kind: str) -> None:
    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(PATTERNS[kind]).flatmap(lambda p: st.from_regex(re.compile(p))))
    def check(text: str) -> None:
        folded = fold(text)
        expected = [m.span() for p in PATTERNS[kind] if (m := re.compile(p).search(folded))]
        found = first_matches(folded.encode("ascii")).get(kind)
        assert found == (min(expected, key=lambda span: span[0]) if expected else None)

    check()


def test_every_markdown_document_of_the_corpora_scans_as_before() -> None:
    paths = sorted({*ROOT.glob("corpus/docs/*.md"), *ROOT.glob("tests/**/*.md")})
    assert len(paths) > 100
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert screen.scan(text) == reference_scan(text), path
