"""Word keys and aspect families of the offline planner (French and English, any corpus).

A *key* is a folded word's stem cut to six letters: ``latence``/``latency``, ``sécurité``/``security``,
``performances``/``performance``, ``certifié``/``certified``/``certifications`` share one, so a French
request finds its English sources. Conflations it makes (``production``/``product``) cost little in
a bag of words.

An *aspect family* groups the words a technology-watch dossier uses for one usual axis (cost,
performance, security, compliance, operations, outlook, sustainability) and for framing documents
(requirements, sizing). It bridges a short axis (« coût global sur 3 ans ») and a document that never
says "coût" (« grille tarifaire … EUR par mois »). The lists are generic vocabulary of the trade, in
both languages; nothing in them is the name, id or figure of a corpus (tests/test_offline_engine.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from veille.offline.text import STOP_WORDS, fold, stem

__all__ = ["ASPECTS", "FRAMING", "aspect_words", "aspects", "framing_words", "key", "keys"]

# English function words (the shared French list has only a few), plus request meta words.
_EN_STOP = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "per",
        "via",
        "vs",
        "versus",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "ten",
        "please",
        "write",
        "dossier",
        "report",
        "sourced",
        "technology",
        "watch",
        "compare",
        "compares",
        "say",
        "trust",
        "leave",
        "anything",
        "likely",
        "each",
        "whether",
        "stay",
        "planned",
        "moving",
    ]
)
_STOP = STOP_WORDS | _EN_STOP
_WORD_RE = re.compile(r"[a-z0-9]+")
KEY_LENGTH = 6


# English endings removed before the (French) stemmer, so "security" meets « sécurité » ("secur") and
# "latency" meets « latence ». Longest first; the rest must keep four letters.
_EN_SUFFIXES = ("ities", "ings", "ity", "ing", "ied", "ies", "ed", "ly", "y")


def key(word: str) -> str:
    """The key of one folded word ('' for a stop word, a bare number or a single letter)."""
    if len(word) < 2 or word in _STOP or word.isdigit():
        return ""
    for suffix in _EN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    return stem(word)[:KEY_LENGTH]


def keys(text: str) -> list[str]:
    """Keys of the content words of ``text``, in order (duplicates kept)."""
    return [k for k in (key(w) for w in _WORD_RE.findall(fold(text))) if k]


def _family(words: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """``=word`` matches that folded word exactly; any other entry is a prefix of folded words."""
    exact = frozenset(w[1:] for w in words.split() if w.startswith("="))
    prefixes = tuple(w for w in words.split() if not w.startswith("="))
    return exact, prefixes


ASPECTS: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "performance": _family(
        "perform latenc debit throughput rapidit vitesse speed benchmark =banc =bancs mesur measur disponib "
        "availab fiabil reliab endurance capacit uptime =sla =slo panne outage degrad incident postmortem mortem =p50 =p95 =p99 =ms "
        "qualit precision scalab montee charge"
    ),
    "cost": _family(
        "=cout =couts =cost =costs =costing =prix price pricing tarif licen abonnement subscri devis =quote "
        "=quotes =quoted budget =eur =usd =euros =dollars factur billing =bill remise discount =tco garanti "
        "warrant =achat purchase =fee =fees"
    ),
    "security": _family(
        "securi vulner =faille =failles =cve correcti corrig patch =fix =fixes =fixed advisory bulletin authenti "
        "chiffr encrypt intrusion attaqu attack ransom rancon immuab immutab =mtls =tls menace threat bypass "
        "contourn rappel recall emballement incendie =fire"
    ),
    "compliance": _family(
        "conform complian =rgpd =gdpr privacy confidential heberg hosting hosted residen souverain sovereign "
        "transfer transfert traitant processor juridi legal certif audit =soc =iso =ue =eu europ"
    ),
    "operations": _family(
        "exploitation operation operat supervis monitor upgrade update =mise deploi deploy maintenan "
        "administr =etp =fte astreinte support connecteur connector provisionn automat"
    ),
    "outlook": _family(
        "perenn =feuille =feuilles roadmap rachat rachet acqui financ =sante health communaut communit "
        "gouvernan governan fondation foundation croissance growth =marche market consolidat =lts abandon "
        "avenir future outlook evolv evoluti perspective viabil longevit survie"
    ),
    "sustainability": _family(
        "durabil sustainab carbon empreinte footprint recycl approvision supply environnement environment "
        "climat =co2 =co2e =passeport passport"
    ),
}
# Words of a framing document: requirements, sizing, scope, method (its role, not its source type).
FRAMING = _family(
    "exigen requirement =besoin =besoins =cahier dimensionn sizing objecti perimetre mission cadrage "
    "volumetr methode method calendrier =planning specification =capacity"
)


def _matches(words: Iterable[str], family: tuple[frozenset[str], tuple[str, ...]]) -> set[str]:
    exact, prefixes = family
    return {w for w in words if w in exact or any(w.startswith(p) for p in prefixes)}


def aspects(text: str) -> frozenset[str]:
    """The aspect families ``text`` speaks of."""
    return frozenset(aspect_words(text))


def aspect_words(text: str) -> dict[str, int]:
    """Aspect family -> how many distinct words of ``text`` belong to it (families it uses only)."""
    words = set(_WORD_RE.findall(fold(text)))
    counts = {name: len(_matches(words, family)) for name, family in ASPECTS.items()}
    return {name: n for name, n in counts.items() if n}


def framing_words(text: str) -> int:
    """How many distinct framing words ``text`` uses (requirements, sizing, method...)."""
    return len(_matches(set(_WORD_RE.findall(fold(text))), FRAMING))
