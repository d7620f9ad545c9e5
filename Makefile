# Arbiter: the two set-up commands of the README live here.
PYTHON ?= python3
PORT ?= 8501

.PHONY: run test deps test-deps browser lint bench

run: deps  ## install the runtime, then start the app (it builds its store on first start)
	$(PYTHON) -m streamlit run app.py --server.port $(PORT)

deps:
	$(PYTHON) -m pip install -q -r requirements.txt

test-deps:
	$(PYTHON) -m pip install -q -r requirements-dev.txt

browser:  ## Debian's Chromium for the Playwright tests (Playwright's own download cannot work here)
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium; fi; }

lint:
	$(PYTHON) -m ruff check .

test: test-deps browser lint  ## install test dependencies and run every test
	$(PYTHON) -m pytest -q

bench:
	$(PYTHON) benchmarks/bench_testbed.py
