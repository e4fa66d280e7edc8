"""A Markdown document as the offline engine reads it: prose blocks, headings and table rows,
parsed with markdown-it-py; only prose becomes text (docs/offline-engine.md, Reading)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

from veille.offline import lexicon

__all__ = ["UNREADABLE", "Block", "Parsed", "Table", "parse", "plain"]

UNREADABLE = "\x00"  # stands for markup that cannot be read as prose (a sentence holding it is dropped)


@dataclass(frozen=True)
class Block:
    """One prose block: ``kind`` is ``paragraph``, ``item`` (a list item's paragraph) or
    ``heading``; ``heading`` is the text of the nearest heading above it."""

    kind: str
    text: str
    heading: str


@dataclass(frozen=True)
class Table:
    """A table: its header cells and its data rows, each a tuple of plain-text cells."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Parsed:
    blocks: tuple[Block, ...]
    tables: tuple[Table, ...]


_MD = (
    MarkdownIt("commonmark").enable(["table", "strikethrough"]).use(footnote_plugin).use(front_matter_plugin)
)

# Template and attribute syntax of static-site generators (Jekyll/Liquid, Jinja, Hugo, kramdown,
# Pandoc), removed before parsing. Paired tags whose content is code or a comment go whole.
_TEMPLATE_RES = (
    re.compile(
        r"\{%-?\s*(raw|highlight|comment|capture|codeblock)\b.*?%\}.*?\{%-?\s*end\1\s*-?%\}", re.DOTALL
    ),
    re.compile(
        r"\{\{[<%]\s*(highlight|code|raw|comment)\b.*?[>%]\}\}.*?\{\{[<%]\s*/\1\s*[>%]\}\}", re.DOTALL
    ),
    re.compile(r"\{%.*?%\}", re.DOTALL),
    re.compile(r"\{\{.*?\}\}", re.DOTALL),
    re.compile(r"\{[:#.][^{}\n]*\}|\{\s*[\w-]+=[^{}\n]*\}"),  # {: .note}, {#id .class}, {width=80%}
    re.compile(r"<!--.*?-->", re.DOTALL),
)
_TOML_FRONT_MATTER_RE = re.compile(r"\A\+\+\+\n.*?\n\+\+\+[ \t]*\n", re.DOTALL)
# What a parser leaves as text when the markup is malformed: stray tags, unresolved footnote
# markers, links and images whose URL broke the syntax, backticks of unclosed code spans.
_RESIDUE_RES = (
    (re.compile(r"!\[[^\]]*\]\([^)]*\)?"), " "),
    (re.compile(r"\[([^\]]*)\] ?\([^)]*\)?"), r"\1"),
    (re.compile(r"^\[[ xX]\] "), ""),  # a task list's check box
    (re.compile(r"\[\^[^\]]*\]"), ""),
    (re.compile(r"</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>|<[A-Za-z!/][^<>]*$"), " "),
    (re.compile(r"`+"), ""),
)
# Inline code read as words: identifiers, calls, commands, file names, versions (no markup
# characters, at most four tokens).
_WORDLIKE_CODE_RE = re.compile(r"[^\s<>\[\]{}`|*\\]{1,40}(?: [^\s<>\[\]{}`|*\\]{1,40}){0,3}")
# Inline HTML elements whose content is not prose (footnote numbers, keys, scripts).
_SKIPPED_ELEMENTS = frozenset({"sup", "sub", "script", "style", "kbd", "svg", "button", "figcaption"})
_TAG_RE = re.compile(r"<(/?)([A-Za-z][\w-]*)")


def _strip_templates(text: str) -> str:
    def blank(match: re.Match[str]) -> str:
        return "\n" * match.group(0).count("\n") or " "

    text = _TOML_FRONT_MATTER_RE.sub(blank, text.replace("\r\n", "\n"))
    for pattern in _TEMPLATE_RES:
        text = pattern.sub(blank, text)
    return text


def _inline_text(children: Sequence[Token]) -> str:
    """Plain text of an inline token's children (what is prose: docs/offline-engine.md, Reading)."""
    out: list[str] = []
    skipping: list[str] = []
    for child in children:
        if child.type == "html_inline":
            tag = _TAG_RE.match(child.content)
            if tag and tag.group(2).lower() in _SKIPPED_ELEMENTS and not child.content.endswith("/>"):
                if tag.group(1):
                    if skipping and skipping[-1] == tag.group(2).lower():
                        skipping.pop()
                else:
                    skipping.append(tag.group(2).lower())
            out.append(" ")
        elif child.type == "link_close" and skipping[-1:] == ["autolink"]:
            skipping.pop()
        elif skipping:
            continue
        elif child.type == "text":
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif child.type == "code_inline":
            code = child.content.strip()
            out.append(code if _WORDLIKE_CODE_RE.fullmatch(code) else UNREADABLE)
        elif child.type == "image":
            out.append(" ")
        elif child.type == "link_open" and child.markup == "autolink":
            skipping.append("autolink")  # an address, not prose
    return plain("".join(out))


def plain(text: str) -> str:
    """``text`` without markup residue, spaces collapsed."""
    for pattern, repl in _RESIDUE_RES:
        text = pattern.sub(repl, text)
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r" ([,.])(?=\s|$)", r"\1", text)


@lru_cache(maxsize=int(lexicon.weight("read_cache.parsed_documents")))
def parse(markdown: str) -> Parsed:
    """The prose blocks and tables of a Markdown document (cached: every role reads a document
    several times)."""
    tokens = _MD.parse(_strip_templates(markdown))
    blocks: list[Block] = []
    tables: list[Table] = []
    heading = ""
    footnote = 0
    items = 0
    row: list[str] = []
    header: tuple[str, ...] = ()
    rows: list[tuple[str, ...]] = []
    for n, token in enumerate(tokens):
        kind = token.type
        if kind == "footnote_block_open":
            footnote += 1
        elif kind == "footnote_block_close":
            footnote -= 1
        elif kind in ("bullet_list_open", "ordered_list_open"):
            items += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            items -= 1
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close":
            if not header and not rows and tokens[n - 1].type == "th_close":
                header = tuple(row)
            else:
                rows.append(tuple(row))
        elif kind == "table_close":
            tables.append(Table(header, tuple(rows)))
            header, rows = (), []
        elif kind != "inline" or footnote:
            continue
        elif tokens[n - 1].type in ("th_open", "td_open"):
            row.append(_inline_text(token.children or []).replace(UNREADABLE, ""))
        elif tokens[n - 1].type == "heading_open":
            heading = _inline_text(token.children or []).replace(UNREADABLE, "")
            blocks.append(Block("heading", heading, heading))
        elif tokens[n - 1].type == "paragraph_open":
            text = _inline_text(token.children or [])
            if text:
                blocks.append(Block("item" if items else "paragraph", text, heading))
    return Parsed(tuple(blocks), tuple(tables))
