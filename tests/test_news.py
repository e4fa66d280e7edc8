"""What changed since the previous dossier (issue 13): the snapshot comparison, and the
``## Nouveautés`` section code writes, for any schema-valid writer answer."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_review_properties import DrawingClient, _writer_input
from veille.citations import cited_numbers, invalid_citations
from veille.dossier import NEWS_SECTION, AxisSection, Dossier, KeyPoint, render_body, without_news
from veille.roles.writer import SourceRef
from veille.steps.finalize import finalize_report
from veille.steps.news import (
    Changes,
    PreviousDossier,
    compare_snapshots,
    french_date,
    key_point_key,
    previous_dossier,
    render_news,
)
from veille.steps.write import write_draft
from veille.textstats import MODEL_SECTIONS, section_order, split_sections

DAY = date(2026, 12, 1)
HASH = st.sampled_from(["h1", "h2", "h3"])
SNAPSHOT = st.dictionaries(st.sampled_from([f"doc-{i:02d}" for i in range(12)]), HASH, max_size=12)


def _previous(documents: dict[str, str], points: frozenset[str] = frozenset()) -> PreviousDossier:
    return PreviousDossier(
        run_id="20261201T020000Z-aaaaaa", report_date=DAY, documents=documents, key_points=points
    )


@given(before=SNAPSHOT, now=SNAPSHOT)
def test_the_comparison_partitions_both_snapshots(before: dict[str, str], now: dict[str, str]) -> None:
    changes = compare_snapshots(_previous(before), sorted(now.items()))
    assert set(changes.new) | set(changes.changed) | {
        i for i in now if i in before and before[i] == now[i]
    } == set(now)
    assert set(changes.removed) == set(before) - set(now)
    assert not set(changes.new) & set(before) and not set(changes.removed) & set(now)
    assert all(before[i] != now[i] for i in changes.changed)
    assert list(changes.new) == sorted(changes.new)


def test_first_dossier_has_no_previous() -> None:
    changes = compare_snapshots(None, [("doc-01", "h1")])
    assert changes.previous is None and changes.touched == () and "first" in changes.note


def test_french_dates() -> None:
    assert french_date(date(2026, 12, 1)) == "1er décembre 2026"
    assert french_date(date(2027, 8, 15)) == "15 août 2027"


def test_key_points_are_compared_without_case_accents_or_punctuation() -> None:
    assert key_point_key("Kestrel : 1 420 tokens/s, mesuré.") == key_point_key(
        "kestrel 1 420 tokens s mesure"
    )
    assert key_point_key("Kestrel 1 420") != key_point_key("Kestrel 1 510")


def test_previous_key_points_are_read_from_its_report() -> None:
    dossier = Dossier(
        sections=[
            AxisSection(
                axis="st-1",
                points=[
                    KeyPoint(text="Kestrel atteint 1 420 tokens/s.", citations=[1]),
                    KeyPoint(text="Orvet coûte 3 600 EUR.", citations=[2], superseded=True),
                ],
            )
        ]
    )
    report = "# T\n\n" + render_body(dossier, {"st-1": "Axe"})
    previous = previous_dossier("r", DAY, {"doc-01": "h"}, report, [(1, "doc-01", "corpus", "Titre 1")])
    assert previous.key_points == {
        key_point_key("kestrel atteint 1 420 tokens/s"),
        key_point_key("Orvet coûte 3 600 EUR"),
    }
    assert previous.titles == {"doc-01": "Titre 1"}


def _meta(doc_id: str) -> SourceRef:
    return SourceRef(
        number=0, id=doc_id, title=f"Nouveau {doc_id}", date="2026-12-01", source_type="flux-rss"
    )


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(
    data=st.data(),
    n_sources=st.integers(min_value=1, max_value=6),
    n_axes=st.integers(min_value=1, max_value=3),
    uncited_new=st.integers(min_value=0, max_value=3),
    first=st.booleans(),
)
def test_any_writer_answer_gives_a_news_section_citing_what_changed(
    data: st.DataObject, n_sources: int, n_axes: int, uncited_new: int, first: bool
) -> None:
    writer_input = _writer_input(n_sources, n_axes)
    dossier, _ = write_draft(DrawingClient(data), writer_input)
    cited_ids = [s.id for s in writer_input.sources]
    extra = [f"doc-new-{i}" for i in range(uncited_new)]  # new documents no analyst cited
    now = {i: "h-now" for i in [*cited_ids, *extra]}
    kept = data.draw(st.lists(st.sampled_from(cited_ids), unique=True))  # in the previous run too
    before = {i: data.draw(st.sampled_from(["h-now", "h-old"])) for i in kept} | {"doc-gone": "h"}
    points = frozenset(
        key_point_key(p.text) for s in dossier.sections for p in s.points if data.draw(st.booleans())
    )
    changes = compare_snapshots(None if first else _previous(before, points), sorted(now.items()))
    excluded = data.draw(st.lists(st.sampled_from(extra), unique=True)) if extra else []  # the plan left out
    changes = changes.planned(excluded)
    metadata = {i: _meta(i) for i in changes.touched}

    final = finalize_report(
        "Kestrel ?", dossier, writer_input.sources, writer_input.axes, changes=changes, metadata=metadata
    )

    plain = finalize_report("Kestrel ?", dossier, writer_input.sources, writer_input.axes)
    for name in MODEL_SECTIONS:  # the news section changes no number of the five sections
        assert split_sections(final.markdown)[name] == split_sections(plain.markdown)[name]
    order = section_order(final.markdown)
    assert order[0] == "Synthèse" and order[1].startswith(NEWS_SECTION)
    assert order[2:] == [*MODEL_SECTIONS[1:], "Sources"]
    assert section_order(without_news(final.markdown)) == [*MODEL_SECTIONS, "Sources"]
    body = final.markdown.split("\n## Sources\n")[0]
    assert invalid_citations(body, final.sources) == []
    assert set(cited_numbers(body)) == {s.number for s in final.sources}  # every listed source is cited
    assert [s.number for s in final.sources] == list(range(1, len(final.sources) + 1))
    news = split_sections(final.markdown)[order[1]]
    numbers = {s.id: s.number for s in final.sources}
    for doc_id in changes.touched:  # each new or changed document the plan read, cited in the section
        if doc_id in excluded:  # named, not cited: no analyst read it
            assert doc_id not in numbers and f"écarté par le plan : « Nouveau {doc_id} » ({doc_id})" in news
        else:
            assert f"[{numbers[doc_id]}]" in news
    if first:
        assert "Premier dossier" in news and order[1] == NEWS_SECTION
    else:
        assert order[1] == f"{NEWS_SECTION} depuis le 1er décembre 2026"
        assert "doc-gone" in news  # removed since


def test_no_change_says_so() -> None:
    changes = Changes(previous=_previous({"doc-01": "h"}))

    text, sources = render_news(changes, Dossier(), [], {})
    assert "0 document(s) nouveau(x), 0 modifié(s), 0 retiré(s)" in text
    assert "Aucun point clé nouveau" in text and sources == []


def test_an_unreadable_warehouse_gives_a_first_dossier_and_an_alert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import veille.tasks.news
    from veille.settings import Settings
    from veille.warehouse.errors import WarehouseError

    def broken(*_args: object) -> None:
        raise WarehouseError("runs/run_date=2026-12-01/x.parquet: not a Parquet file")

    monkeypatch.setattr(veille.tasks.news, "previous_run", broken)
    settings = Settings(corpus_dir=tmp_path / "corpus", warehouse_dir=tmp_path / "wh")
    changes = veille.tasks.news.what_changed.fn(settings, "r", [("doc-01", "h")])
    assert changes.previous is None
    assert [(a.code, a.severity) for a in changes.alerts] == [("news.previous_unreadable", "warning")]
    assert "not a Parquet file" in changes.alerts[0].message


def test_the_previous_run_is_read_back_from_the_warehouse(tmp_path: Path) -> None:
    """Two synthetic runs recorded for one corpus: the comparison reads the later completed one."""
    from veille.warehouse.previous import previous_run
    from veille.warehouse.synth import demo_warehouse

    demo_warehouse(tmp_path / "wh")
    from veille.warehouse.queries import query

    parquet = tmp_path / "wh" / "parquet"
    _, rows = query(
        parquet, "SELECT corpus_dir, run_id FROM runs WHERE status = 'completed' ORDER BY started_at DESC"
    )
    corpus, last = rows[0]
    found = previous_run(parquet, corpus, "not-a-run")
    assert found is not None and found.run_id == last
    _, docs = query(parquet, "SELECT doc_id, content_hash FROM documents WHERE run_id = ?", [last])
    assert found.documents == dict(docs)
    assert previous_run(parquet, "/elsewhere", "x") is None
    assert previous_run(tmp_path / "none", corpus, "x") is None
    assert (
        previous_run(parquet, corpus, last) is not None and previous_run(parquet, corpus, last).run_id != last
    )


def test_a_damaged_parquet_file_is_a_warehouse_error_naming_the_warehouse(tmp_path: Path) -> None:
    from veille.warehouse.errors import WarehouseError
    from veille.warehouse.previous import previous_run
    from veille.warehouse.queries import query
    from veille.warehouse.synth import demo_warehouse

    demo_warehouse(tmp_path / "wh")
    parquet = tmp_path / "wh" / "parquet"
    _, rows = query(parquet, "SELECT corpus_dir FROM runs LIMIT 1")
    for path in (parquet / "documents").rglob("*.parquet"):
        path.write_bytes(b"not parquet at all")
    with pytest.raises(WarehouseError, match="wh/parquet"):
        previous_run(parquet, rows[0][0], "x")
