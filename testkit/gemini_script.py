"""A fake-Gemini responder for the flow over the test corpus of testkit/flowkit.py.

The real SDK sends prompts, not payloads, so each role is recognised by its system instruction and
answered from what its prompt shows (document ids for analysts, source numbers for the writer).
"""

from __future__ import annotations

import json
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


# --- writers whose figures are wrong (issue 36): the verifier must leave none of them ----------------

_DOC_RE = re.compile(r'<document id="([^"]+)"[^>]*>\n(.*?)\n</document>', re.DOTALL)
_FIGURE_RE = re.compile(r"\d[\d\u202f\u00a0 ]*\d|\d")


def copying_analyst(prompt: str) -> Findings:
    """An analyst that copies each document's text as its finding (the figures as the source says)."""
    found = [Finding(statement=" ".join(body.split()), doc_ids=[i]) for i, body in _DOC_RE.findall(prompt)]
    return Findings(findings=found)


def _swap_names(text: str, names: Sequence[str]) -> str:
    """Each name replaced by the next one (« Kestrel » -> « Tamaris » -> « Orvet » -> « Kestrel »)."""
    pattern = re.compile("|".join(re.escape(n) for n in names))
    return pattern.sub(lambda m: names[(names.index(m.group(0)) + 1) % len(names)], text)


def _invent(text: str) -> str:
    """Every figure changed (« 1 180 » -> « 1 187 »): the same sentence, numbers no source gives."""
    return _FIGURE_RE.sub(lambda m: str(int(re.sub(r"\D", "", m.group(0))) + 7), text)


def alter_figures(text: str, mode: str, names: Sequence[str]) -> str:
    """``text`` as :func:`wrong_figures_writer` alters it."""
    return _swap_names(text, names) if mode == "swap" else _invent(text)


def wrong_figures_writer(mode: str, names: Sequence[str]) -> Callable[[str], Any]:
    """A writer (``gemini_responder(writer=…)``) answering with the findings, their figures swapped
    between products (``mode="swap"``, among ``names``) or invented (``mode="invent"``), plus the
    same points in a synthesis and a recommendation row."""

    def alter(text: str) -> str:
        return alter_figures(text, mode, names)

    def write(prompt: str) -> Any:
        dossier = findings_dossier(prompt)
        sections = [
            AxisSection(
                axis=s.axis, points=[KeyPoint(text=alter(p.text), citations=p.citations) for p in s.points]
            )
            for s in dossier.sections
        ]
        altered = [p for s in sections for p in s.points]
        extra = [CitedText(text=p.text, citations=p.citations) for p in altered[:2]]
        return dossier.model_copy(update={
            "sections": sections,
            "synthesis": [*dossier.synthesis, *extra][:5],
            "recommendation": [*dossier.recommendation, *extra[:1]],
        })  # fmt: skip

    return write


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


__all__ = [
    "ENDLESS_TOKENS",
    "MEDIOCRE_FIGURE",
    "alter_figures",
    "copying_analyst",
    "endless",
    "english_dossier",
    "findings_dossier",
    "gemini_responder",
    "mediocre",
    "role_of",
    "wrong_figures_writer",
]

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
    analyst: Callable[[str], Any] | None = None,
    language: str = "fr",
) -> Callable[[dict[str, Any], str], Reply]:
    """``FakeGemini.responder``: a valid answer for every role of the flow; the plan has one
    sub-task per ``(question, doc ids)`` of ``axes``; ``researcher(prompt)`` answers grounded calls
    (``--web``), which are refused without it; ``writer(prompt)`` answers the writer (e.g.
    :func:`findings_dossier`; by default every source number spread over the axes);
    ``analyst(prompt)`` the analysts (e.g. :func:`copying_analyst`); ``language``
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
        elif role == "analyst" and analyst is not None:
            answer = analyst(prompt)
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


# --- issue 38 (branch salvage): a mediocre model and a writer without end ----------------------------
# Wrappers of a responder (e.g. gemini_responder()): the answers a schema-following but mediocre
# model writes, and a writer that never stops but where the request's maxOutputTokens stops it.

MEDIOCRE_FIGURE = "1 180 tokens/s " * 20  # 300 characters: past the 200 a figure may hold
ENDLESS_TOKENS = 534_700  # what the writer of issue 38 answered when nothing capped it


def _answer_of(reply: Reply) -> tuple[dict[str, Any], Any] | None:
    payload = json.loads(reply.body)
    try:
        return payload, json.loads(payload["candidates"][0]["content"]["parts"][0]["text"])
    except (KeyError, IndexError, ValueError):
        return None


def _with_text(payload: dict[str, Any], text: str) -> Reply:
    payload["candidates"][0]["content"]["parts"][0]["text"] = text
    return Reply.raw(json.dumps(payload))


def _spoil(role: str, answer: Any) -> Any:
    """One invalid item in an otherwise valid answer, as a mediocre model writes it."""
    if role in ("analyst", "analyst_update") and answer.get("findings"):
        first = answer["findings"][0]
        first["figures"] = [*first.get("figures", []), MEDIOCRE_FIGURE]
        cited = first["doc_ids"][:1] or ["doc-01"]
        note = {"doc_ids": cited, "retained": cited[0], "reason": "Plus récent."}  # one document
        if role == "analyst_update":
            note = {
                "new_doc_id": cited[0],
                "other_doc_ids": [],
                "retained": cited[0],
                "reason": "Plus récent.",
            }
        answer["contradictions"] = [*answer.get("contradictions", []), note]
    elif role in ("writer", "reviser") and answer.get("sections"):
        point = {"text": "Un point sans source connue.", "citations": [999], "superseded": False}
        answer["sections"][0]["points"] = [*answer["sections"][0]["points"], point]
    return answer


def mediocre(responder: Callable[[dict[str, Any], str], Reply]) -> Callable[[dict[str, Any], str], Reply]:
    """``responder``'s answers with one invalid item each (analysts: a figure past its limit and a
    contradiction citing one document; writer and reviser: a key point citing no known source),
    written as a chatty model does: a sentence, then the JSON in a fenced block."""

    def respond(body: dict[str, Any], model: str) -> Reply:
        reply = responder(body, model)
        role = role_of(body)
        parsed = _answer_of(reply) if reply.status == 200 else None
        if parsed is None or role in ("researcher", "judge", "critic", "planner"):
            return reply
        payload, answer = parsed
        text = json.dumps(_spoil(role, answer), ensure_ascii=False)
        return _with_text(payload, f"Voici la réponse demandée :\n```json\n{text}\n```\nBonne lecture.")

    return respond


def endless(
    responder: Callable[[dict[str, Any], str], Reply], roles: Sequence[str] = ("writer",)
) -> Callable[[dict[str, Any], str], Reply]:
    """``roles`` answer without end: the text stops only at the request's ``maxOutputTokens`` (then
    ``MAX_TOKENS``, billed that many output tokens), or after :data:`ENDLESS_TOKENS` without one."""

    def respond(body: dict[str, Any], model: str) -> Reply:
        if role_of(body) not in roles:
            return responder(body, model)
        cap = body.get("generationConfig", {}).get("maxOutputTokens") or ENDLESS_TOKENS
        prompt = len(json.dumps(body.get("contents", []))) // 4
        text = '{"synthesis": [{"text": "' + "Kestrel " * 200  # cut: the rest was never sent
        return Reply.max_tokens(text, prompt_tokens=prompt, output_tokens=int(cap), model_version=model)

    return respond
