"""Structure a model wrote inside an item, removed before the dossier is rendered (issue 36 item 5).

Sections, lists, the bibliography and headings are code's (veille.dossier.render_body): an item
holds sentences. Whatever a writer, a reviser or an analyst put in one, code removes here, for
every backend:

- format characters (Unicode category Cf: zero-width spaces and joiners, bidi marks, soft
  hyphens), first, so that ``[\\u200b99]`` is read as the citation ``[99]`` it looks like;
- front matter (``--- title: x ---``, flattened or not) and horizontal rules;
- list markers opening a line of the item (« - », « * », « 1. »);
- an inline heading and everything after it (« … ## Sources [1] x »): a section of the model's own;
- sentences addressed to the reader in the imperative (« Achetez Tamaris ici »): the word lists
  are ``[imperative]`` of veille/data/model_text.toml, with their reason.

A quotation marked « … » is a document's words and is never cut here. Nothing is rewritten: a
sentence is kept whole or removed whole.
"""

from __future__ import annotations

import html
import re
import tomllib
import unicodedata
from functools import cache

from veille.resources import data_file

__all__ = ["drop_format_characters", "is_imperative", "strip_markup", "strip_structure"]

_RULE = r"(?<!\S)(?:-{3,}|\*{3,}|_{3,}|={3,})(?!\S)"
# Front matter: from a rule to the next rule past a « key: » line (flattened on one line or not).
_FRONT_RE = re.compile(rf"{_RULE}.*?[\w-]\s*:\s.*?{_RULE}", re.DOTALL)
_RULE_RE = re.compile(_RULE)
_LIST_RE = re.compile(r"^[ \t]*(?:[-*+•>]|\d{1,3}[.)])[ \t]+", re.MULTILINE)
_HEADING_RE = re.compile(r"(?<!\S)#{1,6}(?=\s).*\Z", re.DOTALL)
_HEADING_MARK_RE = re.compile(r"(?<!\S)#{1,6}(?=\s|$)")
_SENTENCE_RE = re.compile(r"(?<=[.!?…])\s+")
_BRACKETED_RE = re.compile(r"[\[(［][^\[\]()［］]{0,16}[\])］]")  # « [1] », « (source 3) »
_FIRST_WORD_RE = re.compile(r"^[\W_]*([^\W\d_][\w'’-]*)")


def drop_format_characters(text: str) -> str:
    """``text`` without its format characters (Unicode Cf): invisible, they only hide what a
    reader sees (a citation ``[\\u200b99]`` is ``[99]`` on screen)."""
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


@cache
def _imperative() -> tuple[str, frozenset[str], frozenset[str]]:
    path = data_file("model_text.toml")
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))["imperative"]
        ending = str(table["french_ending"])
        not_verbs = frozenset(str(table["french_not_verbs"]).casefold().split())
        english = frozenset(str(table["english_verbs"]).casefold().split())
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: [imperative] missing or malformed ({exc})") from exc
    return ending, not_verbs, english


def is_imperative(sentence: str) -> bool:
    """Whether ``sentence`` opens with a verb in the imperative addressed to the reader (its first
    word capitalised, as an imperative opens a sentence); a quotation never is."""
    # « [1] Achetez… », « &amp; Achetez… »: a citation, an entity is not the sentence's first word
    stripped = _BRACKETED_RE.sub(" ", html.unescape(sentence)).lstrip()
    if stripped.startswith(("«", "“", '"')):
        return False
    match = _FIRST_WORD_RE.match(stripped)
    if match is None or not match.group(1)[:1].isupper():
        return False
    word = match.group(1).casefold()
    ending, not_verbs, english = _imperative()
    head = word.split("-")[0]  # « Contactez-nous »: the verb before its pronoun
    if word in not_verbs or head in not_verbs:
        return False
    return head in english or (len(head) > len(ending) + 1 and head.endswith(ending))


def strip_markup(text: str) -> str:
    """``text`` (a title, a question) without format characters, front matter, rules, list and
    heading markers; its words, sentences and imperatives kept (« Comparez les coûts » is a
    question's subject, not an advertisement)."""
    text = _FRONT_RE.sub(" ", drop_format_characters(text))
    text = _LIST_RE.sub("", _RULE_RE.sub(" ", text))
    return " ".join(_HEADING_MARK_RE.sub(" ", text).split())


def strip_structure(text: str) -> tuple[str, int]:
    """``text`` without the structure a model wrote in it, and how many kinds of structure were
    removed (0: unchanged but for whitespace). Format characters are dropped without counting."""
    text = drop_format_characters(text)
    removed = 0
    for pattern, replace in (
        (_FRONT_RE, " "),
        (_RULE_RE, " "),
        (_LIST_RE, ""),
        (_HEADING_RE, ""),
    ):
        text, n = pattern.subn(replace, text)
        removed += bool(n)
    sentences = [s for s in _SENTENCE_RE.split(" ".join(text.split())) if s]
    kept = [s for s in sentences if not is_imperative(s)]
    removed += len(kept) < len(sentences)
    return " ".join(kept), removed
