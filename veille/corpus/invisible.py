"""Characters a reader cannot see: removed from metadata, named in bodies.

Titles, summaries and authors are one line a person reads in the catalogue, the dossier and every
prompt: every control (Unicode category Cc) and format character (Cf) is removed from them — C0/C1
controls (terminal escapes), bidirectional embeddings, overrides, isolates and marks (Trojan Source),
zero-width characters, the BOM, interlinear annotations, and the tag characters U+E0000–U+E007F
(« ASCII smuggling »: invisible text a model still reads). The list is Unicode 14's Cc and Cf, what
``unicodedata`` says of this Python; ``tests/test_invisible_characters.py`` checks that no character of
those categories survives in any title.

A body keeps its text as written (a Hebrew or Arabic page uses bidi controls, an emoji its zero-width
joiner); a body carrying tag characters, bidi embeddings/overrides/isolates or C1 controls is named in
one alert of the ingestion that reads it (:func:`hidden_characters`): such text is where an
instruction hides from the person who checks a document.
"""

from __future__ import annotations

import re

__all__ = ["INVISIBLE", "hidden_characters"]

INVISIBLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f]"
)

# In bodies, what hides text rather than shapes it. Bidi marks (LRM, RLM, ALM) and zero-width
# joiners are ordinary in right-to-left and emoji text: not named.
_HIDDEN = {
    "tag": re.compile("[\U000e0000-\U000e007f]"),
    "bidi": re.compile("[\u202a-\u202e\u2066-\u2069]"),
    "control": re.compile("[\x80-\x9f]"),  # C0 controls are already removed from every text
}
_ANY_HIDDEN = re.compile("[\U000e0000-\U000e007f\u202a-\u202e\u2066-\u2069\x80-\x9f]")  # one pass first
# A subdivision flag (England, Scotland, Wales: black flag, tag letters, cancel tag) is an emoji.
_FLAG_SEQUENCE = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,7}\U000e007f")
_LABELS = {
    "tag": "caractères d'étiquette Unicode (U+E0000–U+E007F)",
    "bidi": "contrôles bidirectionnels",
    "control": "caractères de contrôle",
}


def hidden_characters(body: str) -> dict[str, int]:
    """How many characters of each hiding kind (French label -> count) the body carries; empty when none."""
    if _ANY_HIDDEN.search(body) is None:  # nearly every body: one scan, nothing counted
        return {}
    text = _FLAG_SEQUENCE.sub("", body) if "\U0001f3f4" in body else body
    found: dict[str, int] = {}
    for kind, pattern in _HIDDEN.items():
        count = len(pattern.findall(text))
        if count:
            found[_LABELS[kind]] = count
    return found
