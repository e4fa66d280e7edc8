"""A fake-Gemini responder for the flow over the test corpus of testkit/flowkit.py.

The real SDK sends prompts, not payloads, so each role is recognised by its system instruction and
answered from what its prompt shows (document ids for analysts, source numbers for the writer).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from testkit.fake_gemini import Reply
from testkit.flowkit import AXES, PERFECT, dossier_from
from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint
from veille.roles import analyst, analyst_update, critic, judge, planner, researcher, reviser, writer
from veille.roles.analyst import Finding, Findings
from veille.roles.planner import Plan, SubTask

_AXIS_RE = re.compile(r"^### (st-\d+) \(axe « .* »\) — .*$")
_FINDING_RE = re.compile(r"^- (.*?) ((?:\[\d+\])+)$")


def findings_dossier(prompt: str) -> Any:
    """A writer that writes each axis from its own findings only (one key point per finding, its
    citations kept), as a careful model would: a section is a function of its branch. Just long
    enough for the grid's 350 words on the bundled corpus (each point gets one plain sentence more)."""
    sections: dict[str, list[KeyPoint]] = {}
    axis = ""
    for line in prompt.splitlines():
        if match := _AXIS_RE.match(line):
            axis = match.group(1)
            sections[axis] = []
        elif axis and (match := _FINDING_RE.match(line)):
            numbers = [int(n) for n in re.findall(r"\d+", match.group(2))]
            text = f"{match.group(1)} Ce constat éclaire cet axe de la demande."
            sections[axis].append(KeyPoint(text=text, citations=numbers))
        elif not line.strip() or line.startswith("</"):
            axis = ""
    base = dossier_from([1], list(sections) or ["st-1"])
    return base.model_copy(update={"sections": [AxisSection(axis=a, points=p) for a, p in sections.items()]})


def english_dossier(numbers: Sequence[int], axes: Sequence[str]) -> Dossier:
    """A schema-valid dossier written in English (issue 36: a writer or reviser answering in another
    language than the French request): every hard check of form holds (sections, citations, one
    point per source), only its language is wrong."""
    numbers = list(numbers) or [1]
    axes = list(axes) or ["st-1"]
    points: dict[str, list[KeyPoint]] = {axis: [] for axis in axes}
    for i, n in enumerate(numbers):
        points[axes[i % len(axes)]].append(
            KeyPoint(
                text=f"Kestrel and its competitors are compared in finding number {i + 1} of this report",
                citations=[n],
            )
        )
    return Dossier(
        synthesis=[
            CitedText(
                text="Kestrel leads on the throughput measured on the test bench", citations=numbers[:1]
            ),
            CitedText(text="Tamaris costs more per GPU than the other engines"),
            CitedText(text="Orvet fixed its security flaw in version 2.5 of the engine"),
        ],
        sections=[AxisSection(axis=axis, points=kept) for axis, kept in points.items()],
        uncertainties=[CitedText(text="The cost of support is still unknown for every engine")],
        recommendation=[
            CitedText(text="The measured throughput favours Kestrel for this workload", citations=numbers[:1])
        ],
    )


__all__ = ["english_dossier", "findings_dossier", "gemini_responder", "role_of"]

_ROLES = {
    planner.INSTRUCTIONS: "planner",
    analyst.INSTRUCTIONS: "analyst",
    analyst_update.INSTRUCTIONS: "analyst_update",  # the SDK sends no role name: told apart by its instructions
    writer.INSTRUCTIONS: "writer",
    critic.INSTRUCTIONS: "critic",
    reviser.INSTRUCTIONS: "reviser",
    judge.INSTRUCTIONS: "judge",
    researcher.INSTRUCTIONS: "researcher",
}


def _text(content: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in content.get("parts", []))


def role_of(body: dict[str, Any]) -> str:
    system = _text(body.get("systemInstruction", {}))
    return _ROLES.get(system, "unknown")


def gemini_responder(
    *,
    axes: Sequence[tuple[str, list[str]]] = AXES,
    delay_s: float = 0.0,
    researcher: Callable[[str], Reply] | None = None,
    writer: Callable[[str], Any] | None = None,
    language: str = "fr",
) -> Callable[[dict[str, Any], str], Reply]:
    """``FakeGemini.responder``: a valid answer for every role of the flow; the plan has one
    sub-task per ``(question, doc ids)`` of ``axes``; ``researcher(prompt)`` answers grounded calls
    (``--web``), which are refused without it; ``writer(prompt)`` answers the writer (e.g.
    :func:`findings_dossier`; by default every source number spread over the axes); ``language``
    ``"en"``: the writer and the reviser answer in English (:func:`english_dossier`), every time."""

    def respond(body: dict[str, Any], model: str) -> Reply:
        role = role_of(body)
        prompt = _text(body["contents"][0])
        tokens = {"prompt_tokens": len(prompt) // 4, "output_tokens": 50, "model_version": model}
        if role == "planner":
            answer: Any = Plan(
                sub_tasks=[SubTask(id=f"st-{i}", question=q, doc_ids=d) for i, (q, d) in enumerate(axes, 1)],
                excluded=["doc-07"],
            )
        elif role in ("analyst", "analyst_update"):  # the update's <document> blocks: the new ones only
            ids = re.findall(r'<document id="([^"]+)"', prompt)
            answer = Findings(findings=[Finding(statement=f"Constat tiré de {i}.", doc_ids=[i]) for i in ids])
        elif role == "writer" and writer is not None:
            answer = writer(prompt)
        elif role in ("writer", "reviser"):
            # The writer's prompt lists its numbers and axes; the reviser's its sources and axes.
            match = re.search(r"Numéros de sources disponibles : ([\d, ]+)\.", prompt)
            numbers = [int(n) for n in match.group(1).split(",")] if match else []
            numbers = numbers or [int(n) for n in re.findall(r"^\[(\d+)\] ", prompt, flags=re.MULTILINE)]
            axis_ids = re.findall(r"^### (st-\d+) \(axe", prompt, flags=re.MULTILINE)
            axis_ids = axis_ids or re.findall(r"^- (st-\d+) : ", prompt, flags=re.MULTILINE)
            answer = (
                english_dossier(numbers, axis_ids) if language == "en" else dossier_from(numbers, axis_ids)
            )
        elif role == "critic":
            answer = PERFECT
        elif role == "researcher" and researcher is not None:
            return researcher(prompt)
        elif role == "judge":  # one score per response id the prompt shows (r0, r1, …)
            ids = re.findall(r'<reponse id="(r\d+)"', prompt)
            score = {"accuracy": 4, "usefulness": 4, "tone": 5, "format": 4, "justification": "Proche."}
            answer = {key: score for key in ids}
        else:
            return Reply.error(400, f"fake Gemini: unrecognised system instruction for model {model}")
        return Reply.json(answer, delay_s=delay_s, **tokens)

    return respond
