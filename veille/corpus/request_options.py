"""The options a request compares (products, services), read from its text and confirmed by the
corpus: each option occurs in the corpus's text, and is returned as the corpus writes it.

Candidates, all generic: the request's front-matter ``terms``; the words it writes as names
(capitalised not at a sentence start, mixed case or with digits: « Qdrant », « DuckDB », « S3 »);
and the items of an enumeration most of whose items are names, in any case (« Qdrant, Milvus et
pgvector »: « pgvector » is an option because its neighbours are, and the corpus names it). A word
the request writes in lower case counts as a name when the corpus writes it capitalised nearly
everywhere but at a sentence start. Language names (« en anglais ») are never options.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from veille.corpus.request_words import fold, weight, words
from veille.offline import lexicon

__all__ = ["corpus_spelling", "enumerations", "is_name_shaped", "read_options"]

_WORD_RE = re.compile(r"[^\W_][\w.+-]*[\w+]|[^\W_]")
_SENTENCE_START_RE = re.compile(r"(?:^|[.!?:;«\"“(\[]\s*|\n\s*(?:[-*+#>]+|\d+[.)])?\s*)$")
# Enumeration separators: commas, « et », « ou », \"and\", \"or\", slashes.
_SPLIT_RE = re.compile(r"\s*(?:,|;|/|\bet\b|\bou\b|\band\b|\bor\b|\bvs\.?|\bversus\b)\s*", re.IGNORECASE)


def _stop() -> frozenset[str]:
    return lexicon.words("stop") | frozenset(words("languages", "names"))


def is_name_shaped(word: str) -> bool:
    """Mixed case past the first letter, or letters with digits: « DuckDB », « S3 », « gpt-4o »."""
    core = word.strip(".-+")
    has_digit = any(c.isdigit() for c in core) and any(c.isalpha() for c in core)
    return has_digit or (any(c.isupper() for c in core[1:]) and any(c.islower() for c in core))


def _mid_sentence(text: str) -> Iterable[tuple[str, bool]]:
    """(word, written mid-sentence) for each word of ``text``."""
    for match in _WORD_RE.finditer(text):
        yield match.group(), not _SENTENCE_START_RE.search(text[max(0, match.start() - 6) : match.start()])


# Code, addresses and dotted identifiers are not prose: a crate or a config key (`datafusion.x`)
# is written in lower case whatever the product's name.
_CODE_RE = re.compile(
    r"```.*?```|`[^`\n]*`|\bhttps?://\S+|\]\([^)]*\)|\b[a-z0-9_-]+(?:[./][a-z0-9_-]+)+\b", re.DOTALL
)


def _capital_runs(text: str) -> list[list[tuple[str, bool]]]:
    """Runs of words written one space apart whose first letter is a capital (« Apache DataFusion »,
    « France Travail »), each word with whether it stands mid-sentence."""
    runs: list[list[tuple[str, bool]]] = []
    last_end = -2
    for match in _WORD_RE.finditer(text):
        word = match.group()
        inside = not _SENTENCE_START_RE.search(text[max(0, match.start() - 6) : match.start()])
        if not word[:1].isupper():
            last_end = -2
            continue
        if runs and text[last_end : match.start()] == " ":
            runs[-1].append((word, inside))
        else:
            runs.append([(word, inside)])
        last_end = match.end()
    return runs


def _corpus_counts(corpus_texts: Sequence[str]) -> tuple[Counter[str], Counter[str], dict[str, Counter[str]]]:
    """Per folded word: mid-sentence occurrences, capitalised ones, and its spellings."""
    mid: Counter[str] = Counter()
    capital: Counter[str] = Counter()
    spellings: dict[str, Counter[str]] = {}
    for text in corpus_texts:
        for word, inside in _mid_sentence(_CODE_RE.sub(" ", text)):
            key = fold(word)
            spellings.setdefault(key, Counter())[word] += 1
            if inside:
                mid[key] += 1
                capital[key] += word[:1].isupper() or is_name_shaped(word)
    return mid, capital, spellings


def corpus_spelling(spellings: Counter[str]) -> str:
    """The corpus's most frequent spelling (ties: the first in sorted order, so the result does not
    depend on the order of the documents)."""
    return min(spellings.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def enumerations(text: str) -> list[list[str]]:
    """Lists of short items the request writes in a sentence (« A, B et C », « A ou B ? »), or
    as one line of a title: at least two items of at most ``max_option_words`` words."""
    out = []
    most = int(weight("max_option_words"))
    for clause in re.split(r"[.!?;:\n()«»]+", text):
        run: list[str] = []
        for part in [p.strip(" '\"’") for p in _SPLIT_RE.split(clause)]:
            pieces = part.split()
            if pieces and len(pieces) <= most:
                run.append(part)
                continue
            # A longer piece ends a run with its first word (« pgvector pour la recherche ») and
            # starts the next with its last (« compare Qdrant »).
            if run and pieces:
                run.append(pieces[0])
            if len(run) >= 2:
                out.append(run)
            run = pieces[-1:]
        if len(run) >= 2:
            out.append(run)
    return out


def _named_tail(item: str, is_name: Callable[[str], bool]) -> str:
    """The item's trailing words written as names (« Compare Qdrant » -> « Qdrant »), or ""."""
    words_ = item.split()
    while words_ and not all(is_name(w) for w in words_):
        words_ = words_[1:]
    return " ".join(words_)


def _in_any(phrase: str, texts: Sequence[str]) -> bool:
    pattern = re.compile(rf"(?<![\w-]){re.escape(fold(phrase))}(?![\w-])")
    return any(pattern.search(fold(t)) for t in texts)


def _whole_names(
    terms: Sequence[str], text: str, corpus_texts: Sequence[str], stop: frozenset[str]
) -> list[str]:
    """Each term, or the longer name the request writes it in: a word the request writes only
    inside a run of capitalised words the corpus writes together (« France » and « Travail », terms
    derived from « France Travail ») stands for that run, not for the common word (« travail »)."""
    runs: list[str] = []
    for capitals in _capital_runs(text):
        whole = [w for w, _ in capitals]
        while whole and fold(whole[0]) in stop:
            whole = whole[1:]
        if len(whole) > 1 and _in_any(" ".join(whole), corpus_texts):
            runs.append(" ".join(whole))
    out: list[str] = []
    for term in terms:
        key = fold(term).strip()
        inside = [r for r in runs if " " not in key and key in fold(r).split()]
        rest = text
        for run in inside:
            rest = re.sub(rf"(?<![\w-]){re.escape(run)}(?![\w-])", " ", rest)
        alone = re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", fold(rest))
        out.append(inside[0] if inside and not alone else term)
    return list(dict.fromkeys(out))


def read_options(
    request_text: str, terms: Sequence[str], corpus_texts: Sequence[str], title: str = ""
) -> list[str]:
    """The options the request compares that the corpus names, as the corpus writes them, in the
    request's order (de-duplicated case-insensitively)."""
    mid, capital, spellings = _corpus_counts(corpus_texts)
    stop = _stop()
    share, least = weight("corpus_name_share"), weight("min_corpus_occurrences")

    def corpus_name(key: str) -> bool:
        return mid[key] >= least and capital[key] >= share * mid[key]

    def name_in_request(word: str) -> bool:
        # Written as a name in the request and never in lower case mid-sentence in the corpus, or
        # written as a name by the corpus whatever the request's case.
        key = fold(word)
        capitalised = word[:1].isupper() and 0 < mid[key] == capital[key]
        return is_name_shaped(word) or capitalised or corpus_name(key)

    text = f"{title}\n{request_text}"
    listed: list[str] = []
    for items in enumerations(text):
        heads = [_named_tail(i, name_in_request) for i in items if fold(i) not in stop]
        names = sum(1 for i in heads if i)
        if names >= 2 and names >= weight("name_share") * len(heads):  # a choice is between two
            listed.extend(i for i in heads if i)
            # In a list of names, the other short items are options too when the corpus names
            # them (« pgvector » beside « Qdrant » and « Milvus »).
            listed.extend(i for i in items if len(i.split()) == 1 and fold(i) not in stop)
    candidates = [*_whole_names(terms, text, corpus_texts, stop), *listed]
    if not terms and not listed:
        # No list of options: the names the request writes mid-sentence, when the corpus writes
        # them as names too (« le service Patrimoine » is the team, not an option, when the corpus
        # writes « patrimoine »); acronyms name a topic (RGPD) as often as a product.
        # A run of such names the corpus also writes together is one name (« Apache DataFusion »).
        plain = {fold(w) for w, inside in _mid_sentence(text) if inside and w[:1].islower()}
        for run in _capital_runs(text):
            while run and fold(run[0][0]) in stop:
                run = run[1:]  # « Le », "The" opening a sentence are no part of a name
            whole = [w for w, _ in run]
            named = any(corpus_name(fold(w)) or is_name_shaped(w) for w in whole)
            if len(whole) > 1 and named and _in_any(" ".join(whole), corpus_texts):
                candidates.append(" ".join(whole))
                continue
            candidates += [
                w
                for w, inside in run
                if inside and not w.isupper() and len(w) >= 3
                and (k := fold(w)) not in plain and k not in stop and corpus_name(k)
            ]  # fmt: skip
    # A name the request also writes alone (« DataFusion ») stands for its longer form (« Apache
    # DataFusion »): the shorter one is what the documents write most.
    alone = {fold(c) for c in candidates if " " not in c.strip()}
    candidates = [c for c in candidates if " " not in c.strip() or not alone & set(fold(c).split())]
    out: dict[str, str] = {}
    for candidate in candidates:
        key = fold(candidate.strip())
        if not key or key in stop or key in out:
            continue
        if " " in key:
            pattern = re.compile(rf"(?<![\w-]){re.escape(key)}(?![\w-])")
            if any(pattern.search(fold(t)) for t in corpus_texts):
                out[key] = candidate.strip()
        elif key in spellings:
            out[key] = corpus_spelling(spellings[key])
    return list(out.values())
