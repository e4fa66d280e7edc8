"""French-aware text utilities of the offline engine: folding, stop words, light stemming,
sentence splitting, figure extraction, word counts.

Everything here is pure and deterministic. Nothing is specific to a corpus: the word lists are
generic French function words, hedges and measurement units.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence

__all__ = [
    "STOP_WORDS",
    "SUPERLATIVE_RE",
    "content_words",
    "cosine",
    "date_key",
    "extract_dates",
    "extract_figures",
    "figure_unit",
    "figure_value",
    "fold",
    "is_count",
    "is_english",
    "is_year",
    "jaccard",
    "rate_unit",
    "split_sentences",
    "stem",
    "stems",
    "table_rows",
    "table_sentences",
    "unit_key",
    "weighted_vector",
    "word_count",
    "words",
]


def _wordlist(text: str) -> list[str]:
    """Whitespace-separated words (word lists read better as text)."""
    return text.split()


# Generic French function words and meta words of a request ("dossier", "document"...), folded.
_STOP = """
a à afin ai aie ainsi alors apres après au aucun aucune aupres auquel aussi autre autres aux avant avec avoir
ayant c ça car ce ceci cela celle celles celui cependant certain certaine certaines certains ces cet cette ceux
chaque chez ci comme comment contre d dans de des depuis deja déjà donc dont du elle elles en encore entre est
et etaient etait etant ete été etre être eu eux fait faire fois font hors il ils j je jusqu jusque l la laquelle
le lequel les lesquels leur leurs lors lorsque lui m ma mais me meme même mes moi moins mon n ne ni non nos notre
nous on ont or ou où par parce parmi pas pendant peu peut peuvent plus plusieurs pour pourquoi pourra pourrait
puis qu quand que quel quelle quelles quels qui quoi s sa sans se selon ses si sien soi soit son sont sous
suis sur t ta tandis tant te tel telle telles tels tes toi ton tous tout toute toutes tres très tu un une unes
uns vers via voici voila vos votre vous y deux trois quatre cinq six dix
nouveau nouvelle nouveaux nouvelles nouvel
doit doivent faut avoir sera seront serait seraient etc cas ceux aujourd hui
dossier document documents veille demande question questions rapport note notes point points
the of and or to in for on with by is are be an as at from that this it
"""
STOP_WORDS: frozenset[str] = frozenset(
    unicodedata.normalize("NFKD", w).encode("ascii", "ignore").decode() for w in _wordlist(_STOP)
)

# Light French stemming: suffixes removed once, longest first (after the plural was removed).
_SUFFIXES: tuple[str, ...] = tuple(
    sorted(
        _wordlist(
            "issement ement ication ation ateur atrice ance ence ite able ible ique isme iste euse eux "
            "ment aire ive if ee ante ant er e"
        ),
        key=lambda s: (-len(s), s),
    )
)

_WORD_RE = re.compile(r"[a-z0-9]+")
_COUNT_RE = re.compile(r"\w+")


def fold(text: str) -> str:
    """Lower-case, strip accents, normalise apostrophes and spaces (so 'Écart' == 'ecart')."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.replace("œ", "oe").replace("Œ", "OE").replace("æ", "ae").replace("Æ", "AE")
    return text.replace("\u2019", "'").replace("\u00a0", " ").replace("\u202f", " ").lower()


def stem(word: str) -> str:
    """A small suffix-stripping stemmer for folded French words (enough for lexical overlap)."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("aux") and len(word) > 4:
        word = word[:-3] + "al"
    elif word.endswith(("s", "x")) and len(word) > 4:
        word = word[:-1]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    # "abandonn(é)" / "abandon", "personnell(e)" / "personnel": undouble a final consonant.
    if len(word) > 4 and word[-1] == word[-2] and word[-1] in "lnmt":
        word = word[:-1]
    return word


def words(text: str) -> list[str]:
    """Folded alphanumeric tokens, in order (apostrophes and punctuation split words)."""
    return _WORD_RE.findall(fold(text))


def content_words(text: str) -> list[str]:
    """Folded words minus stop words, one-letter words and bare numbers, in order."""
    return [w for w in words(text) if len(w) > 1 and w not in STOP_WORDS and not w.isdigit()]


def stems(text: str) -> list[str]:
    """Stems of the content words, in order (duplicates kept)."""
    return [stem(w) for w in content_words(text)]


def word_count(text: str) -> int:
    """Words as the arbiter counts them (``re.findall(r"\\w+")``), so limits agree with it."""
    return len(_COUNT_RE.findall(text))


def cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Cosine similarity of two sparse vectors (sorted keys: the sum is order-independent)."""
    if not a or not b:
        return 0.0
    dot = sum(a[k] * b[k] for k in sorted(a.keys() & b.keys()))
    if dot == 0:
        return 0.0
    na = math.sqrt(sum(v * v for _, v in sorted(a.items())))
    nb = math.sqrt(sum(v * v for _, v in sorted(b.items())))
    return dot / (na * nb)


def weighted_vector(tokens: Iterable[str], weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """Term-frequency vector (sub-linear tf) scaled by optional per-term weights."""
    counts = Counter(tokens)
    out: dict[str, float] = {}
    for token in sorted(counts):
        w = 1.0 if weights is None else weights.get(token, 1.0)
        out[token] = (1.0 + math.log(counts[token])) * w
    return out


# --- sentences -------------------------------------------------------------------------------

# Not after an initial ("J. Martin") nor a common abbreviation (« 25 °C. » ends a sentence).
_SENTENCE_END_RE = re.compile(
    r"(?<=[.!?…])(?<!(?<!°)\b[A-Z]\.)(?<!\bM\.)(?<!\bex\.)\s+(?=[«\"(\[A-ZÀ-ÖØ-Þ0-9*_-])"
)
_MD_PREFIX_RE = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)")
_MD_EMPHASIS_RE = re.compile(r"(\*\*|__|\*|`)")


def split_sentences(text: str) -> list[str]:
    """Sentences of a Markdown body: headings are skipped, list items and paragraphs are split at
    sentence ends, and each table cell reads as a sentence labelled by its row and column
    (« Produit A : latence 12 ms. »), so a figure in a table keeps what it measures. Markdown emphasis is removed."""
    out: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            joined = " ".join(paragraph)
            out.extend(s.strip() for s in _SENTENCE_END_RE.split(joined) if s.strip())
            paragraph.clear()

    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "|", "```", "---")):
            flush()
            continue
        is_item = bool(re.match(r"^([-*+]|\d+[.)])\s+", line))
        line = _MD_EMPHASIS_RE.sub("", _MD_PREFIX_RE.sub("", line)).strip()
        if not line:
            continue
        if is_item:
            flush()
            paragraph.append(line)
            flush()
        else:
            paragraph.append(line)
    flush()
    return out


def table_sentences(text: str) -> list[str]:
    """Each filled cell of the Markdown tables of ``text`` as a sentence labelled by its row and
    column (« Produit A : latence 12 ms. »): a figure in a table keeps what it measures, so it can
    be compared with the same measure stated in prose elsewhere."""
    return [cell for header, cells in _table_data_rows(text) for cell in _table_row(header, cells)]


def table_rows(text: str) -> list[tuple[str, list[int]]]:
    """Each row of the Markdown tables of ``text`` as one sentence (« Produit A : latence 12 ms ;
    prix 900 EUR. ») with the positions, in :func:`table_sentences`, of the cells it joins: a row
    of a benchmark or a price grid is a finding in itself."""
    out: list[tuple[str, list[int]]] = []
    position = 0
    for header, cells in _table_data_rows(text):
        row = _table_row(header, cells)
        if row:
            parts = [
                f"{name} {value}".strip() for name, value in zip(header[1:], cells[1:], strict=False) if value
            ]
            sentence = f"{cells[0]} : {' ; '.join(parts)}.".replace("  ", " ")
            out.append((sentence, list(range(position, position + len(row)))))
        position += len(row)
    return out


def _table_data_rows(text: str) -> Iterator[tuple[list[str], list[str]]]:
    """(header cells, row cells) of each data row of the Markdown tables of ``text``."""
    header: list[str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("|"):
            header = None
            continue
        cells = _table_cells(line)
        if header is None:
            header = cells
        elif not all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
            yield header, cells


def _table_cells(line: str) -> list[str]:
    inner = line.strip().strip("|")
    return [_MD_EMPHASIS_RE.sub("", c).strip() for c in inner.split("|")]


def _table_row(header: list[str], cells: list[str]) -> list[str]:
    """One sentence per filled cell, ``row label : column value.``: a row holds several measures,
    and each figure must keep the one column it belongs to."""
    if not cells or not cells[0]:
        return []
    return [
        f"{cells[0]} : {name} {value}.".replace("  ", " ") if name else f"{cells[0]} : {value}."
        for name, value in zip(header[1:], cells[1:], strict=False)
        if value
    ]


# --- figures -----------------------------------------------------------------------------------

# Generic measurement units and multipliers (no corpus facts): a figure keeps the unit that follows it.
_UNITS = _wordlist(
    "% ‰ € $ eur euros euro usd dollars ht ttc k m md millions million milliards milliard "
    "ms s sec secondes seconde min minutes minute h heures heure jours jour semaines semaine mois ans an annees "
    "go mo to ko gb mb tb kb gbit mbit gbits mbits gib mib "
    "gpu gpus cpu cpus vcpu noeuds noeud serveurs serveur coeurs coeur etp fte "
    "tokens token requetes requete utilisateurs utilisateur salaries postes licences licence sieges "
    "w kw mw kwh mwh v ghz mhz hz °c c km m2 m3 kg t points pts fois x versions version"
)
_UNIT_SET = frozenset(_UNITS)
_NUMBER = r"\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?(?!\d)|\d+(?:[.,]\d+)*"
_FIGURE_RE = re.compile(
    rf"(?<![\w.,-])(?P<num>{_NUMBER})(?![\d-])"
    rf"(?P<tail>(?:[ \u00a0\u202f]?[%‰€$])|(?:[ \u00a0\u202f]?[A-Za-zÀ-ÿ°][\w°/²³.-]*(?!['’\w])"
    rf"(?:[ \u00a0\u202f][A-Za-zÀ-ÿ][\w/]*(?!['’\w]))?))?"
)
_ORDINAL_RE = re.compile(r"^(er|re|e|eme|ème|ère|nd|nde)\b", re.IGNORECASE)
_YEAR_RE = re.compile(r"^(19|20)\d{2}$")


def _unit_length(tail: str, *, model: bool = False) -> int:
    """Length of the prefix of ``tail`` that is a unit (``tokens/s``, `` M EUR``, ``GPU``...), else 0.
    A word that is not a known unit is still one when it reads as a counted noun (``cycles``,
    ``pannes``, ``requests``): what a count counts is its unit. Not after a ``model`` number
    (« Model 150 delivers », « Produit 6 restaure »): the word after it is a verb, not a unit."""
    end = 0
    for n, match in enumerate(re.finditer(r"\s*(\S+)", tail)):
        if n == 2:
            break
        word = match.group(1)
        clean = word.rstrip(".,;:!?)»")
        key = fold(clean)
        known = clean != "to" and (key in _UNIT_SET or key.split("/")[0] in _UNIT_SET)
        if not (
            known or clean[:1] in {"%", "‰", "€", "$"} or (n == 0 and not model and _counted_noun(clean))
        ):
            break
        end = match.start(1) + len(clean)
        if key not in _MULTIPLIERS:
            break
    return end


# Words that follow a number without being what it counts (English; the French ones are STOP_WORDS).
_NOT_COUNTED = frozenset(
    _wordlist(
        "a an the of to in on at by for from with per than and or but so as if into onto over under up down "
        "out off about after before since until during between against without within across through via vs "
        "is are was were be been has have had will would can could may might must should do does did not no "
        "times percent more less most least each every other others new old first last next"
    )
)
_MONTH_WORDS = frozenset(
    _wordlist(
        "janvier fevrier mars avril mai juin juillet aout septembre octobre novembre decembre january "
        "february march april may june july august september october november december"
    )
)


def _after_name(text: str, start: int) -> bool:
    """The number at ``start`` follows a capitalised word: a model or version (« Server 7 »)."""
    before = text[:start].rstrip(" \u00a0\u202f")
    if len(before) == len(text[:start]):
        return False
    word = re.search(r"([A-Za-zÀ-ÿ][\wÀ-ÿ-]*)$", before)
    return bool(word and word.group(1)[:1].isupper())


def _counted_noun(word: str) -> bool:
    """A lower-case word (or a unit-like one such as ``dB``, ``req/s``) that is neither a function
    word, a month nor a capitalised name: ``5 000 cycles``, ``7 pannes``, ``50 000 requests``."""
    key = fold(word)
    if not re.fullmatch(r"[a-z]{2,}(?:/[a-z]+)?", key):
        return False
    if word[:1].isupper() and not word[1:2].isupper():
        return False  # « 3 Atlas »: a name, not a unit (« 38 dB » starts lower-case)
    return key not in STOP_WORDS and key not in _NOT_COUNTED and key not in _MONTH_WORDS


_MULTIPLIERS = frozenset({"k", "m", "md", "millions", "million", "milliards", "milliard"})


_MONTHS = "janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre"
_DATE_RE = re.compile(
    rf"(?<![\w-])(?:(?:1er|\d{{1,2}}) )?(?:{_MONTHS}) (?:19|20)\d{{2}}(?![\w-])", re.IGNORECASE
)


def extract_dates(text: str) -> list[str]:
    """Dates written out ('30 septembre 2031', 'mars 2030'), verbatim."""
    return list(dict.fromkeys(m.group(0) for m in _DATE_RE.finditer(text)))


_MONTH_NUMBERS = {
    "janvier": 1, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7, "aout": 8,
    "septembre": 9, "octobre": 10, "novembre": 11, "decembre": 12,
}  # fmt: skip


def date_key(date: str) -> str:
    """'30 septembre 2031' -> '2031-09' (comparable with ISO dates' first 7 characters); '' if unknown."""
    folded = fold(date)
    year = re.search(r"(19|20)\d{2}", folded)
    month = next((n for name, n in _MONTH_NUMBERS.items() if name in folded), None)
    if not year or month is None:
        return ""
    return f"{year.group(0)}-{month:02d}"


def _known_unit(unit: str) -> bool:
    key = fold(unit.strip()).split()[0] if unit.strip() else ""
    return key in _UNIT_SET or key.split("/")[0] in _UNIT_SET


_MINUTES_RE = re.compile(
    r"[ \u00a0\u202f](?P<min>[0-5]?\d)(?P<unit>[ \u00a0\u202f](?:min|mn|minutes?)\b)?(?![\d.,]\d|\d)"
)


def _duration_tail(text: str, end: int, unit: str) -> int | None:
    """End of the minutes after an hour figure (« 4 h 15 », « 3 hours 20 minutes »), else None.
    After ``h`` the minutes may stand alone unless a unit follows them (« 2 h 20 To » is not a
    duration); after a spelt-out hour they need their unit."""
    word = fold(unit.strip())
    if _SAME_UNIT.get(word, word) != "h":
        return None
    match = _MINUTES_RE.match(text, end)
    if not match:
        return None
    if match.group("unit"):
        return match.end()
    if word != "h":
        return None
    following = re.match(r"[ \u00a0\u202f]*([^\s.,;:!?)»]+)", text[match.end() :])
    if following and (_known_unit(following.group(1)) or fold(following.group(1)) in _UNIT_SET):
        return None
    return match.end()


def extract_figures(text: str) -> list[str]:
    """Figures of a sentence, verbatim with their unit when one follows: '4 800 req/s', '18 %',
    '2027'; written-out dates ('septembre 2031') come whole."""
    out: list[str] = extract_dates(text)
    covered = [(m.start(), m.end()) for m in _DATE_RE.finditer(text)]
    for match in _FIGURE_RE.finditer(text):
        if any(a <= match.start() < b for a, b in covered):
            continue
        tail = match.group("tail") or ""
        if tail and not tail[0].isspace() and _ORDINAL_RE.match(tail):
            continue  # "1er", "95e": ordinals are not measurements
        unit_length = _unit_length(tail, model=_after_name(text, match.start("num")))
        if unit_length and is_year(match.group("num")) and not _known_unit(tail[:unit_length]):
            unit_length = 0  # « 2026 grid »: a year, not a count of grids
        end = match.end("num") + unit_length
        duration = _duration_tail(text, end, tail[:unit_length])
        figure = text[match.start("num") : duration or end]  # « 4 h 15 », « 3 hours 20 minutes »
        if duration:
            covered.append((match.start("num"), duration))  # its minutes are not another figure
        if figure not in out:
            out.append(figure)
    return out


def figure_value(figure: str) -> float | None:
    """Numeric value of a figure ('4 800 req/s' -> 4800.0, '1,5 Go' -> 1.5, '5 h 30' -> 5.5);
    None for versions."""
    match = re.match(_NUMBER, figure)
    if not match:
        return None
    minutes = _HOURS_MINUTES_RE.match(figure[match.end() :])
    if minutes and "." not in match.group(0) and "," not in match.group(0):
        return float(re.sub(r"[ \u00a0\u202f]", "", match.group(0))) + int(minutes.group(1)) / 60
    num = re.sub(r"[ \u00a0\u202f]", "", match.group(0))
    if num.count(".") + num.count(",") > 1:
        return None  # a version such as 2.7.1
    try:
        return float(num.replace(",", "."))
    except ValueError:
        return None


_HOURS_MINUTES_RE = re.compile(
    r"\s*(?:h|heures?|hours?|hrs?)\s+(\d{1,2})(?:\s*(?:min|mn|minutes?))?$", re.IGNORECASE
)

# Spellings of one unit (« 3 heures » and « 4 h 20 » measure the same thing).
_SAME_UNIT = {
    "heures": "h",
    "heure": "h",
    "hours": "h",
    "hour": "h",
    "hrs": "h",
    "hr": "h",
    "minutes": "min",
    "minute": "min",
    "mins": "min",
    "mn": "min",
    "secondes": "s",
    "seconde": "s",
    "seconds": "s",
    "second": "s",
    "sec": "s",
    "jours": "jour",
    "days": "jour",
    "day": "jour",
    "semaines": "semaine",
    "weeks": "semaine",
    "week": "semaine",
    "mois": "mois",
    "months": "mois",
    "month": "mois",
    "ans": "an",
    "annees": "an",
    "annee": "an",
    "years": "an",
    "year": "an",
    "fois": "fois",
    "times": "fois",
    "euros": "eur",
    "euro": "eur",
    "€": "eur",
    "dollars": "usd",
    "$": "usd",
}


def unit_key(word: str) -> str:
    """One spelling per unit word, French and English, singular: ``heures``/``hours`` -> ``h``,
    ``jours``/``days`` -> ``jour``, ``cycles`` -> ``cycle``, ``€`` -> ``eur``."""
    word = fold(word)
    if word in _SAME_UNIT:
        return _SAME_UNIT[word]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss") and "/" not in word:
        singular = word[:-1]
        return _SAME_UNIT.get(singular, singular)
    return word


def figure_unit(figure: str) -> str:
    """Folded unit of a figure ('' when bare), one spelling per unit (:func:`unit_key`); the
    minutes of a duration (« 4 h 15 ») are part of its value, not of its unit."""
    match = re.match(_NUMBER, figure)
    rest = fold((figure[match.end() :] if match else figure).strip())
    head, _, tail = rest.partition(" ")
    head = unit_key(head) if head else head
    if head == "h" and re.fullmatch(r"\d{1,2}(?: (?:min|mn|minutes?))?", tail):
        tail = ""
    return f"{head} {tail}".strip()


# « par site », "per GB", « /mois » right after a figure: what the figure is counted per.
_PER_RE = re.compile(
    r"(?:[ \u00a0\u202f]+(?:HT|TTC|hors taxes?|excl\.? VAT))?"  # a tax mention before the « par »
    r"[ \u00a0\u202f]*(?:/|(?:per|par)[ \u00a0\u202f]+)(?:an?[ \u00a0\u202f]+|une?[ \u00a0\u202f]+)?"
    r"([A-Za-zÀ-ÿ][\wÀ-ÿ-]*)"
)


def rate_unit(text: str, figure: str) -> str:
    """The unit of ``figure`` as stated in ``text``, with what it is counted per: « 9 jours par
    site » and "3 days per site" -> ``jour/site``, « 4 500 EUR/mois » and « 4 500 EUR par mois »
    -> ``eur/mois``; the plain :func:`figure_unit` when nothing follows."""
    # A tax mention does not change what is counted (« 1 250 EUR HT par GPU », « 2 750 EUR par GPU »).
    unit = re.sub(r" (?:ht|hors taxes?)$", "", figure_unit(figure))
    if not unit or "/" in unit:
        head, _, per = unit.partition("/")
        return f"{head}/{unit_key(per)}" if per else unit
    pos = text.find(figure)
    match = _PER_RE.match(text, pos + len(figure)) if pos >= 0 else None
    return f"{unit}/{unit_key(match.group(1))}" if match else unit


def is_count(figure: str) -> bool:
    """The figure's unit is a counted noun (« 7 pannes », « 5 000 cycles »), not a measurement unit."""
    match = re.match(_NUMBER, figure)
    rest = (figure[match.end() :] if match else figure).strip()
    return bool(rest) and not _known_unit(rest) and rest[:1] not in {"%", "‰", "€", "$"}


def is_year(figure: str) -> bool:
    return bool(_YEAR_RE.match(figure.strip()))


# French superlatives: "la plus faible", "les moins chers", "le meilleur", "la pire".
SUPERLATIVE_RE = re.compile(
    r"\b(?:le|la|les|l')\s*(?:plus|moins)\s+(?!de\b|d'|que\b|tôt\b|tard\b)\w+|\b(?:meilleure?s?|pires?)\b",
    re.IGNORECASE,
)


def jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


_EN_MARKERS = frozenset(
    ["the", "and", "of", "to", "for", "with", "on", "is", "are", "our", "please", "which", "that", "this"]
)
_FR_MARKERS = frozenset(
    [
        "le",
        "la",
        "les",
        "et",
        "des",
        "du",
        "pour",
        "avec",
        "sur",
        "est",
        "sont",
        "notre",
        "qui",
        "que",
        "une",
        "un",
    ]
)


def is_english(text: str) -> bool:
    """``text`` is written in English: more English than French function words."""
    tokens = re.findall(r"[a-z]+", fold(text))
    return sum(t in _EN_MARKERS for t in tokens) > sum(t in _FR_MARKERS for t in tokens)
