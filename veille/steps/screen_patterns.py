"""The phrase patterns of the prompt-injection screen (:mod:`veille.steps.screen`), by kind.

Kept apart from the matching code so the table reads as one list. Patterns run on folded text:
lowercase, no accents, ’ → ', runs of whitespace → one space.
"""

from __future__ import annotations

__all__ = ["PATTERNS"]

# Patterns run on folded text: lowercase, no accents, ’ → ', runs of whitespace → one space.
# Words for "an AI" a document may address; the strict list leaves out "model", "agent" and "bot",
# common in an LLM-engine corpus ("le modèle qui traite…").
_AI = r"(?:assistant|agent|modele|ia|ai|llm|chatbot|bot|intelligence artificielle|language model|model)"
_AI_STRICT = (
    r"(?:assistant(?: ia)?|ia|ai(?: assistant)?|llm|chatbot|intelligence artificielle|language model)"
)

# kind -> patterns. They are run by RE2 (veille/steps/screen_engine.py), all at once, in one pass over a
# text: use only what RE2 and Python's re read alike (no lookaround, no backreference, no possessive).
# Each pattern was narrowed until benign look-alikes stopped matching (tests/test_injection.py lists
# them: "le moteur ignore les instructions AVX", "vous êtes désormais couverts", "Système : Ubuntu"…).
PATTERNS: dict[str, list[str]] = {
    "instruction_override": [
        # French: the reader's own instructions (tes/vos), or qualified ones (précédentes, ci-dessus…).
        (
            r"\b(?:ignore[rsz]?|oublie[rsz]?|ne (?:tiens|tenez) (?:pas|plus) compte (?:de|des)|"
            r"(?:fais|faites) abstraction (?:de|des)|contourne[rsz]?|passe[rsz]? outre)\s+"
            r"(?:(?:toutes?|tous)\s+)?(?:(?:tes|vos)\s+(?:\w+\s+)?(?:instructions|consignes|regles|directives)"
            r"|(?:les|des|ces)\s+(?:instructions|consignes|regles|directives)\s+"
            r"(?:precedentes|anterieures|initiales|d'origine|ci-dessus))"
        ),
        r"\boublie[rsz]? tout ce qui (?:precede|est ecrit au-dessus)\b",
        r"\b(?:nouvelles?|veritables?|vraies?) (?:instructions|consignes)\s*:",
        # English: "ignore (all) (the) previous instructions", "disregard your instructions".
        (
            r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|these\s+)?"
            r"(?:previous|prior|above|earlier|preceding|original|initial)\s+"
            r"(?:instructions|prompts?|directions|rules|guidelines|context)\b"
        ),
        (
            r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+)?(?:of\s+)?your\s+"
            r"(?:\w+\s+)?(?:instructions|prompt|guidelines)\b"
        ),
        r"\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)?(?:the\s+)?above(?:[.,;:!]|$)",
        r"\b(?:new|updated|real) instructions\s*:",
    ],
    "fake_system_tag": [
        r"<\s*/?\s*(?:system|sys|instructions?|system[_ -]?prompt)\s*>",
        r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext)\s*\|>",
        r"\[/?inst\]",
        r"<<\s*/?\s*sys\s*>>",
        # A chat-transcript "System:" line giving orders ("Système : Ubuntu 22.04" is a spec sheet).
        (
            r"(?:^|\n)\s*(?:#{1,6}\s*)?(?:system|systeme|system prompt|invite systeme)\s*:\s*"
            r"(?:you|tu|vous|ignore|oublie|forget|new|nouvelles?)\b"
        ),
    ],
    "delimiter_breakout": [
        # The tags our prompts wrap untrusted data in (veille.roles.delimit), opened or closed.
        r"<\s*/?\s*(?:document|constats|brouillon|reponse|reference|catalogue)(?:\s[^>\n]*)?>",
    ],
    "addressed_to_ai": [
        (
            rf"\b{_AI}\b[^.\n]{{0,40}}\b(?:qui (?:lit|lis|lira|traite|analyse|resume)|lisant|analysant)\s+"
            r"(?:ce|cette)\s+(?:document|texte|page|fiche|note|contenu|message)\b"
        ),
        (
            rf"\b{_AI}\b[^.\n]{{0,40}}\b(?:reading|processing|summari[sz]ing|analy[sz]ing)\s+this\s+"
            r"(?:document|text|page|file|content|message)\b"
        ),
        rf"\bsi (?:tu es|vous etes) (?:un|une) {_AI}\b",
        rf"\bif you are an? {_AI}\b",
        rf"\b(?:note|message|instructions?) (?:to|for) (?:the |any )?{_AI_STRICT}s?\b",
        rf"\b(?:a l'attention|a l'intention) (?:de l'|du |des )?{_AI_STRICT}s?\b",
    ],
    "role_play": [
        # "tu" (a professional document never says tu to its reader) or "vous êtes désormais un assistant…".
        r"\btu es (?:desormais|maintenant|a present|dorenavant)\b",
        (
            r"\bvous etes (?:desormais|maintenant|a present|dorenavant) (?:un|une|le|la|l') ?"
            r"(?:assistant|agent|ia|modele|expert|experte|conseiller|conseillere|redacteur|redactrice|porte-parole)\b"
        ),
        r"\b(?:a partir de maintenant|desormais|dorenavant),? tu (?:es|dois|joues|agis)\b",
        r"\b(?:joue|jouez|incarne|incarnez) (?:le role|un personnage)\b",
        r"\bfai(?:s|tes) comme si (?:tu etais|vous etiez)\b",
        r"\byou are now (?:a|an|the|my)\b",
        r"\byou are now (?:in \w+ mode|acting as|operating as|playing|working for|speaking for)\b",
        r"\b(?:agis|agissez|reponds|repondez)\s+(?:desormais|maintenant|dorenavant)\s+(?:comme|en tant que)\b",
        r"\bfrom now on,? you are (?:a|an|the|my)\b",
        r"\b(?:pretend (?:to be|you are)|role-?play as|you are no longer an?)\b",
    ],
    "concealment": [
        (
            r"\bne (?:mentionne|mentionnez|revele|revelez|dis|dites|signale|signalez|repete|repetez)\s+"
            r"(?:pas|jamais|rien)\b[^.\n]{0,30}\b(?:cette|ces|de cette|de ces)\s+(?:consignes?|instructions?)\b"
        ),
        (
            r"\b(?:do not|don't|never)\s+(?:mention|reveal|tell|disclose|repeat)\b[^.\n]{0,30}"
            r"\b(?:this|these)\s+(?:instructions?|prompts?)\b"
        ),
        r"\b(?:do not|don't|never) tell the user\b",
        # "do not mention X in the report": an order about the output, not a usage note.
        (
            r"\b(?:do not|don't|never)\s+(?:mention|cite|name|discuss|reference)\b[^.\n]{1,60}?"
            r"\b(?:in|from)\s+(?:the|your)\s+(?:report|dossier|summary|answer|response|analysis|output|synthesis)\b"
        ),
        (
            r"\b(?:ne\s+(?:mentionne|mentionnez|cite|citez|parle|parlez|evoque|evoquez)|"
            r"n'(?:evoque|evoquez|indique|indiquez))\s+(?:pas|jamais)\b[^.\n]{1,60}?"
            r"\b(?:dans|de)\s+(?:le|la|ton|ta|votre|ce|cette)\s+(?:rapport|dossier|synthese|reponse|analyse|resume)\b"
        ),
    ],
    "output_steering": [
        # Second-person forms only: "le rapport recommande que" / "il affirme que" are prose, not orders.
        r"\b(?:ecris|ecrivez|reponds|repondez|concluez|recommandez|affirmez) que\b",
        r"\b(?:respond|reply|answer) only with\b",
        r"\boutput the following\b",
        (
            r"\b(?:cite|citez|utilise|utilisez|prends|prenez|retiens|retenez|mentionne|mentionnez)\b[^.\n]{0,60}"
            r"\bcomme (?:source|reference) (?:principale|unique|prioritaire|de reference)\b"
        ),
        r"\bas your (?:main|primary|only|sole) source\b",
        # "cite doc-99 as the main source": an imperative cite/quote, then "as the main source".
        (
            r"\b(?:cite|quote)\b[^.\n]{0,60}\bas (?:the|your) (?:main|primary|only|sole|principal|authoritative) "
            r"(?:source|reference)\b"
        ),
    ],
}
