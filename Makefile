# Arbiter: the two set-up commands of the README live here.
#
# Everything runs in a project-local virtual environment, .venv (git-ignored), created on first
# use with $(PYTHON) -m venv and filled with pip; nothing depends on the machine's own packages.
# A stamp file named after a checksum of the requirements files records what was installed, so
# a second `make test` installs nothing; editing a requirements file changes the checksum and
# installs again.
PYTHON ?= python3
PORT ?= 8501
VENV ?= .venv
PY := $(VENV)/bin/python

RUN_SUM := $(shell cat requirements.txt | cksum | cut -d' ' -f1)
DEV_SUM := $(shell cat requirements.txt requirements-dev.txt | cksum | cut -d' ' -f1)
RUN_STAMP := $(VENV)/.installed-run-$(RUN_SUM)
DEV_STAMP := $(VENV)/.installed-dev-$(DEV_SUM)

.PHONY: run test test-fast deps test-deps venv browser lint bench

# --replicas auto: one Streamlit process per core (at most 4) behind HAProxy when it is
# installed (apt-get install haproxy), else one process and a one-line note
run: deps  ## install the runtime into .venv, build the store if missing, start the app
	$(PY) serve.py --replicas auto --server.port $(PORT)

venv: $(PY)

$(PY):
	$(PYTHON) -m venv $(VENV)

deps: $(RUN_STAMP)

test-deps: $(DEV_STAMP)

$(RUN_STAMP): requirements.txt | $(PY)
	$(PY) -m pip install -q -r requirements.txt
	rm -f $(VENV)/.installed-run-*
	touch $@

$(DEV_STAMP): requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install -q -r requirements-dev.txt
	rm -f $(VENV)/.installed-dev-* $(VENV)/.installed-run-*
	touch $@ $(RUN_STAMP)

browser:  ## Debian's Chromium for the Playwright tests (Playwright's own download cannot work here) and HAProxy for the replica tests
	@{ command -v chromium && command -v haproxy; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium haproxy; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium haproxy; fi; }

lint: test-deps
	$(PY) -m ruff check .

# pytest-xdist: one worker per core, a test module never split across workers (its
# module-scoped stores and servers are built once); TEST_WORKERS=0 runs in one process
TEST_WORKERS ?= 2
XDIST := $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)
# pytest rewrites the asserts of ~150 test modules in every worker (10 s each) unless it may
# cache the result as bytecode; a machine-wide PYTHONDONTWRITEBYTECODE=1 forbade that, so the
# test commands allow it (the caches go to git-ignored __pycache__ folders)
PYTEST := PYTHONDONTWRITEBYTECODE= $(PY) -m pytest

test: test-deps browser lint  ## install test dependencies and run every test
	$(PYTEST) -q $(XDIST)

test-fast: test-deps lint  ## lint and every test but the real-browser ones
	$(PYTEST) -q $(XDIST) -m "not browser"

bench: test-deps
	$(PY) benchmarks/bench_testbed.py
