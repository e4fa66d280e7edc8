"""Answers kept item by item (issue 38 item 3): a lenient reading, then per-item validation.

A schema-following but mediocre model (and any small local one) slips on one item far more often
than on a whole answer: one contradiction citing a single document, one figure past its 200
characters, the JSON after a sentence or inside a ``` fence. Refusing the whole answer for that
re-asks a whole branch (and, after the re-asks, loses it). So an answer is:

1. **read leniently** (:func:`find_json`): the text itself when it is JSON; else the first JSON
   object inside a fenced block, else the first one after prose — trailing prose ignored. Only an
   object holding at least one of the schema's top-level fields counts, so a truncated answer is
   never replaced by one of its own inner items;
2. **validated per item** (:func:`keep_items`): the role declares which lists hold independent
   items (:class:`ItemPolicy`, dotted paths such as ``findings.figures``). Every validation error
   located inside such a list drops that item (the deepest declared list: a figure past its limit
   drops the figure, not its finding); a declared list longer than its ceiling keeps its first
   items; exact repeats of an earlier item of a declared list are dropped when the answer stays
   valid without them (a repeat never makes an answer unusable). An error anywhere else (a
   missing field, a score out of range, a positional list) is not an item's: the answer is unusable;
3. **kept when usable**: what remains validates with the schema (its own minimums included: a
   writer's synthesis and recommendation), and no list the role requires (``required``) was
   emptied by the drops — a list the model sent empty is its answer, not a drop.

The kept output is exactly the answer without its invalid items: nothing is rewritten, shortened
or guessed. The drops are counted by kind (``path:error``) for the step's alert
(``veille.steps.answer_items``).
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from veille.itempolicy import ItemPolicy

__all__ = ["DUPLICATE", "SURPLUS", "ItemPolicy", "Kept", "Unusable", "find_json", "keep_items"]

T = TypeVar("T", bound=BaseModel)

DUPLICATE = "duplicate"  # kind of an item repeating an earlier one of its list
SURPLUS = "surplus"  # kind of the items past a list's ceiling (the first ones are kept)

# A fenced block: ``` with an optional language tag, up to the closing fence.
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
# Openings of an object tried in one text: bounds the work on a long answer full of braces.
_MAX_STARTS = 64
# Drop rounds: dropping a nested item may leave its parent invalid (a finding left without a
# cited document), which the next round drops; paths are at most a few lists deep.
_MAX_ROUNDS = 8


@dataclass(frozen=True)
class Kept(Generic[T]):
    """A usable answer: its validated output, the JSON it was read from, what was dropped."""

    output: T
    text: str  # the answer's text when kept whole, else the JSON of what was kept
    dropped: tuple[tuple[str, int], ...] = ()  # (kind "path:error", count), sorted
    unwrapped: bool = False  # the JSON was found inside a fence or after prose


@dataclass(frozen=True)
class Unusable:
    """Nothing usable: the validation error of the answer (as read) and why drops did not help."""

    error: ValidationError
    note: str = ""  # e.g. the required list the drops emptied


def find_json(text: str, fields: Iterable[str] = ()) -> tuple[Any, bool] | None:
    """The JSON value of ``text`` and whether it had to be looked for (``None``: none found).

    The text itself when it parses; else the first object inside a fenced block, else the first
    object in the text, holding one of ``fields`` (any object when ``fields`` is empty)."""
    try:
        return json.loads(text), False
    except ValueError:
        pass
    wanted = frozenset(fields)
    for block in _FENCE.findall(text):
        found = _first_object(block, wanted)
        if found is not None:
            return found, True
    found = _first_object(text, wanted)
    return (found, True) if found is not None else None


def _first_object(text: str, wanted: frozenset[str]) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    start = text.find("{")
    tries = 0
    while start >= 0 and tries < _MAX_STARTS:
        tries += 1
        try:
            value, _end = decoder.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict) and (not wanted or wanted & value.keys()):
            return value
        start = text.find("{", start + 1)
    return None


def keep_items(schema: type[T], text: str, policy: ItemPolicy | None) -> Kept[T] | Unusable:
    """``text`` validated with ``schema``, its invalid items dropped as ``policy`` allows (module
    docstring); :class:`Unusable` when nothing usable remains."""
    policy = policy or ItemPolicy()
    found = find_json(text, schema.model_fields)
    if found is None:
        return Unusable(_error(schema, text))
    data, unwrapped = found
    paths = [tuple(p.split(".")) for p in policy.droppable]
    dropped: Counter[str] = Counter()
    if not unwrapped:
        try:  # the answer as sent: its own text is what is kept and cached
            output = schema.model_validate_json(text)
        except ValidationError:
            pass
        else:
            return _without_duplicates(schema, Kept(output, text), data, paths)
    data = copy.deepcopy(data)
    sent = {name for name in policy.required if _nonempty(data, name)}
    first: ValidationError | None = None
    for _ in range(_MAX_ROUNDS):
        kept_text = json.dumps(data, ensure_ascii=False)
        try:
            output = schema.model_validate_json(kept_text)
        except ValidationError as exc:
            first = first or exc
            if not _drop(data, exc, paths, dropped):
                return Unusable(first)
            continue
        emptied = sorted(name for name in sent if not _nonempty(data, name))
        if emptied:
            return Unusable(first or _error(schema, text), _emptied_note(emptied))
        kept = Kept(output, kept_text, tuple(sorted(dropped.items())), unwrapped)
        return _without_duplicates(schema, kept, data, paths)
    return Unusable(first or _error(schema, text))


def _without_duplicates(
    schema: type[T], kept: Kept[T], data: Any, paths: Sequence[tuple[str, ...]]
) -> Kept[T]:
    """``kept`` without the items repeating an earlier one of their declared list — unless the
    answer would then break the schema (a list falling below its minimum): a repeat is noise, not
    an error, and never makes a valid answer unusable."""
    data = copy.deepcopy(data)
    repeats: Counter[str] = Counter()
    if not _duplicates(data, paths, repeats):
        return kept
    text = json.dumps(data, ensure_ascii=False)
    try:
        output = schema.model_validate_json(text)
    except ValidationError:
        return kept
    dropped = Counter(dict(kept.dropped)) + repeats
    return Kept(output, text, tuple(sorted(dropped.items())), kept.unwrapped)


def _error(schema: type[BaseModel], text: str) -> ValidationError:
    try:
        schema.model_validate_json(text)
    except ValidationError as exc:
        return exc
    raise AssertionError("an answer found unusable validated")  # pragma: no cover


def _emptied_note(names: Sequence[str]) -> str:
    return "aucun élément valide dans " + ", ".join(names) + " : chaque élément est invalide"


def _nonempty(data: Any, name: str) -> bool:
    return isinstance(data, dict) and isinstance(data.get(name), list) and bool(data[name])


def _lists(data: Any, path: tuple[str, ...]) -> list[list[Any]]:
    """Every list at ``path`` (keys through objects, every item of a list on the way)."""
    nodes: list[Any] = [data]
    for key in path:
        nxt: list[Any] = []
        for node in nodes:
            for item in node if isinstance(node, list) else [node]:
                if isinstance(item, dict) and key in item:
                    nxt.append(item[key])
        nodes = nxt
    return [node for node in nodes if isinstance(node, list)]


def _duplicates(data: Any, paths: Sequence[tuple[str, ...]], dropped: Counter[str]) -> int:
    """Drop, in place, items repeating an earlier item of their declared list; how many."""
    count = 0
    for path in paths:
        for items in _lists(data, path):
            seen: set[str] = set()
            keep = []
            for item in items:
                key = json.dumps(item, sort_keys=True, ensure_ascii=False)
                if key in seen:
                    dropped[f"{'.'.join(path)}:{DUPLICATE}"] += 1
                    count += 1
                else:
                    seen.add(key)
                    keep.append(item)
            items[:] = keep
    return count


def _drop(data: Any, exc: ValidationError, paths: Sequence[tuple[str, ...]], dropped: Counter[str]) -> bool:
    """Drop, in place, the items ``exc``'s errors are in; False when an error is in no declared
    list (nothing dropped then)."""
    removals: dict[int, tuple[list[Any], set[int]]] = {}  # by list identity: its indices to drop
    kinds: list[str] = []  # one per item dropped (an item with two errors is counted once)
    for error in exc.errors(include_url=False):
        target = _target(data, tuple(error["loc"]), paths, error)
        if target is None:
            return False
        items, indices, kind = target
        gone = removals.setdefault(id(items), (items, set()))[1]
        for index in indices:
            if index not in gone:
                gone.add(index)
                kinds.append(kind)
    dropped.update(kinds)
    for listed, gone in removals.values():
        listed[:] = [item for i, item in enumerate(listed) if i not in gone]
    return bool(kinds)


def _target(
    data: Any, loc: tuple[Any, ...], paths: Sequence[tuple[str, ...]], error: Any
) -> tuple[list[Any], list[int], str] | None:
    """The declared list an error is in, the indices to drop and the kind; None if in none."""
    keys: list[str] = []
    node = data
    best: tuple[list[Any], list[int], str] | None = None
    for position, part in enumerate(loc):
        if isinstance(part, int):
            if isinstance(node, list) and tuple(keys) in paths and 0 <= part < len(node):
                best = (node, [part], f"{'.'.join(keys)}:{error['type']}")
            node = node[part] if isinstance(node, list) and 0 <= part < len(node) else None
            continue
        keys.append(str(part))
        node = node.get(part) if isinstance(node, dict) else None
        last = position == len(loc) - 1
        if last and isinstance(node, list) and tuple(keys) in paths and error["type"] == "too_long":
            limit = (error.get("ctx") or {}).get("max_length")
            if isinstance(limit, int) and 0 <= limit < len(node):  # the first ones are kept
                return node, list(range(limit, len(node))), f"{'.'.join(keys)}:{SURPLUS}"
    return best
