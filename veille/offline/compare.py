"""Offline writer, the recommendation: extractive, per axis, never weighing axes
(docs/offline-engine.md, Writer)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from veille.dossier import CitedText
from veille.offline import lexicon
from veille.offline.analyst_rules import own_clause
from veille.offline.figures import extract_figures, figure_value, is_year, rate_unit
from veille.offline.ledger import SAME_MEASURE, Statement, mentioned, window
from veille.offline.text import stems

__all__ = ["Value", "option_values", "recommendation"]

# Clause boundaries of a statement (French: the dossier's language; veille/data/lang).
_CLAUSE_RE = re.compile(rf", | ; | : | (?:{lexicon.alternation('statement_clauses')}) ")
_HIGHER = re.compile(r"/s$|/sec$|par seconde$")
_LOWER = re.compile(
    r"^(?:k |m |md )?(?:eur|euros?|€|\$|usd|dollars)(?: ht| ttc)?(?:/[\w-]+)?$|^ms(?:/[\w-]+)?$|^(?:etp|fte)(?:/[\w-]+)?$"
)
_UNITS_PER_AXIS = 2  # comparisons shown per axis at most


@dataclass(frozen=True)
class Value:
    option: str
    figure: str
    unit: str
    value: float
    statement: Statement


def option_values(statement: Statement, options: Sequence[str]) -> list[Value]:
    """Figures of ``statement`` with the option they belong to: the one option named in their clause,
    else the one option the whole statement names."""
    whole = mentioned(statement.text, options)
    out = []
    for clause in _CLAUSE_RE.split(statement.text):
        named = mentioned(clause, options)
        owner = named[0] if len(named) == 1 else (whole[0] if not named and len(whole) == 1 else None)
        if owner is None:
            continue
        for figure in extract_figures(clause):
            # « 1 250 EUR par mois » and « 9 000 EUR par an » are not one quantity.
            value, unit = figure_value(figure), rate_unit(clause, figure)
            if value is not None and unit and not is_year(figure):
                out.append(Value(owner, figure, unit, value, statement))
    return out


def _direction(unit: str) -> int:
    """+1: higher is better, -1: lower is better, 0: the unit does not say."""
    if _HIGHER.search(unit):
        return 1
    return -1 if _LOWER.search(unit) else 0


def _measured(v: Value, options: Sequence[str]) -> frozenset[str]:
    """What ``v`` measures: the words of its own clause (:func:`own_clause`), option names left out."""
    return own_clause(
        v.statement.text, v.figure, v.statement.text.find(v.figure), set(stems(" ".join(options)))
    )


def _comparable(values: Sequence[Value], options: Sequence[str]) -> dict[str, list[Value]]:
    """unit -> one value per option: the statement naming the most options anchors the row; a missing
    option is filled from another statement measuring the same thing (docs/offline-engine.md)."""
    out: dict[str, list[Value]] = {}
    for unit in dict.fromkeys(v.unit for v in values):
        same = [v for v in values if v.unit == unit]
        statements = list(dict.fromkeys(v.statement for v in same))
        anchor = max(statements, key=lambda st: len({v.option for v in same if v.statement == st}))
        chosen = {v.option: v for v in reversed(same) if v.statement == anchor}  # each option's first
        around = set().union(*(window(v.statement.text, v.figure, options) for v in chosen.values()))
        own = set().union(*(_measured(v, options) for v in chosen.values()))
        for option in options:
            if option in chosen:
                continue
            # The ledger's test of one quantity (:meth:`Claim.same_quantity`): the figures' own
            # clauses share a word, and their surroundings SAME_MEASURE words.
            overlaps = [
                (len(around & window(v.statement.text, v.figure, options)), v)
                for v in same
                if v.option == option and own & _measured(v, options)
            ]
            best = max((n for n, _ in overlaps), default=0)
            top = {v.value: v for n, v in overlaps if n == best}
            # The same quantity needs the words the ledger asks for; several values of that option
            # fitting as well (a price grid's tiers) leave it out rather than guess which compares.
            if best >= SAME_MEASURE and len(top) == 1:
                chosen[option] = next(iter(top.values()))
        if len(chosen) >= 2:
            out[unit] = [chosen[o] for o in options if o in chosen]
    return out


def axis_label(axis: str, title: str) -> str:
    """How a recommendation row names its axis: the request's own heading phrase (the title up to
    its first « : »), never the internal sub-task id (issue 36: ids stay out of what readers see);
    empty when the axis has no title of its own."""
    if not title or title == axis:
        return ""
    return title.split(" : ", 1)[0].strip()


def _line(axis: str, row: Sequence[Value]) -> tuple[CitedText, str | None]:
    """The row as a sentence, and the option it favours (None: a tie). ``row``'s unit has a direction.
    ``axis``: the row's label (:func:`axis_label`), empty for none."""
    listed = ", ".join(f"{v.option} {v.figure}" for v in row)
    numbers = list(dict.fromkeys(n for v in row for n in v.statement.numbers))
    best = max(row, key=lambda v: _direction(row[0].unit) * v.value)
    tie = sum(1 for v in row if v.value == best.value) > 1
    verdict = "pas d'écart entre les options" if tie else f"ces chiffres favorisent {best.option}"
    text = f"{axis} : {listed} ; {verdict}" if axis else f"{listed} ; {verdict}"
    item = CitedText(text=text[:1].upper() + text[1:], citations=numbers)
    return item, None if tie else best.option


def recommendation(
    statements: Sequence[Statement],
    options: Sequence[str],
    axes: Mapping[str, str],
    rejected: Mapping[int, Collection[str] | None] | None = None,
) -> tuple[list[CitedText], dict[str, int]]:
    """The recommendation items, and how many comparisons each option leads. A statement citing only
    ``rejected`` sources (number -> the units it lost on, None for all) gives no figure in those units."""
    rejected = rejected or {}

    def lost(v: Value) -> bool:
        base = v.unit.partition("/")[0].split()[0]
        return bool(v.statement.numbers) and all(
            n in rejected and (rejected[n] is None or base in (rejected[n] or ()))
            for n in v.statement.numbers
        )

    items = [
        CitedText(
            text="Cette recommandation est extractive : elle met côte à côte les chiffres retenus de "
            "chaque option, axe par axe, sans les pondérer"
        )
    ]
    leads: dict[str, int] = {}
    for axis in axes:
        kept = [s for s in statements if s.axis == axis]
        values = [v for s in kept for v in option_values(s, options) if not lost(v)]
        # A unit that does not say which way is better gives no row: it would favour nobody.
        comparable = _comparable(values, options)
        # A rate (« EUR par GPU ») compares like with like; the same unit without its « par »
        # mixes the items it counts (a licence, a support total): the rate's row only.
        rates = {u.partition("/")[0] for u in comparable if "/" in u}
        rows = [r for u, r in comparable.items() if _direction(r[0].unit) and u not in rates]
        rows.sort(key=lambda r: "/" not in r[0].unit)
        for row in rows[:_UNITS_PER_AXIS]:
            item, favoured = _line(axis_label(axis, axes[axis]), row)
            items.append(item)
            if favoured:
                leads[favoured] = leads.get(favoured, 0) + 1
    if leads:
        ranked = sorted(leads.items(), key=lambda kv: (-kv[1], options.index(kv[0])))
        counted = ", ".join(f"{o} sur {n} comparaison(s)" for o, n in ranked)
        items.append(
            CitedText(
                text=f"Les chiffres retenus favorisent {counted} ; le choix dépend du poids donné à chaque axe"
            )
        )
    elif len(items) == 1:
        items.append(
            CitedText(
                text="Aucun axe ne donne de chiffre comparable pour deux options : le choix reste à instruire"
            )
        )
    return items, leads
