# Drillbook tasks. `make run` and `make test` are the README's two commands; everything they need
# (virtual environment, front-end files, database schema, test browser) is set up on the way.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test lint types docs pytest pytest-postgres vendor migrate browser sandbox bench clean

run: $(VENV)/.installed vendor sandbox migrate
	$(BIN)/python -m app serve --host $(HOST) --port $(PORT)

test: $(VENV)/.installed vendor browser sandbox lint docs pytest pytest-postgres

# Exactly the pre-commit hooks (.pre-commit-config.yaml): ruff check, ruff format --check, mypy,
# codespell, each the pinned tool in .venv. Needs neither the network nor `pre-commit install`.
lint: $(VENV)/.installed
	$(BIN)/pre-commit run --all-files --show-diff-on-failure

# mypy alone, as its hook runs it.
types: $(VENV)/.installed
	$(BIN)/pre-commit run --all-files mypy

# The documentation site (mkdocs.yml, docs/) into the git-ignored site/. --strict turns every
# warning into a failure: a broken link or anchor, a page left out of the nav, a missing
# included file. NO_MKDOCS_2_WARNING silences Material's end-of-life banner, which is no warning.
docs: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

# Two test processes (the machines have two cores); tests that share a module's or the browser
# tests' server stay in one process (tests/groups.py: xdist's own grouping no longer works).
PYTEST := $(BIN)/python -m pytest -n 2 --dist loadgroup

pytest: $(VENV)/.installed vendor browser sandbox
	$(PYTEST)

# The app tests that have a database again, each on a throw-away PostgreSQL database copied
# from one migrated per process (tests/conftest.py). Without a server on 127.0.0.1:5432 this
# says so in one line, except under CI=true, where it fails. Left out: the tests that start
# servers of their own (the class load and shutdown tests run the embedded SQLite default; the
# external-cluster and scale-out tests run on PostgreSQL already) and the pool keeper's; and the
# leak walks over every case and every round variant, which read what the runs show (the SQLite
# run covers them; on PostgreSQL the other case and round tests run); and the hostile code,
# which tests the sandbox, not the database (the other exercise tests run on PostgreSQL).
PG_LEFT_OUT := $(foreach f,test_class_load test_shutdown runner/test_external_cluster \
	runner/test_scale_out runner/test_pool exercises/test_exercise_hostile,--ignore=tests/app/$(f).py) \
	--deselect=tests/app/cases/test_cases.py::test_no_response_of_an_open_case_names_its_cause \
	--deselect=tests/app/practice/test_rounds.py::test_no_response_names_the_setup
PG_PROBE := import psycopg; psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", connect_timeout=3).close()
pytest-postgres: $(VENV)/.installed vendor
	@if $(BIN)/python -c '$(PG_PROBE)' 2>/dev/null; then \
		DRILLBOOK_TEST_DATABASE=postgresql $(PYTEST) $(PG_LEFT_OUT) tests/app; \
	elif [ "$${CI:-}" = "true" ]; then \
		echo "no PostgreSQL on 127.0.0.1:5432, and CI must test on it"; exit 1; \
	else \
		echo "skipped: the app tests on PostgreSQL (no server on 127.0.0.1:5432)"; \
	fi

# The lock files pin every package; torch==2.13.0 resolves to the CPU wheel on this kind of machine.
$(VENV)/.installed: requirements.lock requirements-dev.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.lock
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

# htmx, its SSE extension, plotly.js's cartesian bundle and CodeMirror (bundled with our editor
# by esbuild) come from the npm registry (pinned by package-lock.json). Nothing third-party is
# committed.
vendor: static/vendor/.copied

static/vendor/.copied: package-lock.json $(VENV)/.installed static/editor/editor.js scripts/vendor_static.py
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	$(BIN)/python scripts/vendor_static.py
	touch $@

migrate: $(VENV)/.installed
	$(BIN)/python -m app migrate

browser:
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }

# Learners' code runs under bubblewrap (drills/sandbox). Without it (or without user namespaces)
# the server still starts and says, once, that code exercises are off.
sandbox:
	@command -v bwrap >/dev/null || { apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null; } \
		|| echo "could not install bubblewrap: code exercises will be off"

bench: $(VENV)/.installed
	$(BIN)/python -m bench.submit_latency

clean:
	rm -rf $(VENV) node_modules static/vendor site
