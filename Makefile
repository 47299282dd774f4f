# Everything a fresh clone needs is installed here: `make test` and `make demo` are the only entry points.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lint demo bench clean

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest -q

# The example project needs nothing beyond the package, which $(STAMP) installs.
demo: $(STAMP)
	$(BIN)/python example_project/run_demo.py

clean:
	rm -rf $(VENV) build *.egg-info
