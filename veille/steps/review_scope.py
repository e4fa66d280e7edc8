"""Which sections the reviser gets (issue 40 item 3): only those the arbiter's instructions point at.

An instruction points at a section when it can be traced to that section's text and no other
reading of it is possible:

- an instruction of the arbiter's line-by-line checks (a long sentence, a forbidden word, an
  unframed foreign quotation) is traced by running the same checks on each part of the draft
  (:func:`veille.arbiter.part_instructions`): the parts whose own checks give that very sentence;
- a critic's remark is traced by what it quotes (« … »): the parts holding every quoted fragment;
- anything else — a criterion's score, the mean, the length, a missing mention, a section's
  shape, a remark quoting nothing or quoting what no part being revised holds — concerns the
  dossier as a whole: the reviser then gets every section it would have got before (None).

The conclusions (synthesis, ledger, uncertainties, recommendation) always go to the reviser; the
sections it does not get are merged back by code unchanged, as kept sections are. Pure functions,
every backend alike.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from veille.arbiter import Verdict, part_instructions
from veille.dossier import Dossier, render_body
from veille.graders.parts import CONCLUSIONS, report_parts
from veille.grid import Grid
from veille.plaintext import md_escape

__all__ = ["failing_axes"]

_QUOTED_RE = re.compile(r"«\s*([^«»]+?)\s*»")
_ELLIPSIS = "…"


def _fragments(remark: str) -> list[str]:
    """What a remark quotes, without the ellipsis that marks a sentence's start."""
    out = []
    for match in _QUOTED_RE.finditer(remark):
        fragment = " ".join(match.group(1).removesuffix(_ELLIPSIS).split())
        if fragment:
            out.append(fragment.casefold())
    return out


def failing_axes(
    dossier: Dossier,
    axes: Mapping[str, str],
    verdict: Verdict,
    grid: Grid,
    language: str = "",
    held: Collection[str] = (),
) -> set[str] | None:
    """The axes (not in ``held``: kept from a validated night) the verdict's instructions point
    at; None when one of them concerns the dossier as a whole or a part not being revised."""
    rendered = report_parts(render_body(dossier, axes))
    by_title = {f"axe:{md_escape(title)}": axis for axis, title in axes.items() if axis not in held}
    parts = {by_title[key]: text for key, text in rendered.items() if key in by_title}
    parts[CONCLUSIONS] = rendered.get(CONCLUSIONS, "")
    local = {name: set(part_instructions(text, grid, language)) for name, text in parts.items()}
    folded = {name: " ".join(text.split()).casefold() for name, text in parts.items()}
    remarks = set(verdict.remarks)
    failing: set[str] = set()
    for instruction in verdict.instructions:
        if instruction in remarks:
            fragments = _fragments(instruction)
            where = {n for n, text in folded.items() if fragments and all(f in text for f in fragments)}
        else:
            where = {name for name, found in local.items() if instruction in found}
        if not where:
            return None
        failing |= where - {CONCLUSIONS}
    return failing
