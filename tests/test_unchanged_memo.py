"""An unchanged night does not redo the near-duplicate collapse (issue 40 item 4): the result kept
for the same entries, fingerprints and code is the one computed, and any change recomputes."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import veille.steps.unchanged as unchanged
from veille.roles.planner import CatalogueEntry
from veille.steps.duplicates import collapse_duplicates

_WORDS = ["kestrel", "tamaris", "orvet", "tarifs", "2026", "version", "corrigée", "banc", "débit", "alerte"]

entry = st.builds(
    lambda n, title, summary, day: CatalogueEntry(
        id=f"doc-{n}", date=f"2026-01-{day:02d}", source_type="web", title=" ".join(title), summary=summary
    ),
    st.integers(0, 30),
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6),
    st.one_of(
        st.none(),
        st.sampled_from(["Un résumé court.", "Le débit de Kestrel mesuré au banc d'essai interne."]),
    ),
    st.integers(1, 28),
)
sketch = st.lists(st.integers(0, 12), min_size=0, max_size=8).map(lambda s: tuple(sorted(set(s))))


def _unique(entries: list[CatalogueEntry]) -> list[CatalogueEntry]:
    return list({e.id: e for e in entries}.values())


def _fingerprints(
    entries: list[CatalogueEntry], data: st.DataObject
) -> dict[str, tuple[str, tuple[int, ...]]]:
    return {e.id: (data.draw(st.sampled_from(["h1", "h2", "h3", "h4"])), data.draw(sketch)) for e in entries}


class _Counting:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        monkeypatch.setattr(unchanged, "collapse_duplicates", self)

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        return collapse_duplicates(*args)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(entries=st.lists(entry, min_size=1, max_size=12).map(_unique), data=st.data())
def test_the_kept_collapse_is_the_computed_one_and_follows_any_change(
    entries: list[CatalogueEntry], data: st.DataObject, monkeypatch: pytest.MonkeyPatch
) -> None:
    prints = _fingerprints(entries, data)
    expected = collapse_duplicates(entries, prints)
    counting = _Counting(monkeypatch)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        first = unchanged.remembered_collapse(entries, prints, folder)
        again = unchanged.remembered_collapse(entries, prints, folder)
        assert first == again == expected
        assert counting.calls == 1  # the unchanged night compared nothing

        # Any change of an entry or of a text recomputes, and gives what a fresh computation gives.
        i = data.draw(st.integers(0, len(entries) - 1))
        edited = [*entries]
        edited[i] = edited[i].model_copy(update={"title": edited[i].title + " corrigée"})
        assert unchanged.remembered_collapse(edited, prints, folder) == collapse_duplicates(edited, prints)
        other = {**prints, entries[i].id: ("h9", data.draw(sketch))}
        assert unchanged.remembered_collapse(entries, other, folder) == collapse_duplicates(entries, other)
        assert counting.calls == 3
    monkeypatch.undo()


def test_a_damaged_file_recomputes_and_no_folder_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = [
        CatalogueEntry(id="doc-1", date="2026-01-02", source_type="web", title="Kestrel tarifs 2026"),
        CatalogueEntry(
            id="doc-2", date="2026-01-05", source_type="web", title="Kestrel tarifs 2026 (version corrigée)"
        ),
    ]
    counting = _Counting(monkeypatch)
    expected = collapse_duplicates(entries, None)
    assert expected.copy_of  # a real collapse, so a wrong kept value would show
    assert unchanged.remembered_collapse(entries, None, tmp_path) == expected
    (tmp_path / "duplicates.json").write_text("{not json", encoding="utf-8")
    assert unchanged.remembered_collapse(entries, None, tmp_path) == expected
    assert unchanged.remembered_collapse(entries, None, None) == expected
    assert unchanged.remembered_collapse(entries, None, None) == expected
    assert counting.calls == 4
