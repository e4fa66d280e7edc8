"""Expected failures are logged by Prefect's run loggers as one line, other errors with their traceback."""

from __future__ import annotations

import logging
import sys

import pytest

from veille.corpus.errors import CorpusError
from veille.models.gemini import GeminiConnectionError
from veille.ops.logfilter import RUN_LOGGERS, install_expected_failure_filter
from veille.steps.plan import PlanUnusableError
from veille.tasks.analyse import InjectedFaultError


def _log_failure(logger_name: str, exc: BaseException) -> logging.LogRecord:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger(logger_name)
    handler = Keep()
    logger.addHandler(handler)
    try:
        try:
            raise exc
        except BaseException:
            logger.error("Task run failed with exception: %r", exc, exc_info=True)
    finally:
        logger.removeHandler(handler)
    (record,) = records
    return record


@pytest.mark.parametrize("name", RUN_LOGGERS)
@pytest.mark.parametrize(
    "exc",
    [
        InjectedFaultError("st-2: injected fault (fail_subtasks)"),
        CorpusError("corpus/docs/a.md", "id", "a lowercase id", "got 'Doc'"),
        PlanUnusableError("plan inutilisable"),
        GeminiConnectionError(
            "cannot connect to the Gemini API at http://127.0.0.1:9", error_class="ConnectError"
        ),
    ],
    ids=lambda e: type(e).__name__,
)
def test_expected_failures_lose_their_traceback(name: str, exc: BaseException) -> None:
    install_expected_failure_filter()
    install_expected_failure_filter()  # idempotent
    assert sum(type(f).__name__ == "ExpectedFailureFilter" for f in logging.getLogger(name).filters) == 1
    record = _log_failure(name, exc)
    text = logging.Formatter().format(record)
    assert "Traceback" not in text and "\n" not in text
    assert type(exc).__name__ in text and str(exc).split(":")[0] in text


@pytest.mark.parametrize("name", RUN_LOGGERS)
def test_a_flow_that_returned_a_failed_state_is_one_line_with_its_message(name: str) -> None:
    from prefect.exceptions import FailedRun

    install_expected_failure_filter()
    exc = FailedRun("1 branch(es) failed: st-2; partial report in /w/runs/r")
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger, handler = logging.getLogger(name), Keep()
    logger.addHandler(handler)
    try:
        try:
            raise exc
        except FailedRun:
            logger.error("Engine execution exited with unexpected exception", exc_info=True)
    finally:
        logger.removeHandler(handler)
    (record,) = records
    text = logging.Formatter().format(record)
    assert "\n" not in text and "Traceback" not in text
    # A partial night (a drill's, or a branch that failed) is the state the flow returned, not a crash
    # (issue 39 item 4): a warning with the state's message, never « unexpected exception » at ERROR.
    assert record.levelno == logging.WARNING and record.levelname == "WARNING"
    assert "unexpected exception" not in text and "FailedRun" not in text
    assert text.endswith("(not a crash): 1 branch(es) failed: st-2; partial report in /w/runs/r")


def test_other_errors_keep_their_traceback() -> None:
    install_expected_failure_filter()
    record = _log_failure("prefect.task_runs", ValueError("a bug"))
    assert record.exc_info is not None and record.exc_info[0] is ValueError
    assert "Traceback" in logging.Formatter().format(record)
    assert sys.exc_info() == (None, None, None)
