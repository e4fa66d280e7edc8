# Two entry points for a fresh machine with python3 + make: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# Telemetry off in every process we start.
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export DO_NOT_TRACK := 1
export PREFECT_SERVER_UI_SHOW_PROMOTIONAL_CONTENT := false
# Bytecode written by every command started here (why: the comment above $(STAMP)).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test test-process lint typecheck install bench clean-results

# uv (pinned in constraints.txt, installed from PyPI into the venv) resolves and installs the same
# pinned set in seconds where pip took minutes; the pins stay exact (constraints.txt).
# Bytecode: uv writes no .pyc files, and a PYTHONDONTWRITEBYTECODE environment never writes them, so
# every `veille run` would compile Prefect from source, which doubled its start-up (docs/operations.md,
# "Start-up"). Compiling all of site-packages at install (`--compile-bytecode`) cost ~36 s of a first
# `make run`; instead every command started here runs with bytecode writing on (`unexport` above), so
# the first run compiles and caches exactly the modules a run imports (its Prefect server included)
# and later runs load them (docs/benchmarks.md, "Set-up").
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check "$$(grep '^uv==' constraints.txt)"
	$(BIN)/uv pip install -q --python $(BIN)/python -c constraints.txt -e '.[dev,dask]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/veille run $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# `make test` leaves out the tests marked `process` (they start real veille runs, Prefect servers,
# workers or a Dask cluster and took most of the suite's time); `make test-process` runs them, and CI
# (.ci/run) runs both (README, "Tests").
test: $(STAMP) lint typecheck
	$(BIN)/pytest -q -n 2 -m "not process" $(PYTEST_ARGS)

# Only the test files that say `mark.process` are collected: collecting all ~2,100 tests to keep the
# process ones cost each xdist worker ~14 s of CPU (docs/benchmarks.md, "Test suite"). A process test
# whose file does not say it would run in neither half: tests/conftest.py refuses it at collection.
# `--dist loadscope`: a module's tests go to one worker, so a module-scoped server or zygote
# (tests/crashkit.py) starts once, not once per worker its tests were spread over.
PROCESS_TEST_FILES = $(shell grep -rlE --include='test_*.py' 'mark\.process' tests | sort)

test-process: $(STAMP)
	$(BIN)/pytest -q -n 2 --dist loadscope -m process $(PROCESS_TEST_FILES) $(PYTEST_ARGS)

# --- Operating with Prefect (docs/operations.md) -----------------------------------------
# This checkout's server on loopback (UI on http://127.0.0.1:4200), the nightly deployment, a worker.
PREFECT_HOST ?= 127.0.0.1
PREFECT_PORT ?= 4200
PREFECT_API_URL ?= http://$(PREFECT_HOST):$(PREFECT_PORT)/api
POOL ?= veille-process

# deploy and worker refuse a server of another checkout on that port (`veille server --check`:
# one checkout, one server), unless PREFECT_API_URL was given (environment or command line).
ifeq ($(origin PREFECT_API_URL),file)
CHECK_SERVER := PREFECT_API_URL=$(PREFECT_API_URL) $(BIN)/veille server --check
else
CHECK_SERVER := true
endif

.PHONY: server deploy worker

# `veille server`: `prefect server start` with its database in this checkout's and venv's folder of
# PREFECT_HOME (veille.ops.checkout), PREFECT_UI_URL and PREFECT_UI_API_URL set (--port alone would
# leave the UI calling the API on 4200), refusing a port another checkout's server holds.
server: $(STAMP)
	$(BIN)/veille server --host $(PREFECT_HOST) --port $(PREFECT_PORT)

# Creates the process work pool and the model-call concurrency limit if missing, and per watch
# (deployment of prefect.yaml whose corpus's delivery.toml names [operators]) an automation
# notifying its operators of a failed night; then deploys every deployment of prefect.yaml (run from
# the repository root).
deploy: $(STAMP)
	$(CHECK_SERVER)
	PREFECT_API_URL=$(PREFECT_API_URL) $(BIN)/veille setup --pool $(POOL) --deployments prefect.yaml
	PREFECT_API_URL=$(PREFECT_API_URL) $(BIN)/prefect --no-prompt deploy --all --pool $(POOL)

worker: $(STAMP)
	$(CHECK_SERVER)
	PREFECT_API_URL=$(PREFECT_API_URL) PREFECT_UI_URL=$${PREFECT_UI_URL:-http://$(PREFECT_HOST):$(PREFECT_PORT)} \
	$(BIN)/prefect worker start --pool $(POOL) --type process

# Deletes persisted Prefect task results and cache records; ARGS=--responses also drops the
# model response cache, ARGS=--dry-run only lists.
clean-results: $(STAMP)
	$(BIN)/veille clean $(ARGS)
