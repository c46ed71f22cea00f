# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/designer audit examples/mechanisms/q2x3.csv
	@echo
	$(BIN)/designer audit examples/mechanisms/gwrr.csv

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check designer tests benchmarks examples

bench: $(STAMP)
	$(BIN)/python benchmarks/transforms.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
