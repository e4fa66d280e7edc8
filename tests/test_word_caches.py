"""Words remembered per word change no answer (issue 40 item 1: a warm night's CPU).

The number reader's ``fold`` is remembered per word and the verifier's per character; each equals NFKD
without combining marks.

``stem``, ``key`` and each word's aspect families are remembered per word; ``aspect_words`` then
counts families word by word. The reference below is the set comprehension it replaced (every
distinct word tested against every family's exact words and prefixes). Texts are drawn from the
families' own entries, their prefixes extended, and other words, so matches and near-misses are
both frequent.
"""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from veille import numberunits
from veille.offline import vocab
from veille.offline.text import fold, stem
from veille.steps import verify_passages

_WORD_RE = re.compile(r"[a-z0-9]+")
ENTRIES = sorted(
    {w for exact, prefixes in vocab.ASPECTS.values() for w in (*exact, *prefixes)}
    | set(vocab.FRAMING[0])
    | set(vocab.FRAMING[1])
)


def reference_aspect_words(text: str) -> dict[str, int]:
    words = set(_WORD_RE.findall(fold(text)))
    counts = {
        name: len({w for w in words if w in exact or any(w.startswith(p) for p in prefixes)})
        for name, (exact, prefixes) in vocab.ASPECTS.items()
    }
    return {name: n for name, n in counts.items() if n}


word = st.one_of(
    st.sampled_from(ENTRIES),
    st.builds(
        lambda w, tail: w + tail, st.sampled_from(ENTRIES), st.sampled_from(["", "s", "ent", "ité", "x"])
    ),
    st.builds(lambda w: w[:-1], st.sampled_from([e for e in ENTRIES if len(e) > 1])),
    st.text(alphabet="abcdeéèilmnorstuç", min_size=1, max_size=9),
)
texts = st.lists(word, max_size=40).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_aspect_words_equal_the_comprehension_over_every_family(text: str) -> None:
    assert vocab.aspect_words(text) == reference_aspect_words(text)
    assert list(vocab.aspect_words(text)) == list(reference_aspect_words(text))  # same family order
    assert vocab.aspects(text) == frozenset(reference_aspect_words(text))


@settings(max_examples=300, deadline=None)
@given(st.lists(word, max_size=20))
def test_remembered_stems_and_keys_equal_a_fresh_computation(words: list[str]) -> None:
    for w in (fold(x) for x in words):
        assert stem(w) == stem.__wrapped__(w)
        assert vocab.key(w) == vocab.key.__wrapped__(w)
    # asked twice, the second answer comes from the cache and is the same
    assert [vocab.keys(" ".join(words))] * 2 == [vocab.keys(" ".join(words)) for _ in range(2)]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=12), st.sampled_from(["Décembre", "ŒUVRE", "ﬁn", "İstanbul"]))))
def test_the_number_readers_remembered_fold_equals_its_definition(words: list[str]) -> None:
    for w in words * 2:  # the second pass is answered from the cache
        decomposed = unicodedata.normalize("NFKD", w.casefold())
        assert numberunits.fold(w) == "".join(c for c in decomposed if not unicodedata.combining(c))


def _fold_each_character(text: str) -> str:
    out = []
    for char in text:
        base = unicodedata.normalize("NFKD", char.casefold())
        kept = [c for c in base if not unicodedata.combining(c)]
        out.append(kept[0] if kept else " ")
    return "".join(out)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=60))
def test_the_verifiers_fold_remembered_per_character_keeps_offsets_and_answers(text: str) -> None:
    folded = verify_passages._fold(text)
    assert folded == _fold_each_character(text)
    assert len(folded) == len(text)  # one character for one: offsets stay those of the text
