"""Last night's result of a costly pure step, kept for the same inputs (issue 40 item 4).

A night with nothing changed should cost a digest comparison, not the work again. Some catalogue
steps grow with the corpus and are pure functions of their inputs: the near-duplicate collapse
compares the paragraph sketches of every pair of documents that share one (the heaviest step of an
unchanged night at 2,000 real-size documents: docs/benchmarks.md). :func:`remembered` keeps the
result of the last computation in ``<warehouse>/cache/<name>.json`` with the digest of its inputs
and of the code that computed it (veille.fingerprint.code_digest): the same digest returns the kept
result, any other recomputes and replaces it. One slot per step: what a nightly run needs, and the
file stays the size of one result.

Derived state: an unreadable or foreign file recomputes; a file that cannot be written costs the
next night the computation again, never the run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from veille.fingerprint import code_digest, text_digest
from veille.roles.planner import CatalogueEntry
from veille.steps.duplicates import Collapsed, collapse_duplicates
from veille.tree_cache import write_atomically

__all__ = ["remembered", "remembered_among", "remembered_collapse"]

T = TypeVar("T")


def remembered(
    folder: Path | None,
    name: str,
    key: str,
    compute: Callable[[], T],
    dump: Callable[[T], Any],
    load: Callable[[Any], T],
) -> T:
    """``compute()``, or the result kept under ``folder/name.json`` for the same ``key``: one slot of
    :func:`remembered_among` (one file format for every memo)."""
    return remembered_among(folder, name, key, compute, dump, load, slots=1)


def remembered_among(
    folder: Path | None,
    name: str,
    key: str,
    compute: Callable[[], T],
    dump: Callable[[T], Any],
    load: Callable[[Any], T],
    slots: int,
) -> T:
    """:func:`remembered` for a step run several times a night on different inputs (the verifier:
    the writer's structure, then each revision): the last ``slots`` results are kept, the oldest
    dropped first, so the file stays the size of one night's results."""
    if folder is None:
        return compute()
    path = folder / f"{name}.json"
    entries: list[list[Any]] = []
    try:
        kept = json.loads(path.read_bytes())
        entries = [e for e in kept["entries"] if isinstance(e, list) and len(e) == 2]
        for kept_key, value in entries:
            if kept_key == key:
                return load(value)
    except (OSError, ValueError, KeyError, TypeError):
        entries = []  # absent, damaged or of another shape: computed again below
    result = compute()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return result
    entries = [*entries, [key, dump(result)]][-slots:]
    write_atomically(path, json.dumps({"entries": entries}, ensure_ascii=False).encode())
    return result


def remembered_collapse(
    entries: Sequence[CatalogueEntry],
    fingerprints: Mapping[str, tuple[str, Sequence[int]]] | None,
    folder: Path | None,
) -> Collapsed:
    """:func:`veille.steps.duplicates.collapse_duplicates`, kept in ``folder`` for the same
    entries (every field, in order), text fingerprints and code."""
    listed = [e.model_dump(mode="json") for e in entries]
    prints = sorted((k, h, list(s)) for k, (h, s) in (fingerprints or {}).items())
    key = text_digest(
        code_digest(("veille.steps.duplicates", __name__)),
        json.dumps(listed, ensure_ascii=False, sort_keys=True),
        json.dumps(prints, ensure_ascii=False),
    )

    def dump(collapsed: Collapsed) -> dict[str, Any]:
        return {
            "entries": [e.model_dump(mode="json") for e in collapsed.entries],
            "copy_of": collapsed.copy_of,
        }

    def load(value: Any) -> Collapsed:
        return Collapsed(
            entries=[CatalogueEntry.model_validate(e) for e in value["entries"]],
            copy_of={str(k): str(v) for k, v in value["copy_of"].items()},
        )

    return remembered(
        folder, "duplicates", key, lambda: collapse_duplicates(entries, fingerprints), dump, load
    )
