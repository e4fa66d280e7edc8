"""A pytest plugin for bench/suite.py ``--per-test``: each test's CPU, appended as one JSON line to
the file named by ``CPU_PER_TEST_FILE`` (not a ``VEILLE_`` name: tests/conftest.py clears those).
The suite does not load it; bench/suite.py passes ``-p tests.cpu_per_test``.

A test's CPU is its process's user + system time over setup, call and teardown, and that of the
child processes reaped meanwhile (``RUSAGE_CHILDREN``). A session fixture's teardown runs in a
worker's last test, so a server started for the session is counted there: read it as the fixture's.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator

import pytest

__all__ = ["pytest_runtest_protocol"]


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    own, children = _cpu()
    wall = time.perf_counter()
    yield
    own2, children2 = _cpu()
    row = {
        "id": item.nodeid,
        "self": round(own2 - own, 4),
        "children": round(children2 - children, 4),
        "wall": round(time.perf_counter() - wall, 4),
    }
    # One short line per write in append mode: the xdist workers' lines do not interleave.
    with open(os.environ["CPU_PER_TEST_FILE"], "a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")
