"""The judge on the parts of the report that changed (issue 40 item 3, veille.graders.parts).

A report is cut into its axes and its conclusions, every line in exactly one part; a part graded on
a validated night is carried over on a later one when its text, citations read as document ids, is
unchanged (whatever numbers tonight gives the sources), and judged again otherwise; the report's
score is the words-weighted mean of its parts'; a night that revised its draft is judged whole.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from testkit.scripted import ScriptedModel
from tests.test_graders_dossier import _judge_by_length, _run_folder
from veille.backends import build_client
from veille.corpus.reference import Reference, load_reference
from veille.graders.dossier import grade_dossier
from veille.graders.judge import JudgeGrader
from veille.graders.parts import CONCLUSIONS, JudgedParts, PartJudging, judge_by_parts, report_parts
from veille.settings import Settings
from veille.textstats import count_words

_WORDS = st.sampled_from(["Kestrel", "débit", "latence", "mesuré", "coût", "[1]", "[2, 3]", "GPU"])
_LINE = st.lists(_WORDS, min_size=1, max_size=6).map(lambda w: "- " + " ".join(w) + ".")


@st.composite
def reports(draw: st.DrawFn) -> tuple[str, list[str]]:
    titles = draw(
        st.lists(st.sampled_from(["Débit", "Latence", "Coût", "Sécurité"]), unique=True, max_size=4)
    )
    lines = ["## Synthèse", *draw(st.lists(_LINE, max_size=3)), "## Points clés"]
    for title in titles:
        lines += [f"### {title}", *draw(st.lists(_LINE, min_size=1, max_size=3))]
    lines += ["## Recommandation", *draw(st.lists(_LINE, max_size=2))]
    return "\n".join(lines), titles


@settings(max_examples=200, deadline=None)
@given(reports())
def test_every_line_of_the_report_is_in_exactly_one_part(report: tuple[str, list[str]]) -> None:
    body, titles = report
    parts = report_parts(body)
    assert list(parts) == [*(f"axe:{t}" for t in titles), CONCLUSIONS]
    lines = [line for text in parts.values() for line in text.splitlines()]
    assert sorted(lines) == sorted(line for line in body.splitlines())
    for title in titles:  # an axis part is its heading and its points, nothing of another section
        assert parts[f"axe:{title}"].startswith(f"### {title}")
        assert "## " not in parts[f"axe:{title}"].replace(f"### {title}", "")


REPORT = """## Synthèse
- Kestrel mène sur le débit [1].

## Points clés

### Débit
- Kestrel atteint 2 100 tokens/s [1].

### Latence
- Orvet garde la latence la plus basse [2].

## Recommandation
- Retenir Kestrel [1]."""
SOURCES = [{"number": 1, "id": "doc-01"}, {"number": 2, "id": "doc-02"}]


def _judged(tmp_path: Path, body: str, sources: list[dict[str, object]], *, keep: bool = True):  # type: ignore[no-untyped-def]
    model = ScriptedModel(function=_judge_by_length)
    client = build_client(Settings(warehouse_dir=tmp_path / "wh", use_cache=False), run_id="r", model=model)
    how = PartJudging(JudgedParts(tmp_path / "judged.sqlite"), "judge-key", "run-1")
    try:
        final, parts = judge_by_parts(
            JudgeGrader(client, criteria="dossier_part"),
            "Demande ?",
            "Référence.",
            body,
            sources,
            how,
            keep=keep,
        )
    finally:
        client.close()
    asked = [list(r.input.responses) for r in model.requests_for("judge")]
    return final, {p.key: p for p in parts}, asked


def test_unchanged_parts_are_carried_over_and_changed_ones_judged(tmp_path: Path) -> None:
    final, parts, asked = _judged(tmp_path, REPORT, SOURCES)
    assert len(asked) == 1 and len(asked[0]) == 3  # two axes and the conclusions, one call
    assert not any(p.carried_over for p in parts.values())
    assert final.details["carried_over"] == []

    # The same report, its sources numbered the other way round: nothing to judge again.
    swapped = REPORT.replace("[1]", "[x]").replace("[2]", "[1]").replace("[x]", "[2]")
    again, carried, asked = _judged(
        tmp_path, swapped, [{"number": 2, "id": "doc-01"}, {"number": 1, "id": "doc-02"}]
    )
    assert asked == [] and all(p.carried_over for p in carried.values())
    assert again.score == final.score
    assert {k: p.result.score for k, p in carried.items()} == {k: p.result.score for k, p in parts.items()}
    assert all(p.result.details["from_run"] == "run-1" for p in carried.values())

    # One axis rewritten: that axis alone is judged; the others keep their scores.
    changed = REPORT.replace(
        "Orvet garde la latence la plus basse [2].", "Orvet baisse sa latence de 9 % [2]."
    )
    _, mixed, asked = _judged(tmp_path, changed, SOURCES)
    assert asked == [[report_parts(changed)["axe:Latence"]]]
    assert {k for k, p in mixed.items() if not p.carried_over} == {"axe:Latence"}

    # A citation moved to another document is a change (id space), not a renumbering.
    moved = REPORT.replace("2 100 tokens/s [1]", "2 100 tokens/s [2]")
    _, moved_parts, asked = _judged(tmp_path, moved, SOURCES)
    assert {k for k, p in moved_parts.items() if not p.carried_over} == {"axe:Débit"}


def test_the_report_score_is_the_words_weighted_mean_of_its_parts(tmp_path: Path) -> None:
    final, parts, _ = _judged(tmp_path, REPORT, SOURCES)
    texts = report_parts(REPORT)
    words = {k: count_words(t) for k, t in texts.items()}
    assert all(p.result.score is not None for p in parts.values())
    mean = sum(parts[k].result.score * words[k] for k in texts) / sum(words.values())  # type: ignore[operator]
    assert final.score is not None and abs(final.score - mean) < 1e-9


def test_a_night_not_validated_keeps_no_score(tmp_path: Path) -> None:
    _judged(tmp_path, REPORT, SOURCES, keep=False)
    _, parts, asked = _judged(tmp_path, REPORT, SOURCES)
    assert len(asked) == 1 and not any(p.carried_over for p in parts.values())


def _reference(bundled_corpus: Path) -> Reference:
    ref = load_reference(bundled_corpus)
    assert ref is not None
    return ref


def test_grades_json_marks_the_carried_parts_and_a_revised_night_is_judged_whole(
    tmp_path: Path, bundled_corpus: Path
) -> None:
    reference = _reference(bundled_corpus)
    model = ScriptedModel(function=_judge_by_length)
    client = build_client(Settings(warehouse_dir=tmp_path / "wh", use_cache=False), run_id="r", model=model)
    how = PartJudging(JudgedParts(tmp_path / "judged.sqlite"), "judge-key", "run-1")
    try:
        one = _run_folder(tmp_path / "one", reference, rounds=1)  # validated on its first round
        review = json.loads((one / "review.json").read_text(encoding="utf-8"))
        # The report is its one round's draft, finalised (here: a line more): judged by parts.
        draft = review["rounds"][0]["draft"]
        (one / "report.md").write_text(draft + "\n\n## Nouveautés\n- Rien de neuf.", encoding="utf-8")
        review["validated"] = True
        (one / "review.json").write_text(json.dumps(review), encoding="utf-8")
        first = grade_dossier(one, reference, request="Demande ?", client=client, parts=how)
        second = grade_dossier(one, reference, request="Demande ?", client=client, parts=how)
        revised = _run_folder(tmp_path / "two", reference, rounds=2)  # its rounds differ from the report
        whole = grade_dossier(revised, reference, request="Demande ?", client=client, parts=how)
    finally:
        client.close()
    parts_one = [g for g in first if g.target.startswith("part:")]
    assert parts_one and not any(g.carried_over for g in parts_one)
    parts_two = [g for g in second if g.target.startswith("part:")]
    assert [g.target for g in parts_two] == [g.target for g in parts_one] and all(
        g.carried_over for g in parts_two
    )
    judge = {g.target: g for g in second if g.grader == "judge"}
    assert judge["round-1"].score == judge["final"].score  # its one round: the same dossier
    assert judge["final"].score == {g.target: g for g in first if g.grader == "judge"}["final"].score
    assert not [g for g in whole if g.target.startswith("part:")]  # rounds compared with the report, whole
    assert {g.target for g in whole if g.grader == "judge"} == {"round-1", "round-2", "final"}
    assert [len(r.input.responses) for r in model.requests_for("judge")][1:] == [3]  # 2nd night: no call
