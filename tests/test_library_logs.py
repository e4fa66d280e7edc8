"""A library's DEBUG lines stay out of the console by default (issue 39 item 4: « DEBUG | bm25s -
Building index from tokens » lines in `make run`'s output), whatever level the library gives itself."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import bm25s
import pytest

from veille.ops.logfilter import install_library_debug_filter


class _Keep(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.NOTSET)  # like Prefect's console handler: every level
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} | {record.name} - {record.getMessage()}")


@pytest.fixture()
def console() -> Iterator[_Keep]:
    root = logging.getLogger()
    handler, level = _Keep(), root.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING)  # Prefect's default root level
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def _index() -> None:
    """bm25s's own code path: it set its logger to DEBUG at import and logs while indexing."""
    model = bm25s.BM25()
    model.index(
        bm25s.tokenize(["un texte court", "un autre texte"], show_progress=False), show_progress=False
    )


def test_the_library_debug_line_is_dropped_and_own_lines_kept(console: _Keep) -> None:
    install_library_debug_filter()
    install_library_debug_filter()  # idempotent
    assert sum(type(f).__name__ == "LibraryDebugFilter" for f in console.filters) == 1
    _index()
    own = logging.getLogger("veille.test")
    own.setLevel(logging.DEBUG)  # this project's own level: asked for, so shown
    own.debug("own debug line")
    own.setLevel(logging.NOTSET)
    logging.getLogger("bm25s").warning("a library warning")
    assert not any("bm25s - Building index" in line for line in console.lines), console.lines
    assert "DEBUG | veille.test - own debug line" in console.lines
    assert "WARNING | bm25s - a library warning" in console.lines


def test_without_the_filter_bm25s_does_print_its_debug_line(console: _Keep) -> None:
    """The defect the filter answers is real: bm25s bypasses the root's WARNING level by itself."""
    _index()
    assert any("DEBUG | bm25s - Building index" in line for line in console.lines), console.lines


def test_a_root_at_debug_asks_for_every_debug_line(console: _Keep) -> None:
    install_library_debug_filter()
    logging.getLogger().setLevel(logging.DEBUG)
    _index()
    assert any("DEBUG | bm25s - Building index" in line for line in console.lines), console.lines


def test_the_flow_module_installs_it() -> None:
    import veille.flows.veille  # noqa: F401  # installs on import, as a CLI run or a deployment does

    handlers = logging.getLogger().handlers
    assert handlers and all(
        any(type(f).__name__ == "LibraryDebugFilter" for f in h.filters) for h in handlers
    )
