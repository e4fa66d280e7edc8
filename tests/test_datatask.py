"""veille.tasks.datatask: a veille task's arguments are data. A future or state given as an argument
itself is still waited for and resolved, and recorded as the run's input; nothing inside a value is
walked (a future held in a dict reaches the task as that future); ``map`` is Prefect's own (a mapped
list is split, ``unmapped`` stays whole), since a mapped run may go to another runner's workers."""

from __future__ import annotations

from typing import Any

import pytest
from prefect import flow
from prefect.utilities.annotations import unmapped

from veille.tasks.datatask import DataTask, task

pytestmark = pytest.mark.usefixtures("prefect_harness")


@task(name="double")
def double(value: int) -> int:
    return value * 2


@task(name="kinds")
def kinds(value: Any) -> str:
    return type(value).__name__ if not isinstance(value, dict) else type(value["inner"]).__name__


@task(name="pair")
def pair(value: int, fixed: list[int]) -> tuple[int, int]:
    return value, len(fixed)


def test_a_future_given_whole_is_resolved_and_one_inside_a_value_is_not_walked() -> None:
    @flow
    def night() -> tuple[int, str, str]:
        first = double.submit(2)
        resolved = double(first)  # the future itself: waited for and resolved, as Prefect does
        inside = kinds({"inner": first})  # inside a value: not walked, the task gets the future
        first.wait()
        return resolved, kinds(first), inside

    resolved, whole, inside = night()
    assert resolved == 8
    assert whole == "int"
    assert inside.endswith("Future"), inside


def test_map_splits_a_list_and_keeps_an_unmapped_value_whole() -> None:
    @flow
    def night() -> list[tuple[int, int]]:
        return [f.result() for f in pair.map([1, 2, 3], fixed=unmapped([7, 8]))]

    assert night() == [(1, 2), (2, 2), (3, 2)]


def test_with_options_keeps_the_data_task() -> None:
    copy = double.with_options(name="double-again")
    assert isinstance(copy, DataTask)
    assert copy.name == "double-again"
