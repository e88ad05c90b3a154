# Two commands from a fresh clone: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# The workspace `make run` serves: WORKBENCH_WORKSPACE (WORKSPACE is kept as an alias), default the demo.
WORKBENCH_WORKSPACE ?= $(or $(WORKSPACE),data/demo)
PORT ?= 8501
# localhost by default (and no external-IP lookup); `make run ADDRESS=0.0.0.0` to serve other machines
ADDRESS ?= localhost
# The suite runs on every core (pytest-xdist; tests that share a server stay on one worker:
# --dist loadgroup); `make test PYTEST_ARGS=-n0` runs it in one process.
PYTEST_ARGS ?= -n auto --dist loadgroup
# The original systems' reference files, when a checkout of the shared folder sits beside this one
# (as in CI): their tests then run instead of skipping.
WORKBENCH_FIXTURES ?= $(if $(wildcard ../shared/fixtures/README.md),$(abspath ../shared/fixtures),)
export WORKBENCH_FIXTURES

.PHONY: run test test-all test-fast install install-dev demo lint bench clean

# The project itself is installed editable: the `workbench` command (= python -m core) works from any folder.
$(VENV)/.runtime: requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps -e .
	touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	touch $@

install: $(VENV)/.runtime
install-dev: $(VENV)/.dev

# Generates the demo only into the demo workspace (data/demo, or a folder that already holds the demo);
# any other workspace is served as it is, and nothing is written into it or beside it.
demo: install
	$(PY) -m core --workspace "$(WORKBENCH_WORKSPACE)" demo --if-missing --only-demo-workspace

# The app's bytecode is written before the server starts (as pip does for installed packages), so
# even the first start does not compile the pages' modules while the first page waits for them.
run: demo
	$(PY) -m compileall -q core app_pages main.py app.py >/dev/null
	@echo "Scale Workbench: http://$(ADDRESS):$(PORT)  (workspace: $(abspath $(WORKBENCH_WORKSPACE)))"
	WORKBENCH_WORKSPACE="$(WORKBENCH_WORKSPACE)" $(PY) -m streamlit run app.py --server.port $(PORT) --server.address $(ADDRESS) --server.headless true --browser.gatherUsageStats false

lint: install-dev
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports

# The suite CI runs: every test but the heavy ones (a few end-to-end walks, kill and property tests
# that take minutes of CPU and repeat what quicker tests check); `make test-all` runs them too.
test: install-dev
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports
	$(PY) -m pytest $(PYTEST_ARGS) -m "not heavy"

test-all: install-dev
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports
	$(PY) -m pytest $(PYTEST_ARGS)

# The suite without the browser tests (no Chromium needed): the quick loop while developing.
test-fast: install-dev
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports
	$(PY) -m pytest $(PYTEST_ARGS) -m "not e2e and not heavy"

bench: install-dev
	$(PY) bench/import_scan.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
