# Everything a fresh clone needs is installed here: `make test`, `make docs`, `make demo` and
# `make bench` need nothing else.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The demo needs the package alone; `make test` adds the test extra to the same venv.
DEMO_STAMP := $(VENV)/.installed-package
# The same suite against the lowest versions setup.cfg declares (constraints-lowest.txt).
LOWEST ?= .venv-lowest
LOWEST_STAMP := $(LOWEST)/.installed

.PHONY: test lint docs demo bench clean

# The docs extra too: `make lint` type-checks the documentation's Sphinx extension.
$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e '.[test,docs]'
	touch $@

$(DEMO_STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(LOWEST_STAMP): setup.cfg pyproject.toml constraints-lowest.txt
	$(PYTHON) -m venv $(LOWEST)
	$(LOWEST)/bin/python -m pip install --quiet -c constraints-lowest.txt -e '.[test]'
	touch $@

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# Warnings are errors (-W, all reported: --keep-going), and so is a link to nothing (-n); the
# doctest builder runs the pages' {doctest} examples. The pages are read afresh (-E: an
# incremental build leaves other pages' menus stale), then the doctest build reuses them.
SPHINX := $(BIN)/sphinx-build -W --keep-going -n -q -d docs/_build/doctrees
docs: $(STAMP)
	$(SPHINX) -E -b html docs docs/_build/html
	$(SPHINX) -b doctest docs docs/_build/doctest
	@echo "The documentation is built: open docs/_build/html/index.html"

test: lint docs $(LOWEST_STAMP)
	$(BIN)/python -m pytest -q
	$(LOWEST)/bin/python -m pytest -q -m "not newest_scrapy and not release"

demo: $(DEMO_STAMP)
	$(BIN)/python example_project/run_demo.py

# Scripts, not tests: each prints Markdown tables and writes its figures to
# benchmarks/results/<name>.json; a quarter of an hour or more in all (each one's time in
# benchmarks/README.md).
bench: $(STAMP)
	$(BIN)/python -m benchmarks.matcher
	$(BIN)/python -m benchmarks.meta
	$(BIN)/python -m benchmarks.usage_values
	$(BIN)/python -m benchmarks.crawl
	$(BIN)/python -m benchmarks.tiers
	$(BIN)/python -m benchmarks.broad
	$(BIN)/python -m benchmarks.parked
	$(BIN)/python -m benchmarks.redis_memory
	$(BIN)/python -m benchmarks.fleet
	$(BIN)/python -m benchmarks.shared_responses
	$(BIN)/python -m benchmarks.crawldelay

clean:
	rm -rf $(VENV) $(LOWEST) build *.egg-info docs/_build
