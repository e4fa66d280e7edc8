"""The arbiter (seed 000): scores and hard checks into full-sentence instructions."""

from __future__ import annotations

from veille.arbiter import arbitrate, long_sentences
from veille.grid import Grid
from veille.roles.writer import SourceRef
from veille.textstats import count_words, sentences

CRITERIA = {
    "clarity": "Phrases courtes, une idée par phrase.",
    "concreteness": "Des chiffres avec leur unité.",
    "citations": "Chaque fait suivi de sa source.",
    "tone": "Neutre et factuel.",
    "correctness": "Orthographe irréprochable.",
}
GRID = Grid(
    criteria=CRITERIA,
    min_words=40,
    max_words=300,
    forbidden_words=("leader", "révolutionnaire"),
    mandatory_mentions=("Kestrel",),
)
SOURCES = [
    SourceRef(number=n, id=f"doc-{n}", title=f"T{n}", date="2026-01-01", source_type="note") for n in (1, 2)
]
PERFECT = dict.fromkeys(CRITERIA, 5)

# A draft as code renders it (veille.dossier.render_body): the arbiter checks the rendered text.
VALID_DRAFT = """## Synthèse

Kestrel atteint 1 180 tokens/s au banc d'essai [1]. Tamaris coûte 9 000 EUR par GPU et par an [2]. Le choix dépend du budget.

## Points clés

### st-1 — Performances

- Kestrel tient la charge de référence sans redémarrage pendant sept jours [1].
- Les deux mesures datent de juillet 2026 [1][2].

### st-2 — Coût

- La licence de Tamaris est facturée par GPU et par an [2].

## Contradictions tranchées

- Kestrel, axe st-1 — retenu : [1] ; écarté : [2]. La mesure interne est plus récente.

## Ce qui reste incertain

- Le coût du support de Kestrel n'est pas publié.

## Recommandation

Le débit mesuré favorise Kestrel [1].
"""


def _verdict(evaluation, draft=VALID_DRAFT, grid=GRID, sources=SOURCES):
    return arbitrate(evaluation, draft, grid, sources)


def test_valid_draft_with_perfect_scores_is_valid_and_remarks_are_ignored() -> None:
    verdict = _verdict({**PERFECT, "remarks": ["On pourrait ajouter un tableau."]})
    assert verdict.valid, verdict.instructions
    assert verdict.instructions == []
    assert verdict.mean == 5.0
    assert verdict.word_count == count_words(VALID_DRAFT)


def test_seed_example_all_scores_at_least_4_but_mean_4_4_gives_four_instructions() -> None:
    remarks = [
        "Corriger l'élision dans « en cas de incident ».",
        "Préciser l'unité du débit.",
        "Supprimer la répétition de « mesure ».",
    ]
    evaluation = {
        "clarity": 4,
        "concreteness": 5,
        "citations": 5,
        "tone": 4,
        "correctness": 4,
        "remarks": remarks,
    }
    verdict = _verdict(evaluation)
    assert not verdict.valid
    assert len(verdict.instructions) == 4
    assert verdict.instructions[0].startswith("Moyenne : 4.4/5, il faut au moins 4.8/5.")
    assert verdict.instructions[1:] == remarks


def test_missing_score_counts_zero_and_instruction_restates_the_criterion() -> None:
    evaluation = {k: v for k, v in PERFECT.items() if k != "tone"}
    verdict = _verdict(evaluation)
    assert not verdict.valid
    assert verdict.scores["tone"] == 0
    assert verdict.mean == 4.0
    tone = [i for i in verdict.instructions if "« tone »" in i]
    assert len(tone) == 1 and CRITERIA["tone"] in tone[0] and "0/5" in tone[0]


def test_low_score_instruction_is_a_sentence_with_the_definition() -> None:
    verdict = _verdict({**PERFECT, "clarity": 3})
    first = verdict.instructions[0]
    assert first.startswith("Critère « clarity » : note 3/5, il faut au moins 4/5.")
    assert first.endswith(CRITERIA["clarity"])


def test_remarks_are_added_only_when_the_grid_fails() -> None:
    remarks = ["Remarque A.", "Remarque B."]
    assert _verdict({**PERFECT, "remarks": remarks}).instructions == []
    failing = _verdict({**PERFECT, "clarity": 2, "remarks": remarks})
    assert failing.instructions[-2:] == remarks


def test_long_sentence_fails_and_is_quoted_by_its_start() -> None:
    long_one = (
        "Kestrel affiche un débit élevé sur notre charge de référence mais il redémarre parfois quand "
        "le cache mémoire sature au bout de plusieurs heures de charge continue en production réelle [1]."
    )
    assert len(long_one.split()) - 1 >= 30  # 30 words or more, citation marker excluded
    draft = VALID_DRAFT.replace("- Les deux mesures datent de juillet 2026 [1][2].", f"- {long_one}")
    verdict = _verdict(PERFECT, draft=draft)
    assert not verdict.valid
    long = [i for i in verdict.instructions if i.lower().startswith("phrase trop longue")]
    assert len(long) == 1
    assert "« Kestrel affiche un débit élevé sur notre charge" in long[0]
    assert long_sentences(draft, 25)[0][0] > 25


def test_sentences_split_on_punctuation_and_lines() -> None:
    assert sentences("## Titre\n\nUn. Deux ! Trois ?\n- Puce [1]") == ["Un.", "Deux !", "Trois ?", "Puce"]
    assert count_words("L'article dit c'est-à-dire 12 000 [3].") == 5


def test_word_range_forbidden_words_and_mandatory_mentions_are_hard_checks() -> None:
    short = _verdict(PERFECT, grid=GRID.model_copy(update={"min_words": 500, "max_words": 900}))
    n = count_words(VALID_DRAFT)
    assert f"Longueur : {n} mots, il en faut entre 500 et 900." in short.instructions
    draft = VALID_DRAFT.replace("Le choix dépend du budget.", "Kestrel est le leader du marché.")
    verdict = _verdict(PERFECT, draft=draft)
    assert any("« leader »" in i for i in verdict.instructions)
    ok = _verdict(PERFECT, draft=VALID_DRAFT.replace("Le choix dépend du budget.", "Le leadership compte."))
    assert ok.valid, ok.instructions  # whole words only
    no_mention = _verdict(PERFECT, draft=VALID_DRAFT.replace("Kestrel", "Le moteur A"))
    assert any("Mention obligatoire absente : « Kestrel »" in i for i in no_mention.instructions)


def test_orphan_citations_fail_even_with_perfect_scores() -> None:
    verdict = _verdict(PERFECT, draft=VALID_DRAFT.replace("[2].", "[5]."))
    assert not verdict.valid
    assert any(i.startswith("Citations orphelines : [5]") for i in verdict.instructions)


def test_missing_or_extra_sections_and_uncited_bullets_are_hard_checks() -> None:
    no_uncertain = VALID_DRAFT.split("## Ce qui reste incertain")[0]
    verdict = _verdict(PERFECT, draft=no_uncertain)
    assert any("Section manquante : « ## Ce qui reste incertain »" in i for i in verdict.instructions)
    with_sources = _verdict(PERFECT, draft=VALID_DRAFT + "\n## Sources\n\n1. doc-1\n")
    assert any("## Sources" in i for i in with_sources.instructions)
    uncited = _verdict(
        PERFECT, draft=VALID_DRAFT.replace("sans redémarrage pendant sept jours [1].", "sans redémarrage.")
    )
    assert any(i.startswith("Puce sans numéro de source final") for i in uncited.instructions)
    two_sentences = _verdict(PERFECT, draft=VALID_DRAFT.replace(" Le choix dépend du budget.", ""))
    assert any("Synthèse compte 2 phrase" in i for i in two_sentences.instructions)
