"""What sanitising a model's structure removed or changed (veille.steps.write), one alert per kind."""

from __future__ import annotations

from dataclasses import dataclass

from veille.alerts import Alert, Severity, alert
from veille.roles.limits import Bounds

__all__ = ["MAX_ITEM_WORDS", "MAX_POINTS_PER_AXIS", "Tally"]

# Bounds code holds whatever a model returns (issue 23), Settings' defaults (veille.roles.limits.Bounds):
# a key point or sentence item is one or two sentences, an axis a handful of points.
MAX_ITEM_WORDS = Bounds().max_item_words
MAX_POINTS_PER_AXIS = Bounds().max_points_per_axis


@dataclass
class Tally:
    """What sanitising removed or changed, turned into one alert per kind."""

    orphans: set[int]
    headings: int = 0
    uncited: int = 0
    empty: int = 0
    unknown_axes: int = 0
    invalid_entries: int = 0
    superseded: int = 0
    lookalikes: int = 0  # look-alike citations rewritten as [n]
    lookalikes_removed: int = 0
    structure: int = 0  # items whose model-made structure was removed (veille.steps.model_structure)
    too_long: int = 0
    duplicates: int = 0
    over_cap: int = 0
    max_words: int = MAX_ITEM_WORDS
    max_points: int = MAX_POINTS_PER_AXIS

    def alerts(self, stage: str) -> list[Alert]:
        out = []

        def add(code: str, severity: Severity, message: str) -> None:
            out.append(alert(stage, code, message, severity=severity))

        if self.orphans:
            add("report.orphan_citation", "warning",
                f"le modèle cite des numéros sans source {sorted(self.orphans)} : retirés par le code")  # fmt: skip
        if self.headings:
            add("report.model_heading", "warning",
                f"{self.headings} élément(s) contenant un titre Markdown retiré(s) : les sections sont écrites par le code")  # fmt: skip
        if self.structure:
            add("report.model_structure", "warning",
                f"{self.structure} élément(s) : structure écrite par le modèle retirée (front matter, titre, "
                "liste, « ## Sources », phrase à l'impératif adressée au lecteur)")  # fmt: skip
        if self.uncited:
            add("report.uncited_point", "warning",
                f"{self.uncited} point(s) clé(s) sans citation valide retiré(s) du rapport")  # fmt: skip
        if self.unknown_axes:
            add("report.unknown_axis", "warning",
                f"{self.unknown_axes} section(s) d'un axe inconnu retirée(s)")  # fmt: skip
        if self.invalid_entries:
            add("report.invalid_contradiction", "warning",
                f"{self.invalid_entries} contradiction(s) sans source retenue ou écartée valide retirée(s)")  # fmt: skip
        if self.superseded:
            add("report.superseded_point", "info",
                f"{self.superseded} point(s) clé(s) cité(s) par les seules sources écartées d'une "
                "contradiction sur leur sujet : marqué(s) « remplacé »")  # fmt: skip
        if self.empty:
            add("report.empty_item", "info", f"{self.empty} élément(s) vide(s) ignoré(s)")
        if self.too_long or self.duplicates or self.over_cap:
            add("report.bounded", "warning",
                f"bornes du code : {self.too_long} élément(s) de plus de {self.max_words} mots, "
                f"{self.duplicates} doublon(s), {self.over_cap} point(s) au-delà de {self.max_points} "
                "par axe retiré(s)")  # fmt: skip
        if self.lookalikes or self.lookalikes_removed:
            add("report.lookalike_citation", "warning",
                f"citations d'une autre forme que [n] ([ 9 ], ［9］, [n°9], (source 9)…) : {self.lookalikes} "
                f"réécrite(s) en [n], {self.lookalikes_removed} retirée(s) (numéro sans source ou ambigu)")  # fmt: skip
        return out
