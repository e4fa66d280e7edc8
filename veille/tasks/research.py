"""Task: one grounded web research per sub-task (``--web``, seed 004), mapped like the analysts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prefect import unmapped
from prefect.cache_policies import NO_CACHE

from veille.alerts import Alert
from veille.models.grounding import GOOGLE_SEARCH
from veille.roles.base import Asker
from veille.roles.planner import SubTask
from veille.roles.researcher import RESEARCHER
from veille.run.inputs import collect_mapped
from veille.settings import Settings
from veille.steps.research import WebResearch, research_failed, research_plan, research_subtask
from veille.tasks.clients import RunClient
from veille.tasks.datatask import task

__all__ = ["PendingResearch", "collect_research", "research", "search_web"]


# No task retries: each would be another billed search (the backend already paces 429s), and a
# failure is an alert, not a failed branch. NO_CACHE: the response cache spares an unchanged rerun
# the same day (the date is in the prompt), so web results are never older than a day.
@task(name="research", task_run_name="research-{subtask_id}", cache_policy=NO_CACHE)
def research(sub_task: SubTask, subtask_id: str, client: Asker, request_title: str, date: str) -> WebResearch:
    """The sub-task's grounded call; its findings cite pages from the grounding chunks only."""
    del subtask_id  # the task run's name
    return research_subtask(client, sub_task, request_title=request_title, date=date)


def collect_research(sub_tasks: Sequence[SubTask], futures: Sequence[Any]) -> list[WebResearch]:
    """One :class:`WebResearch` per researched sub-task, in plan order; a task that raised anyway
    (not a model error: those are alerts already) becomes a failed research with its alert."""
    return collect_mapped(sub_tasks, futures, lambda st, error: research_failed(st.id, error), "research")


@dataclass
class PendingResearch:
    """The grounded calls started for a run (running alongside the analysts) and the planning alerts."""

    sub_tasks: list[SubTask]
    futures: list[Any]
    alerts: list[Alert]

    def collect(self) -> list[WebResearch]:
        return collect_research(self.sub_tasks, self.futures)


def search_web(
    client: RunClient, sub_tasks: Sequence[SubTask], settings: Settings, request_title: str, day: str
) -> PendingResearch:
    """Start the ``--web`` research of the sub-tasks the budget allows (none without ``web``, none
    offline: a warning); it runs while the analysts do, :meth:`PendingResearch.collect` waits."""
    searches = GOOGLE_SEARCH in client.role_backend(RESEARCHER.name).tools  # what the provider declares
    chosen, alerts = research_plan(sub_tasks, web=settings.web, searches=searches, budget=settings.web_budget)
    futures = (
        list(
            research.map(
                chosen,
                [st.id for st in chosen],
                client=unmapped(client),
                request_title=unmapped(request_title),
                date=unmapped(day),
            )
        )
        if chosen
        else []
    )
    return PendingResearch(chosen, futures, alerts)
