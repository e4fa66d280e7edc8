"""The model call path is short (issue 38 item 5): at most five veille functions from a role's entry
to the provider's ``generate``, measured on the stack by a recording provider (testkit/callpath.py;
``bench/call_path.py`` prints the chains, docs/architecture.md states the count)."""

from __future__ import annotations

import pytest

from testkit.callpath import measure

LONGEST = 5


def test_a_role_asked_through_the_runs_client_reaches_the_provider_within_five_functions() -> None:
    path = measure("run")
    assert path.count <= LONGEST, path.render()
    # The chain is read from the role's entry down: the client's ask first, the request last.
    assert path.functions[0] == "veille.models.caller:ModelClient.ask", path.render()
    assert path.functions[-1].startswith("veille.models.attempts:"), path.render()
    assert 0 < path.hop < path.count  # both sides of the thread hop were read


@pytest.mark.usefixtures("prefect_harness")
def test_a_role_asked_through_the_cached_asker_reaches_the_provider_within_five_functions() -> None:
    path = measure("cached")
    assert path.count <= LONGEST, path.render()
    assert path.functions[0] == "veille.tasks.asks:CachedAsker.ask", path.render()
    assert "veille.tasks.asks:ask" in path.functions  # through the Prefect task that caches it
    assert path.functions[-1].startswith("veille.models.attempts:"), path.render()
