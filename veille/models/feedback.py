"""What a re-ask feeds back to the model: the validation errors of its previous answer, told
briefly and bounded (:func:`describe_invalid`, :func:`describe_unusable`), or the note that its prose
is in another language than the request's (:data:`LANGUAGE_NOTE`). Never the answer itself: a
runaway answer echoed back would be billed again as input (issue 38)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import ValidationError

from veille.plaintext import inline_text

if TYPE_CHECKING:
    from veille.models.salvage import Unusable

__all__ = ["LANGUAGE_NOTE", "MAX_ERROR_CHARS", "describe_invalid", "describe_unusable"]

MAX_ERROR_CHARS = 2000
# Fed back with an answer whose prose is not in the request's language (the re-ask's note).
LANGUAGE_NOTE = (
    "la prose de la réponse est rédigée en « {found} » et non dans la langue de la demande "
    "(« {expected} ») : réécris tous les textes dans cette langue ; seuls les passages cités des "
    "documents gardent la leur, entre « »"
)


def describe_invalid(exc: ValidationError, finish_reason: str | None) -> str:
    """A short, model-readable account of what was wrong (fed back on the re-ask)."""
    problems: list[str] = []
    for error in exc.errors(include_url=False):
        location = ".".join(str(part) for part in error["loc"]) or "(document)"
        message = str(error["msg"])
        value = error.get("input")
        if error["type"] != "json_invalid" and isinstance(value, str | int | float | bool):
            # The model's value is quoted as one line of plain text: this message becomes the
            # error's, in the journal, run logs, state messages and alerts (issue 23 item 3).
            value = inline_text(value) if isinstance(value, str) else value
            shown = repr(value) if not isinstance(value, str) or len(value) <= 60 else repr(value[:60] + "…")
            message += f" (got {shown})"
        problems.append(f"{location}: {message}")
    text = "; ".join(problems)
    if finish_reason == "MAX_TOKENS":
        text = "output truncated at the token limit (finish_reason=MAX_TOKENS), be more concise; " + text
    elif finish_reason not in (None, "STOP"):
        text = f"generation stopped early (finish_reason={finish_reason}); " + text
    return text[:MAX_ERROR_CHARS]


def describe_unusable(unusable: Unusable, finish_reason: str | None) -> str:
    """:func:`describe_invalid` of an answer with nothing usable left, and why drops did not help."""
    text = describe_invalid(unusable.error, finish_reason)
    if unusable.note:
        text = f"{unusable.note} ; {text}"
    return text[:MAX_ERROR_CHARS]
