"""A tiny stand-in flow used to exercise the server/worker/deploy machinery."""

from __future__ import annotations

import json
import os
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import INPUTS
from prefect.runtime import flow_run


def _out() -> Path:
    return Path(os.environ["TINY_OUT"])


@task(persist_result=True, cache_policy=INPUTS, result_storage=None)
def branch(i: int, fail: bool) -> int:
    with (_out() / "journal.jsonl").open("a") as fh:
        fh.write(json.dumps({"branch": i, "run_count": flow_run.run_count}) + "\n")
    if fail:
        raise RuntimeError(f"branch {i} fault")
    return i * 10


@flow(name="tiny")
def tiny_flow(n: int = 3, fail: list[int] | None = None) -> int:
    first = flow_run.run_count <= 1
    failing = set(fail or []) if first else set()
    futures = branch.with_options(result_storage=_out() / "results").map(
        list(range(n)), [i in failing for i in range(n)]
    )
    return sum(f.result() for f in futures)
