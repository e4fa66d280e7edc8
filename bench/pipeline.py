"""Pipeline benchmarks (issue 4): wall time of a full offline run, fan-out, read amplification, planner prompt.

Usage (figures recorded in docs/benchmarks.md, section "Pipeline"):

    .venv/bin/python bench/pipeline.py                 # everything
    .venv/bin/python bench/pipeline.py --only offline  # or: server, fanout

Each measurement runs in a fresh child process (``--child``) so Python and Prefect start cold:

- ``offline``: full run of the veille flow on the bundled corpus with the offline engine, Prefect in
  ephemeral mode (the default without PREFECT_API_URL). Split: imports; Prefect start-up (the
  temporary API server the client starts, timed by starting it explicitly first); pipeline work (the
  flow call: ingest → … → outputs, grading and Parquet included). Twice: with a fresh PREFECT_HOME
  (database created and migrated) and with a warm one (second run on the same home).
- ``server``: the same run against a Prefect server already running on 127.0.0.1 (`make server`):
  start-up is then only the client's first API call.
- ``fanout``: the flow through the real google-genai SDK against the fake Gemini server adding 1 s of
  latency per call, with 6 sub-tasks (the default max_subtasks); the analyse stage (planner reply sent →
  writer request received, server clock) with the default thread pool vs ``ThreadPoolTaskRunner(1)``.
  ``--samples N`` runs per side (default 3), the sides alternated (parallel, serial, parallel…) so a
  change of the machine's load falls on both; the ratio is median parallel ÷ median serial, with
  every sample and its load printed.
- read amplification (input tokens of the run ÷ tokens of the corpus files) and planner prompt
  tokens per catalogue line, from the offline run's call journal (offline token counts are estimates,
  ceil(chars / 4), see veille/tokens.py).

Every figure is printed with the command, the wall and CPU time (this process and its children)
and the load average before and after (the machine is shared).

Targets: offline total ≤ 15 s; fan-out ratio ≤ 0.20 (6 branches, issue 40); read amplification ≤ 2.0; planner ≤ 50 tokens/line.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[1]
CORPUS = PROJECT_ROOT / "corpus"
TELEMETRY_OFF = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_UI_SHOW_PROMOTIONAL_CONTENT": "false",
}
FANOUT_AXES = [  # six branches: the bundled max_subtasks
    ("Quels débits Kestrel atteint-il sur notre charge ?", ["doc-01"]),
    ("Quels débits Tamaris atteint-il sur notre charge ?", ["doc-02"]),
    ("Quel est le coût des licences pour 12 GPU ?", ["doc-03"]),
    ("Combien de GPU la plateforme aura-t-elle en 2027 ?", ["doc-04"]),
    ("La faille d'Orvet 2.4 est-elle décrite ?", ["doc-05"]),
    ("Orvet 2.5 corrige-t-il la faille ?", ["doc-06"]),
]


# ------------------------------------------------------------------------------------ child side
def _child_offline(warehouse: Path, start_server: bool) -> dict[str, Any]:
    t0 = time.perf_counter()
    from veille.flows.veille import veille_flow

    t1 = time.perf_counter()
    if start_server:
        # What the Prefect client does on its first API call without PREFECT_API_URL, done
        # explicitly so it can be timed apart from the flow.
        from prefect.server.api.server import SubprocessASGIServer

        SubprocessASGIServer().start()
    t2 = time.perf_counter()
    os.environ["VEILLE_WAREHOUSE_DIR"] = str(warehouse)
    state = veille_flow(corpus=str(CORPUS), backend="offline", return_state=True)
    t3 = time.perf_counter()
    if not state.is_completed():
        raise SystemExit(f"offline run ended {state.type}: {state.message}")
    run_dir = Path(state.result())
    return {
        "import_s": t1 - t0,
        "startup_s": t2 - t1,
        "pipeline_s": t3 - t2,
        "total_s": t3 - t0,
        "run_dir": str(run_dir),
        **_token_figures(run_dir),
    }


def _token_figures(run_dir: Path) -> dict[str, Any]:
    from veille.journal import read_journal
    from veille.tokens import estimate_tokens

    records = read_journal(run_dir / "calls.jsonl")
    corpus_tokens = sum(
        estimate_tokens(p.read_text(encoding="utf-8")) for p in (CORPUS / "docs").glob("*.md")
    )
    pipeline_in = sum(r.input_tokens for r in records if r.role != "judge")
    all_in = sum(r.input_tokens for r in records)
    planner = [r for r in records if r.role == "planner" and r.status == "ok"]
    lines = len(list((CORPUS / "docs").glob("*.md")))
    return {
        "corpus_tokens": corpus_tokens,
        "input_tokens_pipeline": pipeline_in,
        "input_tokens_with_judge": all_in,
        "read_amplification": pipeline_in / corpus_tokens,
        "read_amplification_with_judge": all_in / corpus_tokens,
        "planner_input_tokens": planner[-1].input_tokens if planner else None,
        "planner_tokens_per_line": planner[-1].input_tokens / lines if planner else None,
        "catalogue_lines": lines,
    }


def _child_fanout(workdir: Path, samples: int) -> dict[str, Any]:
    sys.path.insert(0, str(PROJECT_ROOT))
    from prefect.task_runners import ThreadPoolTaskRunner

    from testkit.fake_gemini import FakeGemini
    from testkit.flowkit import write_corpus
    from testkit.gemini_script import gemini_responder
    from veille.flows.veille import veille_flow

    corpus = write_corpus(workdir / "corpus")
    os.environ.update(
        {
            "GEMINI_API_KEY": "bench-fake-key",
            "VEILLE_GEMINI_API_VERSION": "v1beta",
            "VEILLE_USE_CACHE": "false",
        }
    )
    flows = {
        "parallel": veille_flow,
        "serial": veille_flow.with_options(task_runner=ThreadPoolTaskRunner(max_workers=1)),
    }
    out: dict[str, Any] = {"parallel": [], "serial": []}
    with FakeGemini(latency_s=1.0) as server:
        server.responder = gemini_responder(axes=FANOUT_AXES)
        os.environ["VEILLE_GEMINI_BASE_URL"] = server.base_url
        # Warm-up: starts the ephemeral API so no measured run pays for it.
        os.environ["VEILLE_WAREHOUSE_DIR"] = str(workdir / "warmup")
        veille_flow(corpus=str(corpus), backend="gemini", use_cache=False, return_state=True)
        # Sides alternated: a change of the shared machine's load falls on both.
        for n in range(samples):
            for name, flow in flows.items():
                out[name].append(_fanout_sample(server, flow, corpus, workdir / f"{name}-{n}"))
    for name in flows:
        out[f"{name}_median"] = {
            key: statistics.median(s[key] for s in out[name])
            for key in ("analyse_stage_s", "analyst_calls_span_s", "flow_s", "flow_cpu_s")
        }
    par, ser = out["parallel_median"], out["serial_median"]
    out["ratio_stage"] = par["analyse_stage_s"] / ser["analyse_stage_s"]
    out["ratio_calls_span"] = par["analyst_calls_span_s"] / ser["analyst_calls_span_s"]
    out["ratio_flow"] = par["flow_s"] / ser["flow_s"]
    return out


def _fanout_sample(server: Any, flow: Any, corpus: Path, warehouse: Path) -> dict[str, Any]:
    """One run of the flow on the fake Gemini (fresh task caches): its stage and call spans."""
    from testkit.gemini_script import role_of

    server.reset()
    os.environ["VEILLE_WAREHOUSE_DIR"] = str(warehouse)
    load = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    state = flow(corpus=str(corpus), backend="gemini", use_cache=False, return_state=True)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if not state.is_completed():
        raise SystemExit(f"fan-out run ended {state.type}: {state.message}")
    requests = server.requests
    analysts = [r for r in requests if role_of(r.body) == "analyst"]
    planner_done = next(r.finished_at for r in requests if role_of(r.body) == "planner")
    writer_in = next(r.received_at for r in requests if role_of(r.body) == "writer")
    return {
        "load_before": load,
        "flow_s": wall,
        "flow_cpu_s": cpu,  # this process, every thread (the temporary API server apart)
        # planner reply sent -> writer request received: the whole mapped stage, Prefect
        # task scheduling and document fetches included
        "analyse_stage_s": writer_in - (planner_done or 0.0),
        # first analyst request -> last analyst reply: the model calls alone
        "analyst_calls_span_s": max(r.finished_at or 0.0 for r in analysts)
        - min(r.received_at for r in analysts),
        "analyst_calls": len(analysts),
        "max_in_flight": server.max_in_flight,
        "calls": len(requests),
    }


# ----------------------------------------------------------------------------------- parent side
def _run_child(mode: str, env: dict[str, str], *args: str) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", mode, *args]
    proc = subprocess.run(cmd, env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"child {mode} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VEILLE_", "PREFECT_"))}
    env.pop("GOOGLE_API_KEY", None)
    env.pop("GEMINI_API_KEY", None)
    env.update(TELEMETRY_OFF)
    env["PREFECT_HOME"] = str(home)
    env["PREFECT_LOGGING_LEVEL"] = "WARNING"
    env["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "300"  # a loaded machine: wait, do not fail
    return env


def _cpu_s() -> float:
    """User + system CPU of this process and its waited-for children (the benches' children)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median total (the machine is shared: single runs are noisy)."""
    ordered = sorted(runs, key=lambda r: r["total_s"])
    return {**ordered[len(ordered) // 2], "totals_s": [round(r["total_s"], 2) for r in runs]}


def bench_offline(tmp: Path, repeat: int) -> dict[str, Any]:
    home = tmp / "prefect-home"
    cold = _run_child("offline", _base_env(home), "--workdir", str(tmp / "cold"))
    warm = [
        _run_child("offline", _base_env(home), "--workdir", str(tmp / f"warm-{i}")) for i in range(repeat)
    ]
    return {"cold_home": cold, "warm_home": _median_run(warm)}


def bench_server(tmp: Path, repeat: int) -> dict[str, Any]:
    from veille.ops.server import free_port, server_env, start_prefect_process, stop_process, wait_healthy

    port = free_port()
    env = server_env(port=port, home=tmp / "server-home", base=_base_env(tmp / "server-home"))
    proc = start_prefect_process(["server", "start"], env=env, log_path=tmp / "server.log")
    try:
        ready_s = wait_healthy(env["PREFECT_API_URL"], proc=proc)
        first = _run_child("server", env, "--workdir", str(tmp / "server-1"))
        later = [
            _run_child("server", env, "--workdir", str(tmp / f"server-{i}")) for i in range(2, repeat + 2)
        ]
    finally:
        stop_process(proc)
    return {"server_ready_s": ready_s, "first": first, "second": _median_run(later)}


def bench_fanout(tmp: Path, samples: int) -> dict[str, Any]:
    return _run_child(
        "fanout",
        _base_env(tmp / "fanout-home"),
        "--workdir",
        str(tmp / "fanout"),
        "--samples",
        str(samples),
    )


def _print(results: dict[str, Any]) -> None:
    print(json.dumps(results, indent=2, default=str))
    lines = ["", "| measure | value | target |", "|---|---|---|"]
    for label, key in (("fresh PREFECT_HOME", "cold_home"), ("warm PREFECT_HOME, median", "warm_home")):
        r = results.get("offline", {}).get(key)
        if r:
            lines.append(
                f"| offline run, ephemeral API, {label}: imports / start-up / pipeline / total | "
                f"{r['import_s']:.1f} / {r['startup_s']:.1f} / {r['pipeline_s']:.1f} / **{r['total_s']:.1f} s**"
                + (f" (totals {r['totals_s']})" if "totals_s" in r else "")
                + " | ≤ 15 s |"
            )
    server = results.get("server")
    if server:
        for key, label in (("first", "first run"), ("second", "later runs, median")):
            r = server[key]
            lines.append(
                f"| offline run, running server ({label}): imports / pipeline / total | "
                f"{r['import_s']:.1f} / {r['pipeline_s']:.1f} / **{r['total_s']:.1f} s**"
                + (f" (totals {r['totals_s']})" if "totals_s" in r else "")
                + " | ≤ 15 s |"
            )
    offline = results.get("offline", {}).get("warm_home")
    if offline:
        lines.append(
            f"| read amplification (pipeline input tokens ÷ corpus tokens) | "
            f"{offline['input_tokens_pipeline']} ÷ {offline['corpus_tokens']} = **{offline['read_amplification']:.2f}** "
            f"(with the judge: {offline['read_amplification_with_judge']:.2f}) | ≤ 2.0 |"
        )
        lines.append(
            f"| planner input tokens per catalogue line | {offline['planner_input_tokens']} ÷ "
            f"{offline['catalogue_lines']} = **{offline['planner_tokens_per_line']:.1f}** | ≤ 50 |"
        )
    fan = results.get("fanout")
    if fan:
        p, s = fan["parallel_median"], fan["serial_median"]
        samples = fan["parallel"]
        lines.append(
            f"| fan-out, {samples[0]['analyst_calls']} sub-tasks, 1 s per call, {len(samples)} samples per side: "
            f"analyse stage (planner reply → writer request), median parallel / median serial | "
            f"{p['analyse_stage_s']:.2f} / {s['analyse_stage_s']:.2f} s = **{fan['ratio_stage']:.3f}** "
            f"(max in flight {max(r['max_in_flight'] for r in samples)}) | ≤ 0.20 |"
        )
        for side in ("parallel", "serial"):
            each = ", ".join(f"{r['analyse_stage_s']:.2f} s (load {r['load_before']:.1f})" for r in fan[side])
            lines.append(f"| fan-out: analyse stage, each {side} sample | {each} | — |")
        lines.append(
            f"| fan-out: analyst calls only (first request → last reply), medians parallel / serial | "
            f"{p['analyst_calls_span_s']:.2f} / {s['analyst_calls_span_s']:.2f} s = {fan['ratio_calls_span']:.2f} | — |"
        )
        lines.append(
            f"| fan-out, whole flow, medians parallel / serial: wall (CPU of the run process) | {p['flow_s']:.1f} "
            f"({p['flow_cpu_s']:.1f}) / {s['flow_s']:.1f} ({s['flow_cpu_s']:.1f}) s = {fan['ratio_flow']:.2f} | — |"
        )
    run = results["run"]
    lines.append("")
    lines.append(
        f"command: {run['command']} — {run['wall_s']:.1f} s wall, {run['cpu_s']:.1f} s CPU (user + system of "
        f"this process and its children), load average {run['load_before']:.1f} before, "
        f"{run['load_after']:.1f} after, {results['cpus']} CPUs"
    )
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["offline", "server", "fanout"], action="append")
    parser.add_argument("--repeat", type=int, default=3, help="warm runs per mode (the median is reported)")
    parser.add_argument("--samples", type=int, default=3, help="fan-out runs per side (medians compared)")
    parser.add_argument("--child", choices=["offline", "server", "fanout"], help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.workdir.mkdir(parents=True, exist_ok=True)
        if args.child == "fanout":
            result = _child_fanout(args.workdir, args.samples)
        else:
            result = _child_offline(args.workdir / "warehouse", start_server=args.child == "offline")
        print(json.dumps(result, default=str))
        return
    wanted = args.only or ["offline", "server", "fanout"]
    results: dict[str, Any] = {"cpus": os.cpu_count(), "loadavg_before": os.getloadavg()}
    load, wall, cpu = os.getloadavg()[0], time.perf_counter(), _cpu_s()
    with tempfile.TemporaryDirectory(prefix="veille-bench-") as tmp:
        if "offline" in wanted:
            results["offline"] = bench_offline(Path(tmp), args.repeat)
        if "server" in wanted:
            results["server"] = bench_server(Path(tmp), args.repeat)
        if "fanout" in wanted:
            results["fanout"] = bench_fanout(Path(tmp), args.samples)
    results["run"] = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "wall_s": time.perf_counter() - wall,
        "cpu_s": _cpu_s() - cpu,
        "load_before": load,
        "load_after": os.getloadavg()[0],
    }
    _print(results)


if __name__ == "__main__":
    main()
