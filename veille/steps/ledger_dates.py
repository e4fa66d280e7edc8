"""Ledger entries that order sources by a date one of them does not have (issue 36).

"Later wins" never applies when either date is unknown (« date inconnue », :mod:`veille.docdates`):
whatever backend wrote the ledger, an entry with a source of unknown date on either side whose reason
decides by date (a recency word of ``veille/data/dates.toml`` [ledger]) is dropped whole, never
rewritten, with one ``ledger.unknown_order`` alert naming the subjects. An entry that settles the pair
by authority and says the order is unknown stays.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Sequence

from veille.alerts import Alert, alert
from veille.docdates import UNKNOWN_DATE, known_day
from veille.dossier import LedgerEntry
from veille.resources import data_file
from veille.roles.writer import SourceRef

__all__ = ["drop_unknown_order"]

_NOT_A_DATE_REASON = re.compile(rf"{UNKNOWN_DATE}s?|ordre\s+inconnu|order\s+unknown|unknown\s+order", re.I)


@functools.cache
def _recency() -> re.Pattern[str]:
    entry = tomllib.loads(data_file("dates.toml").read_text(encoding="utf-8"))["ledger"]["recency_words"]
    words = sorted({w.casefold() for w in entry["value"]}, key=len, reverse=True)
    alternatives = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in words)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)")


def _by_date(reason: str) -> bool:
    return _recency().search(_NOT_A_DATE_REASON.sub(" ", reason).casefold()) is not None


def drop_unknown_order(
    entries: Sequence[LedgerEntry], sources: Sequence[SourceRef], stage: str = "report"
) -> tuple[list[LedgerEntry], list[Alert]]:
    """``entries`` without those ordering by date a source whose date is unknown; one alert for them."""
    undated = {s.number for s in sources if s.kind == "corpus" and known_day(s.date) is None}
    kept: list[LedgerEntry] = []
    dropped: list[str] = []
    for entry in entries:
        if undated & {*entry.retained, *entry.rejected} and _by_date(entry.reason):
            dropped.append(entry.subject)
            continue
        kept.append(entry)
    if not dropped:
        return kept, []
    names = " ; ".join(f"« {s[:80]} »" for s in dropped[:5])
    message = (
        f"{len(dropped)} contradiction(s) tranchée(s) par la date alors qu'une source n'a pas de date "
        f"connue (« date inconnue ») : ordre inconnu, retirée(s) du registre : {names}"
    )
    return kept, [alert(stage, "ledger.unknown_order", message, severity="warning", subject=dropped[0][:80])]
