"""`veille grade INPUT.jsonl --grader …`: per-row scores, per-grader summary, Parquet output, bad rows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from testkit.scripted import ScriptedModel
from veille import backends
from veille.cli import grade as cli_grade
from veille.graders.batch import SCORES_SCHEMA
from veille.models.base import ModelRequest
from veille.roles.judge import JudgeScore, JudgeVerdict, make_verdict
from veille.settings import Settings
from veille.warehouse import query

WACC_REF = "WACC ≈ 9,91 % ; coût des capitaux propres 10,34 % ; dette après impôt 4,15 % ; EV ≈ 1 705 M$."
SHARE_REF = "Ouvrez le rapport, cliquez sur Partager, choisissez le client."
ROWS = [
    {
        "prompt": "WACC ?",
        "response": "WACC 9,95 %, fonds propres 10,3 %, dette 4,2 %, EV 1 700 M.",
        "reference": WACC_REF,
    },
    {
        "prompt": "Partager ?",
        "response": "Cliquez sur Partager sur le rapport et choisissez le client.",
        "reference": SHARE_REF,
    },
    {"prompt": "WACC ?", "response": "Le WACC est de 1,33 %", "reference": WACC_REF},
]


@pytest.fixture()
def app() -> typer.Typer:
    app = typer.Typer()
    cli_grade.register(app)

    @app.callback()
    def _root() -> None:  # keeps `grade` a subcommand, as in the real CLI
        pass

    return app


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows) + "\n",
        encoding="utf-8",
    )
    return path


def invoke(app: typer.Typer, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_rule_graders_print_three_decimals_and_write_parquet(app: typer.Typer, tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "rows.jsonl", ROWS)
    code, out, err = invoke(app, "grade", str(source), "--grader", "numeric,rouge")
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.startswith("line")]
    assert [re.findall(r"numeric=(\S+)", line)[0] for line in lines] == ["0.875", "—", "0.000"]
    assert re.findall(r"rouge_l=(\d\.\d{3})", lines[1]) == [f"{12 / 19:.3f}"]
    summary = next(line for line in out.splitlines() if line.startswith("numeric ")).split()
    assert summary[:4] == ["numeric", "2", "2", "1"]  # 2 scored, 1 without a reference figure
    assert summary[4] == f"{0.875 / 2:.3f}"
    table = pq.read_table(tmp_path / "rows.scores.parquet")
    assert table.schema.equals(SCORES_SCHEMA)
    assert table.num_rows == 6
    first = next(r for r in table.to_pylist() if r["line"] == 1 and r["grader"] == "numeric")
    assert first["score"] == pytest.approx(0.875) and json.loads(first["details_json"])["figures"] == 4


def test_judge_graders_make_one_call_per_prompt(
    app: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def verdict(request: ModelRequest) -> JudgeVerdict:
        responses = request.input.responses
        return make_verdict(
            [
                JudgeScore(
                    accuracy=5 if "9,95" in r or "Cliquez" in r else 1,
                    usefulness=3,
                    tone=3,
                    format=3,
                    justification="—",
                )
                for r in responses
            ]
        )

    model = ScriptedModel(function=verdict)
    monkeypatch.setattr(backends, "build_backend", lambda settings: model)
    monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(tmp_path / "warehouse"))
    source = write_jsonl(tmp_path / "rows.jsonl", ROWS)
    out_path = tmp_path / "out" / "scores.parquet"
    code, out, err = invoke(
        app, "grade", str(source), "-g", "judge+numbers", "-g", "judge", "-o", str(out_path)
    )
    assert code == 0, err
    requests = model.requests_for("judge")
    assert len(requests) == 2  # "WACC ?" (2 responses together) and "Partager ?"
    assert sorted(len(r.input.responses) for r in requests) == [1, 2]
    judge_wacc = min((5 - 1) / 4, ((5 + 3 + 3 + 3) / 4 - 1) / 4)  # gated by accuracy
    line1 = next(line for line in out.splitlines() if line.startswith("line    1"))
    assert f"judge+numbers={0.5 * judge_wacc + 0.5 * 0.875:.3f}" in line1
    line2 = next(line for line in out.splitlines() if line.startswith("line    2"))
    assert f"judge+numbers={judge_wacc:.3f}" in line2  # no figure in the reference: judge alone
    rows = pq.read_table(out_path).to_pylist()
    assert {r["model"] for r in rows} == {Settings().role("judge").model}  # the judge role's model
    assert "judge: 2 call(s), 2 attempt(s)" in out
    assert "judge estimate: 2 call(s)" in err and "graded 2/2 prompt group(s)" in err
    # The judge's calls are in the warehouse like a night's: llm_calls and the runs row.
    _cols, calls = query(tmp_path / "warehouse" / "parquet", "select role, status from llm_calls")
    assert calls == [("judge", "ok"), ("judge", "ok")]
    _cols, runs = query(tmp_path / "warehouse" / "parquet", "select request_title, calls, status from runs")
    assert runs == [("veille grade rows.jsonl", 2, "completed")]


def test_a_paid_judge_run_above_the_threshold_needs_yes(
    app: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ScriptedModel(function=lambda request: make_verdict([_score() for _ in request.input.responses]))
    monkeypatch.setattr(backends, "build_backend", lambda settings: model)
    monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(tmp_path / "warehouse"))
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-real")
    source = write_jsonl(tmp_path / "rows.jsonl", ROWS)
    args = ("grade", str(source), "-g", "judge", "--backend", "gemini", "--confirm-above", "0")
    code, _out, err = invoke(app, *args)
    assert code == 2 and "--yes" in err and "judge estimate: 2 call(s)" in err
    assert model.requests == []  # nothing was asked, nothing recorded
    assert not (tmp_path / "warehouse" / "parquet").exists()
    # Under the threshold, or with --yes, it runs.
    assert invoke(app, *args[:-1], "1000")[0] == 0
    assert invoke(app, *args, "--yes")[0] == 0
    assert len(model.requests_for("judge")) == 4


def _score() -> JudgeScore:
    return JudgeScore(accuracy=3, usefulness=3, tone=3, format=3, justification="—")


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([ROWS[0], ROWS[1], "{not json"], "line 3: invalid JSON"),
        ([ROWS[0], "", {"prompt": "p", "response": "r"}], "line 3: field 'reference' is missing"),
        ([{"prompt": "p", "response": 3, "reference": "r"}], "line 1: field 'response' has JSON type int"),
        (["[1, 2]"], "line 1: expected a JSON object"),
        ([ROWS[0], {**ROWS[2], "reference": "autre"}], "line 2: reference differs from line 1"),
        ([{**ROWS[0], "score": 1}], "line 1: unknown field(s) ['score']"),
    ],
)
def test_bad_rows_name_their_line(
    app: typer.Typer, tmp_path: Path, lines: list[object], message: str
) -> None:
    source = write_jsonl(tmp_path / "bad.jsonl", lines)
    code, _out, err = invoke(app, "grade", str(source), "--grader", "rouge_l")
    assert code == 2
    assert str(source) in err and message in err
    assert not (tmp_path / "bad.scores.parquet").exists()


def test_bad_options_are_clear(app: typer.Typer, tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "rows.jsonl", ROWS)
    code, _, err = invoke(app, "grade", str(source), "--grader", "bleu")
    assert code == 2 and "unknown grader" in err and "rouge_l" in err
    code, _, err = invoke(app, "grade", str(source), "--grader", "label")
    assert code == 2 and "--labels" in err
    code, _, err = invoke(app, "grade", str(tmp_path / "missing.jsonl"), "--grader", "rouge")
    assert code == 2 and "file not found" in err
    code, _, err = invoke(app, "grade", str(source), "--grader", "judge", "--backend", "gemini")
    assert code == 2 and "cannot build the judge's model client" in err  # no key in tests


def test_format_and_label_graders(app: typer.Typer, tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "required": ["label"]}))
    rows = [
        {"prompt": "p", "response": '{"label": "oui"}', "reference": "oui"},
        {"prompt": "p", "response": "oui", "reference": "oui"},
    ]
    source = write_jsonl(tmp_path / "rows.jsonl", rows)
    code, out, err = invoke(
        app, "grade", str(source), "-g", "json,label,exact", "--schema", str(schema), "--labels", "oui,non"
    )
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.startswith("line")]
    assert "json_format=1.000" in lines[0] and "label=0.000" in lines[0]
    assert "json_format=0.000" in lines[1] and "label=1.000" in lines[1] and "exact=1.000" in lines[1]
