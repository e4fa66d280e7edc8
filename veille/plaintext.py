"""Model and document text as data in Markdown (issue 23): :func:`plain` makes a string render as
the text it says, never as structure.

- control and format characters (ANSI escapes, bidi overrides, zero-width) dropped, whitespace
  collapsed to one line (a line of its own is how Markdown opens a block);
- HTML removed by ``nh3`` (ammonia's whitelist sanitiser, Rust, maintained: no tag allowed, the
  content of ``script``/``style`` dropped, ``<`` ``>`` ``&`` left as entities that render as text);
- links and images reduced to their text, footnote markers and URLs removed: links exist only
  where code writes them (the bibliography);
- Markdown's own syntax escaped where it would open structure: brackets, ``#``, ``|``, a
  backslash, and a block marker at the start.

:func:`inline_text` is the lighter form for plain-text views (the run summary, log lines, alert
messages) whose line code starts: it removes nothing a message of code may hold (URLs, paths,
``[n]``), only what would make the line more than one line of text.

Imports nothing of veille.
"""

from __future__ import annotations

import html
import re
import unicodedata

import nh3

__all__ = ["clean_text", "inline_text", "md_escape", "md_unescape", "plain"]

_DROP = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})
_LINK_RE = re.compile(r"!?\[([^\[\]]*)\]\s*\([^()]*\)")
_FOOTNOTE_RE = re.compile(r"\[\^[^\[\]]*\]:?")
_URL_RE = re.compile(
    r"(?:\b[a-z][a-z0-9+.\-]*:/{1,3}|\bwww\.|\b(?:javascript|data|mailto|vbscript):)\S*", re.I
)
_ESCAPE_RE = re.compile(r"([\\\[\]#|])")
_UNESCAPE_RE = re.compile(r"\\([\\\[\]#|().\-+*>=~`])")
# "&amp;" "&#60;" "&#x3c;" written as text: the ampersand escaped so it is not read as an entity.
_ENTITY_RE = re.compile(r"&(?=(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);)")
_LEAD_RE = re.compile(r"^(?:[-+*>=~`]|(\d+)([.)]))")


def _characters(text: str) -> str:
    out = []
    for char in text:
        category = unicodedata.category(char)
        if char in "\t\n\r\f\v" or category in ("Zl", "Zp"):
            out.append(" ")
        elif category not in _DROP:
            out.append(char)
    return " ".join("".join(out).split())


def clean_text(text: str) -> str:
    """``text`` on one line, without control characters, HTML, links, images, footnotes or URLs:
    what the dossier's structure holds (its HTML and Markdown renderings escape it)."""
    text = _UNESCAPE_RE.sub(r"\1", _characters(text))  # escapes from an earlier rendering undone
    text = nh3.clean(text, tags=set(), clean_content_tags={"script", "style"}, strip_comments=True)
    for _ in range(3):  # nested links ([a [b](x)](y)) unwrap one level per pass
        text = _LINK_RE.sub(r"\1", text)
    text = _FOOTNOTE_RE.sub("", text)
    while "[^" in text:  # "[^^1" (left by an unwrapped link) gives "[^1" again after one replace
        text = text.replace("[^", "[")
    text = _URL_RE.sub("", text)
    return " ".join(html.unescape(text).split())


def md_escape(text: str) -> str:
    """``text`` (one line) escaped so Markdown renders it as the text it says."""
    text = _ENTITY_RE.sub("&amp;", _ESCAPE_RE.sub(r"\\\1", text))  # the name stays (lookahead)
    text = text.replace("](", "]\\(").replace("<", "&lt;").replace(">", "&gt;")
    lead = _LEAD_RE.match(text)
    if lead:  # "- x" or "1. x" at the start would open a list of the model's own
        text = f"{lead.group(1)}\\{lead.group(2)}{text[lead.end() :]}" if lead.group(1) else "\\" + text
    return text


# Every escape md_escape writes: a backslash before one of its characters (read left to right, so
# an escaped backslash "\\\\" is one backslash), and the entities it writes for < > &.
_MD_ESCAPED_RE = re.compile(r"\\([\\\[\]#|().\-+*>=~`])")
_MD_ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">"}
_MD_ENTITY_RE = re.compile("|".join(_MD_ENTITIES))


def md_unescape(text: str) -> str:
    """A line :func:`md_escape` wrote, back as the text it says: what a reader sees where the
    Markdown is not rendered by a Markdown engine (report.html, the chat message) — no ``\\#``,
    ``\\[`` or ``&lt;`` left visible there."""
    return _MD_ENTITY_RE.sub(lambda m: _MD_ENTITIES[m.group(0)], _MD_ESCAPED_RE.sub(r"\1", text))


# What opens markup in a line: HTML's angle brackets (shown as their look-alike quotes), a link's or
# image's "](" and a footnote's "[^" (a space inside: no longer syntax).
_INLINE = str.maketrans({"<": "‹", ">": "›"})
_INLINE_RE = re.compile(r"\](?=\()|\[(?=\^)")


def inline_text(text: object) -> str:
    """``text`` (a model's, a document's or a message embedding them) as one line of plain text:
    control, format and bidi characters dropped, whitespace collapsed, no HTML tag, link, image or
    footnote syntax left; every other character kept."""
    return _INLINE_RE.sub(lambda m: m.group(0) + " ", _characters(str(text)).translate(_INLINE))


def plain(text: str) -> str:
    """:func:`clean_text` then :func:`md_escape`: model or document text in a Markdown line."""
    return md_escape(clean_text(text))
