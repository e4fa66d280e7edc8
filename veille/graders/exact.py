"""All-or-nothing graders (seed 002): exact match, contains, format checks (JSON schema, known label).

They give GRPO its clearest signal but only work when there is one verifiable answer. Comparison
normalises case (optional), Unicode (NFC), typographic apostrophes and runs of whitespace, so a
trailing newline or a non-breaking space does not fail an otherwise exact answer.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

import jsonschema

from veille.graders.base import Grader, GraderResult, Sample

__all__ = ["Contains", "ExactMatch", "JsonFormat", "LabelCheck", "normalise"]

_SPACES = re.compile(r"\s+")


def normalise(text: str, *, case_sensitive: bool = False) -> str:
    """NFC, straight apostrophes, collapsed whitespace, stripped; lower-cased unless case-sensitive."""
    text = unicodedata.normalize("NFC", text).replace("’", "'")
    text = _SPACES.sub(" ", text).strip()
    return text if case_sensitive else text.casefold()


class ExactMatch(Grader):
    """1 when the response equals the expected value (the reference), else 0."""

    name = "exact"
    version = "1"

    def __init__(self, *, case_sensitive: bool = False) -> None:
        self.case_sensitive = case_sensitive

    def grade(self, sample: Sample) -> GraderResult:
        equal = normalise(sample.response, case_sensitive=self.case_sensitive) == normalise(
            sample.reference, case_sensitive=self.case_sensitive
        )
        return self.result(1.0 if equal else 0.0, {"case_sensitive": self.case_sensitive})


class Contains(Grader):
    """1 when the response contains the expected value (the reference), else 0."""

    name = "contains"
    version = "1"

    def __init__(self, *, case_sensitive: bool = False) -> None:
        self.case_sensitive = case_sensitive

    def grade(self, sample: Sample) -> GraderResult:
        expected = normalise(sample.reference, case_sensitive=self.case_sensitive)
        if not expected:
            return self.result(None, {"reason": "empty expected value"})
        found = expected in normalise(sample.response, case_sensitive=self.case_sensitive)
        return self.result(1.0 if found else 0.0, {"case_sensitive": self.case_sensitive})


def _strip_fence(text: str) -> str:
    # Models often wrap JSON in a ```json fence; the format is still the JSON inside.
    match = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", text, flags=re.DOTALL)
    return match.group(1) if match else text


class JsonFormat(Grader):
    """1 when the response is valid JSON (and valid against ``schema`` when one is given), else 0."""

    name = "json_format"
    version = "1"

    def __init__(self, schema: Mapping[str, Any] | None = None) -> None:
        self.schema = dict(schema) if schema is not None else None
        if self.schema is not None:
            # A broken schema is a configuration error, reported once, not a 0 for every response.
            try:
                jsonschema.Draft202012Validator.check_schema(self.schema)
            except jsonschema.SchemaError as exc:
                raise ValueError(f"invalid JSON Schema: {exc.message}") from None

    def grade(self, sample: Sample) -> GraderResult:
        try:
            value = json.loads(_strip_fence(sample.response))
        except json.JSONDecodeError as exc:
            return self.result(0.0, {"error": f"invalid JSON: {exc.msg} at line {exc.lineno}"})
        if self.schema is not None:
            errors = sorted(
                jsonschema.Draft202012Validator(self.schema).iter_errors(value), key=lambda e: list(e.path)
            )
            if errors:
                first = errors[0]
                where = "/".join(str(p) for p in first.path) or "(root)"
                return self.result(0.0, {"error": f"{where}: {first.message}", "errors": len(errors)})
        return self.result(1.0, {"schema": self.schema is not None})


class LabelCheck(Grader):
    """1 when the response is one of the known labels and equals the expected one (if any)."""

    name = "label"
    version = "1"

    def __init__(self, labels: Iterable[str]) -> None:
        self.labels = {normalise(label): label for label in labels}
        if not self.labels:
            raise ValueError("LabelCheck needs at least one known label")

    def grade(self, sample: Sample) -> GraderResult:
        answer = normalise(sample.response).strip(" .")
        if answer not in self.labels:
            return self.result(0.0, {"error": "not a known label", "known": sorted(self.labels.values())})
        expected = normalise(sample.reference).strip(" .")
        if expected and expected != answer:
            return self.result(0.0, {"label": self.labels[answer], "expected": sample.reference})
        return self.result(1.0, {"label": self.labels[answer]})
