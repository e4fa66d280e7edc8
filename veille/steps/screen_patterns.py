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
# French orders name what they override in the plural; English ones start with one of a few verbs.
_FR_NOUNS = ("instructions", "consignes", "regles", "directives")
_EN_VERBS = ("ignore", "disregard", "forget", "override", "bypass")

# kind -> [(pattern, triggers)]. A pattern runs only if one of its trigger substrings occurs in the
# folded text: Python's re tries every position, and most documents hold none of the triggers. Every
# match must contain a trigger (tests/test_screen_scale.py checks it on strings generated from each
# pattern), and the rarest such words are chosen: "<" or " to " would run the pattern on every page.
# Each pattern was narrowed until benign look-alikes stopped matching (tests/test_injection.py lists
# them: "le moteur ignore les instructions AVX", "vous êtes désormais couverts", "Système : Ubuntu"…).
PATTERNS: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "instruction_override": [
        # French: the reader's own instructions (tes/vos), or qualified ones (précédentes, ci-dessus…).
        (
            r"\b(?:ignore[rsz]?|oublie[rsz]?|ne (?:tiens|tenez) (?:pas|plus) compte (?:de|des)|"
            r"(?:fais|faites) abstraction (?:de|des)|contourne[rsz]?|passe[rsz]? outre)\s+"
            r"(?:(?:toutes?|tous)\s+)?(?:(?:tes|vos)\s+(?:\w+\s+)?(?:instructions|consignes|regles|directives)"
            r"|(?:les|des|ces)\s+(?:instructions|consignes|regles|directives)\s+"
            r"(?:precedentes|anterieures|initiales|d'origine|ci-dessus))",
            _FR_NOUNS,
        ),
        (r"\boublie[rsz]? tout ce qui (?:precede|est ecrit au-dessus)\b", ("tout ce qui",)),
        (
            r"\b(?:nouvelles?|veritables?|vraies?) (?:instructions|consignes)\s*:",
            ("instructions", "consignes"),
        ),
        # English: "ignore (all) (the) previous instructions", "disregard your instructions".
        (
            r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|these\s+)?"
            r"(?:previous|prior|above|earlier|preceding|original|initial)\s+"
            r"(?:instructions|prompts?|directions|rules|guidelines|context)\b",
            _EN_VERBS,
        ),
        (
            r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+)?(?:of\s+)?your\s+"
            r"(?:\w+\s+)?(?:instructions|prompt|guidelines)\b",
            _EN_VERBS,
        ),
        (
            r"\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)?(?:the\s+)?above(?:[.,;:!]|$)",
            ("above",),
        ),
        (r"\b(?:new|updated|real) instructions\s*:", ("instructions",)),
    ],
    "fake_system_tag": [
        (r"<\s*/?\s*(?:system|sys|instructions?|system[_ -]?prompt)\s*>", ("sys", "instruction")),
        (r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext)\s*\|>", ("<|",)),
        (r"\[/?inst\]", ("inst]",)),
        (r"<<\s*/?\s*sys\s*>>", ("<<",)),
        # A chat-transcript "System:" line giving orders ("Système : Ubuntu 22.04" is a spec sheet).
        (
            r"(?:^|\n)\s*(?:#{1,6}\s*)?(?:system|systeme|system prompt|invite systeme)\s*:\s*"
            r"(?:you|tu|vous|ignore|oublie|forget|new|nouvelles?)\b",
            ("system", "invite"),
        ),
    ],
    "delimiter_breakout": [
        # The tags our prompts wrap untrusted data in (veille.roles.delimit), opened or closed.
        (
            r"<\s*/?\s*(?:document|constats|brouillon|reponse|reference|catalogue)(?:\s[^>\n]*)?>",
            ("document", "constats", "brouillon", "reponse", "reference", "catalogue"),
        ),
    ],
    "addressed_to_ai": [
        (
            rf"\b{_AI}\b[^.\n]{{0,40}}\b(?:qui (?:lit|lis|lira|traite|analyse|resume)|lisant|analysant)\s+"
            r"(?:ce|cette)\s+(?:document|texte|page|fiche|note|contenu|message)\b",
            ("qui li", "qui traite", "qui analyse", "qui resume", "lisant", "analysant"),
        ),
        (
            rf"\b{_AI}\b[^.\n]{{0,40}}\b(?:reading|processing|summari[sz]ing|analy[sz]ing)\s+this\s+"
            r"(?:document|text|page|file|content|message)\b",
            ("ing this", "ing\nthis"),
        ),
        (rf"\bsi (?:tu es|vous etes) (?:un|une) {_AI}\b", ("si tu es", "si vous etes")),
        (rf"\bif you are an? {_AI}\b", ("if you are",)),
        (
            rf"\b(?:note|message|instructions?) (?:to|for) (?:the |any )?{_AI_STRICT}s?\b",
            tuple(
                f"{noun} {to} "
                for noun in ("note", "message", "instruction", "instructions")
                for to in ("to", "for")
            ),
        ),
        (
            rf"\b(?:a l'attention|a l'intention) (?:de l'|du |des )?{_AI_STRICT}s?\b",
            ("attention", "intention"),
        ),
    ],
    "role_play": [
        # "tu" (a professional document never says tu to its reader) or "vous êtes désormais un assistant…".
        (r"\btu es (?:desormais|maintenant|a present|dorenavant)\b", ("tu es",)),
        (
            r"\bvous etes (?:desormais|maintenant|a present|dorenavant) (?:un|une|le|la|l') ?"
            r"(?:assistant|agent|ia|modele|expert|experte|conseiller|conseillere|redacteur|redactrice|porte-parole)\b",
            ("vous etes",),
        ),
        (
            r"\b(?:a partir de maintenant|desormais|dorenavant),? tu (?:es|dois|joues|agis)\b",
            ("maintenant", "desormais", "dorenavant"),
        ),
        (r"\b(?:joue|jouez|incarne|incarnez) (?:le role|un personnage)\b", ("joue", "incarne")),
        (r"\bfai(?:s|tes) comme si (?:tu etais|vous etiez)\b", ("comme si",)),
        (r"\byou are now (?:a|an|the|my)\b", ("you are now",)),
        (
            r"\byou are now (?:in \w+ mode|acting as|operating as|playing|working for|speaking for)\b",
            ("you are now",),
        ),
        (
            r"\b(?:agis|agissez|reponds|repondez)\s+(?:desormais|maintenant|dorenavant)\s+(?:comme|en tant que)\b",
            ("desormais", "maintenant", "dorenavant"),
        ),
        (r"\bfrom now on,? you are (?:a|an|the|my)\b", ("from now on",)),
        (
            r"\b(?:pretend (?:to be|you are)|role-?play as|you are no longer an?)\b",
            ("pretend", "play as", "no longer"),
        ),
    ],
    "concealment": [
        (
            r"\bne (?:mentionne|mentionnez|revele|revelez|dis|dites|signale|signalez|repete|repetez)\s+"
            r"(?:pas|jamais|rien)\b[^.\n]{0,30}\b(?:cette|ces|de cette|de ces)\s+(?:consignes?|instructions?)\b",
            ("consigne", "instruction"),
        ),
        (
            r"\b(?:do not|don't|never)\s+(?:mention|reveal|tell|disclose|repeat)\b[^.\n]{0,30}"
            r"\b(?:this|these)\s+(?:instructions?|prompts?)\b",
            ("instruction", "prompt"),
        ),
        (r"\b(?:do not|don't|never) tell the user\b", ("the user",)),
        # "do not mention X in the report": an order about the output, not a usage note.
        (
            r"\b(?:do not|don't|never)\s+(?:mention|cite|name|discuss|reference)\b[^.\n]{1,60}?"
            r"\b(?:in|from)\s+(?:the|your)\s+(?:report|dossier|summary|answer|response|analysis|output|synthesis)\b",
            ("mention", "cite", "name", "discuss", "reference"),
        ),
        (
            r"\b(?:ne\s+(?:mentionne|mentionnez|cite|citez|parle|parlez|evoque|evoquez)|"
            r"n'(?:evoque|evoquez|indique|indiquez))\s+(?:pas|jamais)\b[^.\n]{1,60}?"
            r"\b(?:dans|de)\s+(?:le|la|ton|ta|votre|ce|cette)\s+(?:rapport|dossier|synthese|reponse|analyse|resume)\b",
            ("rapport", "dossier", "synthese", "reponse", "analyse", "resume"),
        ),
    ],
    "output_steering": [
        # Second-person forms only: "le rapport recommande que" / "il affirme que" are prose, not orders.
        (
            r"\b(?:ecris|ecrivez|reponds|repondez|concluez|recommandez|affirmez) que\b",
            (
                "ecris que",
                "ecrivez que",
                "reponds que",
                "repondez que",
                "concluez que",
                "recommandez que",
                "affirmez que",
            ),
        ),
        (r"\b(?:respond|reply|answer) only with\b", ("only with",)),
        (r"\boutput the following\b", ("the following",)),
        (
            r"\b(?:cite|citez|utilise|utilisez|prends|prenez|retiens|retenez|mentionne|mentionnez)\b[^.\n]{0,60}"
            r"\bcomme (?:source|reference) (?:principale|unique|prioritaire|de reference)\b",
            ("comme source", "comme reference"),
        ),
        (r"\bas your (?:main|primary|only|sole) source\b", ("as your",)),
        # "cite doc-99 as the main source": an imperative cite/quote, then "as the main source".
        (
            r"\b(?:cite|quote)\b[^.\n]{0,60}\bas (?:the|your) (?:main|primary|only|sole|principal|authoritative) "
            r"(?:source|reference)\b",
            ("cite", "quote"),
        ),
    ],
}
