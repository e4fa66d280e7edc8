"""The nightly flow's parameters are recorded as Prefect records them, without FastAPI when plain
(veille.ops.flowparams).

For any parameters drawn from plain JSON values (None, booleans, integers, strings, lists of them)
and from values that are not (enums, paths, tuples, floats, nested dicts), the flow's
``serialize_parameters`` equals Prefect's own method and FastAPI's ``jsonable_encoder``; and the
parameters ``veille run`` passes are recorded in a fresh interpreter without importing FastAPI.
"""

from __future__ import annotations

import enum
import subprocess
import sys
from pathlib import Path
from typing import Any

from fastapi.encoders import jsonable_encoder
from hypothesis import given, settings
from hypothesis import strategies as st
from prefect import Flow

from veille.flows.veille import veille_flow


class Colour(enum.StrEnum):
    RED = "red"


SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=12)
PLAIN = SCALARS | st.lists(SCALARS, max_size=4)
OTHER = (
    st.sampled_from([Colour.RED, Path("/tmp/x"), ("a", 1)])
    | st.floats(allow_nan=False)
    | st.dictionaries(st.text(max_size=4), SCALARS, max_size=3)
    | st.lists(st.sampled_from([Colour.RED, Path("p")]), min_size=1, max_size=2)
)
NAMES = st.text(alphabet="abcdefgh_", min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(NAMES, PLAIN | OTHER, max_size=6))
def test_parameters_are_recorded_as_prefect_records_them(parameters: dict[str, Any]) -> None:
    recorded = veille_flow.serialize_parameters(parameters)
    assert recorded == Flow.serialize_parameters(veille_flow, parameters)
    assert recorded == {key: jsonable_encoder(value) for key, value in parameters.items()}
    # Same types too (True == 1, but a bool recorded as an int would not be the same JSON).
    assert [type(v) for v in recorded.values()] == [type(v) for v in jsonable_encoder(parameters).values()]


def test_a_recorded_list_is_a_copy() -> None:
    ids = ["st-2"]
    recorded = veille_flow.serialize_parameters({"fail_subtasks": ids})
    assert recorded == {"fail_subtasks": ["st-2"]} and recorded["fail_subtasks"] is not ids


def test_the_parameters_of_veille_run_are_recorded_without_fastapi(tmp_path: Path) -> None:
    script = f"""
import sys
from veille.flows.veille import veille_flow
parameters = dict(corpus={str(tmp_path)!r}, warehouse={str(tmp_path / "wh")!r}, backend="offline",
                  strict=False, max_rounds=None, use_cache=None, web=False, request_source=None)
assert veille_flow.serialize_parameters(parameters) == parameters
print(sorted(name for name in sys.modules if name.split(".")[0] == "fastapi"))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
