"""Offline writer, critic, reviser and judge, checked against the project's own arbiter and grid."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from veille.arbiter import arbitrate
from veille.backends import build_client
from veille.citations import invalid_citations
from veille.dossier import (
    AxisSection,
    CitedText,
    Dossier,
    KeyPoint,
    ledger_entries,
    render_body,
)
from veille.grid import Grid
from veille.offline.critic import criticise
from veille.offline.judge import judge
from veille.offline.reviser import revise
from veille.offline.writer import write
from veille.roles.critic import CriticInput, evaluation_schema
from veille.roles.judge import JudgeInput, verdict_schema
from veille.roles.reviser import REVISER, ReviserInput
from veille.roles.writer import WRITER, NumberedContradiction, NumberedFinding, SourceRef, WriterInput
from veille.run.folder import new_run_id
from veille.settings import Settings
from veille.steps.headings import axis_titles
from veille.steps.review import review_loop
from veille.textstats import MODEL_SECTIONS, count_words, section_order, sentences, split_sections, words

CRITERIA = {
    "clarity": "Phrases courtes, une idée par phrase.",
    "concreteness": "Des chiffres avec leur unité.",
    "citations": "Chaque fait suivi du numéro de sa source.",
    "tone": "Neutre et factuel.",
    "correctness": "Orthographe et chiffres exacts.",
}
MENTIONS = ["Sauvia", "Barzo", "Quillon"]
QUESTIONS = {"st-1": "Performances ?", "st-2": "Coût ?", "st-3": "Sécurité ?"}
AXES = axis_titles(QUESTIONS)
FORBIDDEN = ["révolutionnaire", "leader", "incroyable"]


def _grid(**overrides: object) -> Grid:
    values: dict[str, object] = {
        "criteria": CRITERIA,
        "min_words": 120,
        "max_words": 400,
        "max_sentence_words": 25,
        "forbidden_words": tuple(FORBIDDEN),
        "mandatory_mentions": tuple(MENTIONS),
    }
    values.update(overrides)
    return Grid.model_validate(values)


def _sources(n: int) -> list[SourceRef]:
    return [
        SourceRef(number=i, id=f"bk-{i:02d}", title=f"Document {i} sur la sauvegarde", date="2026-05-01",
                  source_type="compte-rendu")
        for i in range(1, n + 1)
    ]  # fmt: skip


STATEMENTS = [
    (
        "st-1",
        "Débit mesuré pour Sauvia : 2,1 Go/s par serveur de sauvegarde sur notre jeu de référence.",
        [2],
    ),
    ("st-1", "Débit mesuré pour Barzo : 2,6 Go/s par serveur de sauvegarde sur notre jeu de référence.", [2]),
    (
        "st-1",
        "La restauration complète de 10 To prend 3 heures avec Barzo, 4 heures avec Sauvia et 5 heures avec "
        "Quillon, selon trois passes de sauvegarde complète sur notre jeu de référence de 40 To.",
        [2],
    ),
    ("st-2", "Licence Barzo : 110 EUR HT par téraoctet protégé et par an, support inclus.", [4]),
    ("st-2", "Licence Sauvia : 120 EUR HT par téraoctet protégé et par an [7].", [5]),  # [7] is an orphan
    ("st-2", "Support entreprise Sauvia : 15 000 EUR HT par an.", [5]),
    ("st-3", "Quillon 4.2.1 corrige la faille QSA-2026-01 du chiffrement des sauvegardes.", [6]),
    ("st-3", "Les sauvegardes de Quillon sont immuables pendant 30 jours par défaut.", [3]),
    ("st-1", "Débit annoncé pour Sauvia : 4,0 Go/s par serveur de sauvegarde.", [1]),  # superseded by [2]
]
CONTRADICTION = NumberedContradiction(
    subtask_id="st-1",
    retained=[2],
    rejected=[1],
    reason="la mesure interne du 2026-06-10 prime sur la fiche fournisseur du 2026-02-01 : source plus "
    "fiable et plus récente ; 2,1 Go/s retenu contre 4,0 Go/s",
)


def _render(dossier: Dossier) -> str:
    return render_body(dossier, AXES)


def _draft(data: WriterInput | None = None) -> str:
    return _render(write(data or _writer_input()))


def _writer_input(**overrides: object) -> WriterInput:
    values: dict[str, object] = {
        "request_title": "Outil de sauvegarde des serveurs en 2027",
        "request": "Comparer Sauvia, Barzo et Quillon.",
        "questions": QUESTIONS,
        "axes": AXES,
        "findings": [NumberedFinding(subtask_id=s, statement=t, sources=n) for s, t, n in STATEMENTS],
        "contradictions": [CONTRADICTION],
        "open_questions": [
            "Les documents abordent « consommation électrique » sans fait précis exploitable."
        ],
        "missing_axes": [],
        "sources": _sources(6),
        "mandatory_mentions": MENTIONS,
        "min_words": 120,
        "max_words": 400,
        "max_sentence_words": 25,
    }
    values.update(overrides)
    return WriterInput.model_validate(values)


def _critic_input(draft: str, grid: Grid, source_count: int = 6) -> CriticInput:
    return CriticInput(
        axes=list(AXES.values()),
        contradictions=1,
        draft=draft,
        criteria=dict(grid.criteria),
        request="Comparer Sauvia, Barzo et Quillon.",
        source_count=source_count,
        min_words=grid.min_words,
        max_words=grid.max_words,
        max_sentence_words=grid.max_sentence_words,
        forbidden_words=list(grid.forbidden_words),
        mandatory_mentions=list(grid.mandatory_mentions),
    )


# --- writer --------------------------------------------------------------------------------------


def test_writer_draft_meets_every_hard_rule_of_the_arbiter() -> None:
    data = _writer_input()
    structure = write(data)
    WRITER.schema_for(data).model_validate(structure.model_dump())  # the per-request schema
    draft = _render(structure)
    assert section_order(draft) == list(MODEL_SECTIONS)
    assert 3 <= len(sentences(split_sections(draft)["Synthèse"])) <= 5
    key_points = split_sections(draft)["Points clés"]
    assert [line[4:] for line in key_points.splitlines() if line.startswith("### ")] == list(AXES.values())
    for line in key_points.splitlines():
        if line.startswith("- "):
            assert re.search(r"(\[\d+\])[\s.]*$", line), line
    assert invalid_citations(draft, data.sources) == []  # the [7] of a statement was dropped
    assert all(len(words(s)) <= 25 for s in sentences(draft))
    assert all(m in draft for m in MENTIONS)
    # Given perfect scores, the project's arbiter validates it: only the critic can fail it.
    verdict = arbitrate(dict.fromkeys(CRITERIA, 5), draft, _grid(), data.sources)
    assert verdict.valid, verdict.instructions


def test_writer_states_the_contradiction_and_leaves_the_rejected_figure_out_of_the_key_points() -> None:
    draft = _draft()
    sections = split_sections(draft)
    ((retained, rejected, line),) = ledger_entries(sections["Contradictions tranchées"])
    assert (retained, rejected) == ([2], [1]) and "2,1 Go/s retenu contre 4,0 Go/s" in line
    assert "Sauvia" in line and "plus fiable et plus récente" in line
    assert "4,0 Go/s" not in sections["Points clés"] and "2,1 Go/s" in sections["Points clés"]


def test_writer_recommendation_is_extractive_and_names_the_option_each_axis_favours() -> None:
    advice = split_sections(_draft())["Recommandation"]
    assert "extractive" in advice
    # Rates per second: higher is better; prices: lower is better; figures from retained sources.
    assert re.search(r"Performances : .*Sauvia 2,1 Go/s.*Barzo 2,6 Go/s.* favorisent Barzo", advice), advice
    assert re.search(r"Coût : .*Sauvia 120 EUR.*Barzo 110 EUR.* favorisent Barzo", advice), advice
    assert "4,0 Go/s" not in advice


def test_writer_compares_the_options_the_request_names_not_its_mandatory_mentions() -> None:
    """``options`` (the request's terms) decide what the recommendation compares; a mandatory
    mention that is no option (« coût sur 3 ans ») compares nothing."""
    data = _writer_input(mandatory_mentions=["coût sur 3 ans"], options=MENTIONS)
    advice = split_sections(_draft(data))["Recommandation"]
    assert re.search(r"Coût : .*Sauvia 120 EUR.*Barzo 110 EUR.* favorisent Barzo", advice), advice
    synthesis = split_sections(_draft(data))["Synthèse"]
    assert "compare Sauvia, Barzo et Quillon" in synthesis and "compare coût" not in synthesis
    no_options = split_sections(_draft(_writer_input(mandatory_mentions=["coût sur 3 ans"])))[
        "Recommandation"
    ]
    assert "favorisent" not in no_options


def _with_statements(*statements: tuple[str, str, list[int]]) -> WriterInput:
    return _writer_input(
        findings=[NumberedFinding(subtask_id=s, statement=t, sources=n) for s, t, n in statements],
        contradictions=[],
    )


def test_recommendation_compares_one_rate_not_the_items_it_counts() -> None:
    """« EUR par téraoctet » compares with the same rate only: a yearly support total in EUR is
    another item, and the rate's row is the one shown."""
    advice = split_sections(
        _draft(
            _with_statements(
                ("st-2", "Licence Barzo : 110 EUR HT par téraoctet protégé et par an, support inclus.", [4]),
                ("st-2", "Licence Sauvia : 120 EUR par téraoctet protégé et par an.", [5]),
                ("st-2", "Sauvia — Support entreprise : 15 000 EUR HT, première année.", [5]),
                ("st-2", "Barzo — Mise en service : 8 000 EUR HT, première année.", [4]),
            )
        )
    )["Recommandation"]
    assert re.search(r"Coût : Sauvia 120 EUR, Barzo 110 EUR ; ces chiffres favorisent Barzo", advice), advice
    assert "15 000 EUR" not in advice and "8 000 EUR" not in advice  # a support and a set-up


def test_recommendation_leaves_out_an_option_whose_values_tie() -> None:
    """A price grid's tiers (three prices of one option, worded alike): which one compares with the
    other option's price is not in the text, so that option is left out rather than guessed."""
    tiers = [
        ("st-2", f"Barzo — Palier {name} : prix mensuel {price} EUR par mois.", [4])
        for name, price in (("S", "240"), ("M", "1 480"), ("L", "3 650"))
    ]
    advice = split_sections(
        _draft(
            _with_statements(("st-2", "Sauvia — Abonnement : prix mensuel 2 100 EUR par mois.", [5]), *tiers)
        )
    )["Recommandation"]
    assert "Barzo 240 EUR" not in advice and "favorisent" not in advice, advice
    # One tier only: it compares.
    one = split_sections(
        _draft(
            _with_statements(
                ("st-2", "Sauvia — Abonnement : prix mensuel 2 100 EUR par mois.", [5]), tiers[1]
            )
        )
    )["Recommandation"]
    assert re.search(r"Sauvia 2 100 EUR, Barzo 1 480 EUR ; ces chiffres favorisent Barzo", one), one


def test_writer_keeps_figures_and_cites_only_numbers() -> None:
    draft = _draft(_writer_input())
    for figure in ("2,1 Go/s", "2,6 Go/s", "110 EUR", "30 jours", "4,0 Go/s"):
        assert figure in draft
    assert "bk-" not in draft and "## Sources" not in draft


def test_writer_trims_to_the_word_budget_keeping_each_subtask() -> None:
    many = [
        NumberedFinding(subtask_id=f"st-{k % 3 + 1}", statement=f"Constat numéro {k} : le volume atteint {k} To en 2027.",
                        sources=[k % 6 + 1])
        for k in range(1, 80)
    ]  # fmt: skip
    data = _writer_input(findings=many, max_words=300)
    draft = _draft(data)
    assert count_words(draft) <= 300
    body = split_sections(draft)["Points clés"]
    for k in (1, 2, 3):  # every sub-task keeps at least one finding
        assert any(f"Constat numéro {n} " in body for n in range(1, 80) if n % 3 + 1 == k)


def test_writer_leaves_out_superlative_and_promotional_statements() -> None:
    extra = [
        NumberedFinding(
            subtask_id="st-2", statement="Barzo propose la licence la moins chère, à 110 EUR.", sources=[4]
        ),
        NumberedFinding(
            subtask_id="st-2", statement="Sauvia est un outil révolutionnaire à 120 EUR.", sources=[5]
        ),
    ]
    draft = _draft(_writer_input(findings=[*_writer_input().findings, *extra]))
    assert "la moins chère" not in draft and "révolutionnaire" not in draft


def test_writer_names_every_missing_axis() -> None:
    axis = "Que disent les documents sur l'exploitation de Sauvia, Barzo et Quillon ?"
    draft = _draft(_writer_input(missing_axes=[axis]))
    assert axis in split_sections(draft)["Ce qui reste incertain"]


def test_writer_output_is_stable() -> None:
    assert write(_writer_input()) == write(_writer_input())


# --- critic --------------------------------------------------------------------------------------


def test_critic_gives_a_compliant_draft_full_marks() -> None:
    grid = _grid()
    draft = _draft(_writer_input())
    evaluation = criticise(_critic_input(draft, grid))
    evaluation_schema(grid.criteria).model_validate(evaluation)
    scores = [evaluation[c] for c in CRITERIA]
    assert sum(scores) / len(scores) >= 4.8, evaluation
    verdict = arbitrate(evaluation, draft, grid, _sources(6))
    assert verdict.valid, verdict.instructions


@pytest.mark.parametrize(
    ("defect", "criterion"),
    [
        ("long", "clarity"),
        ("orphan", "citations"),
        ("uncited", "citations"),
        ("forbidden", "tone"),
        ("no_section", "correctness"),
        ("no_mention", "correctness"),
        ("no_figures", "concreteness"),
        ("superlative", "tone"),
    ],
)
def test_critic_lowers_the_criterion_a_defect_breaks(defect: str, criterion: str) -> None:
    grid = _grid()
    good = _draft(_writer_input())
    bad = {
        "long": good.replace(
            "Licence Barzo",
            "Licence Barzo, " + " ".join(["selon une grille qui comprend de nombreux termes"] * 4) + ",",
        ),
        "orphan": good.replace("[4]", "[9]"),
        "uncited": re.sub(r"\s*(\[\d+\])+\.$", ".", good, count=3, flags=re.MULTILINE),
        "forbidden": good.replace("Licence Barzo", "Licence leader Barzo"),
        "no_section": good.replace("## Ce qui reste incertain", "## Autres remarques"),
        "no_mention": good.replace("Quillon", "l'outil"),
        "no_figures": re.sub(r"\d", "", good),
        "superlative": good.replace("Licence Barzo :", "Licence Barzo, la moins chère :"),
    }[defect]
    before = criticise(_critic_input(good, grid))
    after = criticise(_critic_input(bad, grid))
    assert after[criterion] < before[criterion], (defect, after)
    assert after["remarks"], "a defect must come with an actionable remark"


def test_critic_remark_quotes_the_long_sentence() -> None:
    grid = _grid(max_sentence_words=8)
    evaluation = criticise(_critic_input(_draft(_writer_input()), grid))
    assert any(r.startswith("La phrase « ") and "mots (8 au plus)" in r for r in evaluation["remarks"])


def test_critic_scores_any_criterion_name() -> None:
    grid = _grid(criteria={"lisibilite": "Se lit facilement.", "ton": "Neutre."})
    evaluation = criticise(_critic_input(_draft(_writer_input()), grid))
    evaluation_schema(grid.criteria).model_validate(evaluation)
    assert set(evaluation) == {"lisibilite", "ton", "remarks"}


# --- reviser -------------------------------------------------------------------------------------


def test_critic_does_not_give_full_marks_to_a_flat_list() -> None:
    """The structure is measured: key points without their axis sections, no ledger although the
    analysts noted a contradiction, no recommendation."""
    grid = _grid()
    good = _draft()
    flat = "\n".join(line for line in good.splitlines() if not line.startswith("### "))
    sections = split_sections(flat)
    flat = flat.replace(sections["Contradictions tranchées"], "Rien à signaler.")
    flat = flat.replace(sections["Recommandation"], "")
    before, after = criticise(_critic_input(good, grid)), criticise(_critic_input(flat, grid))
    assert after["correctness"] < before["correctness"] == 5
    assert sum(after[c] for c in CRITERIA) / len(CRITERIA) < grid.mean_min
    assert any("liste plate" in r for r in after["remarks"])
    assert any("contradiction" in r for r in after["remarks"])


def _broken() -> Dossier:
    return Dossier(
        synthesis=[CitedText(text="Cet outil leader compare les offres ! Barzo domine.")],
        sections=[
            AxisSection(axis="st-1", points=[
                KeyPoint(text="Débit mesuré pour Sauvia : 2,1 Go/s sur notre jeu de référence [2].", citations=[2]),
            ]),
            AxisSection(axis="st-2", points=[
                # Too long, with a clause boundary (« ; ») where the reviser may cut it (it never
                # cuts at a comma: tests/test_offline_reviser_cuts.py).
                KeyPoint(text="Licence Barzo : 110 EUR HT par téraoctet protégé et par an, support inclus ; la "
                         "grille est publiée par l'éditeur au mois de septembre pour toutes les nouvelles "
                         "souscriptions de l'année 2027", citations=[4, 12]),
                KeyPoint(text="Un fait sans aucune source.", citations=[]),
            ]),
            AxisSection(axis="st-3", points=[
                KeyPoint(text="Quillon offre la meilleure immutabilité, 30 jours", citations=[3]),
                KeyPoint(text="Quillon 4.2.1 corrige la faille QSA-2026-01", citations=[6]),
            ]),
        ],
        uncertainties=[CitedText(text="Le coût du support de Quillon n'est pas publié.")],
        recommendation=[CitedText(text="Barzo est le moins cher par téraoctet", citations=[4])],
    )  # fmt: skip


def test_reviser_repairs_a_draft_the_arbiter_rejects(tmp_path: Path) -> None:
    """Through the project's review loop (critic -> arbiter -> reviser -> critic -> arbiter) over a
    real client on the offline engine: one revision must turn a rejected draft into a valid one."""
    grid = _grid(min_words=80)
    sources = _sources(6)
    settings = Settings.from_params(backend="offline", use_cache=False, warehouse=str(tmp_path))
    with build_client(settings, run_id=new_run_id()) as client:
        outcome = review_loop(
            client,
            _broken(),
            grid=grid,
            sources=sources,
            request="Comparer Sauvia, Barzo et Quillon.",
            max_rounds=2,
            axes=AXES,
        )
        roles = [r.role for r in client.journal.records()]
    assert roles == ["critic", "reviser", "critic"]
    rejected, repaired = outcome.rounds
    assert not rejected.valid and rejected.instructions
    assert rejected.draft == _render(rejected.structure)  # the critic saw the structure rendered
    # Code removed the orphan [12] and the uncited point before the critic saw it, with alerts.
    assert "[12]" not in rejected.draft and "Un fait sans aucune source" not in rejected.draft
    codes = {a.code for a in outcome.alerts}
    assert {"report.orphan_citation", "report.uncited_point"} <= codes
    revised = outcome.final_draft
    assert repaired.draft == revised == _render(outcome.final_dossier)
    assert "leader" not in revised and "!" not in revised
    assert "la meilleure" not in revised
    assert section_order(revised) == list(MODEL_SECTIONS)
    assert "110 EUR" in revised and "2,1 Go/s" in revised
    assert outcome.validated and repaired.valid, repaired.instructions


def test_reviser_uses_mentions_and_words_quoted_in_instructions() -> None:
    grid = _grid(mandatory_mentions=(), forbidden_words=())
    data = _writer_input(mandatory_mentions=[])
    draft = write(data)
    for section in draft.sections:
        for point in section.points:
            point.text = point.text.replace("Licence Barzo", "Licence phare Barzo")
    reviser_input = ReviserInput(
        draft=draft,
        axes=AXES,
        instructions=[
            "Mot interdit : « phare » ; remplacez-le par une formulation neutre et factuelle.",
            "Mention obligatoire absente : « Plan de reprise » ; citez-la explicitement dans le texte.",
        ],
        sources=_sources(6),
        min_words=grid.min_words,
        max_words=grid.max_words,
    )
    structure = revise(reviser_input)
    REVISER.schema_for(reviser_input).model_validate(structure.model_dump())  # the same schema
    revised = _render(structure)
    assert "phare" not in revised
    assert "Plan de reprise" in revised
    assert 3 <= len(sentences(split_sections(revised)["Synthèse"])) <= 5


def test_reviser_extends_a_short_draft_with_uncited_sources() -> None:
    grid = _grid(min_words=150)
    short = Dossier(
        synthesis=[CitedText(text=t) for t in ("Un.", "Deux.", "Trois.")],
        sections=[AxisSection(axis="st-2", points=[KeyPoint(text="Licence Barzo : 110 EUR", citations=[4])])],
        uncertainties=[CitedText(text="Rien.")],
        recommendation=[CitedText(text="Barzo.", citations=[4])],
    )
    revised = _render(
        revise(ReviserInput(draft=short, axes=AXES, instructions=[], sources=_sources(6), min_words=150,
                            max_words=400))
    )  # fmt: skip
    assert count_words(_render(short)) < count_words(revised)
    # Extended with the sources not cited yet, each cited, until the minimum or the sources run out.
    assert count_words(revised) >= grid.min_words or all(f"[{n}]" in revised for n in range(1, 7))
    assert "Document 1 sur la sauvegarde" in revised
    assert invalid_citations(revised, _sources(6)) == []


# --- judge ---------------------------------------------------------------------------------------


def test_judge_prefers_the_response_closer_to_the_reference() -> None:
    reference = _draft(_writer_input())
    close = reference.replace("## Synthèse", "## Synthèse\n")
    partial = (
        "## Synthèse\n\nSauvia et Barzo sont comparés.\n\n## Points clés\n\n- Licence Barzo : 110 EUR [4].\n"
    )
    off = "Je pense que Quillon est incroyable !!! Le meilleur du marché."
    verdict = judge(
        JudgeInput(prompt="Comparer les outils.", reference=reference, responses=[close, partial, off, ""])
    )
    verdict_schema(4).model_validate(verdict.model_dump())
    by_index = dict(enumerate(verdict.by_response()))
    assert sorted(by_index) == [0, 1, 2, 3]

    def total(i: int) -> int:
        s = by_index[i]
        return s.accuracy + s.usefulness + s.tone + s.format

    assert total(0) > total(1) > total(3)
    assert by_index[2].tone < by_index[0].tone
    assert all(s.justification for s in verdict.by_response())
