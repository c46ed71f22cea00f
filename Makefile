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
	@echo "== The best yes / no / don't-know mechanism at privacy budget eps = 1 (problems/gwrr-dont-know.toml):"
	@echo "== rows = true answer, columns = what the respondent reports; certified in exact arithmetic."
	@$(BIN)/designer design problems/gwrr-dont-know.toml
	@echo
	@echo "== The same design over six budgets, next to the paper's closed form (Cor 3.12); diff ~ 1e-16:"
	@$(BIN)/designer compare problems/gwrr-dont-know.toml --eps 0.5:3:6
	@echo
	@echo "== Next: the README's recipes; put designer on your PATH with: source .venv/bin/activate"

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist worksteal

lint: $(STAMP)
	$(BIN)/ruff check designer tests benchmarks examples
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/transforms.py
	$(BIN)/python benchmarks/design.py --timeout 600
	$(BIN)/python benchmarks/speed.py
	$(BIN)/python benchmarks/regression.py
	$(BIN)/python benchmarks/planning.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
