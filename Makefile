# Two commands set everything up on a fresh machine: `make demo` and `make test`.
# `make demo` installs designer's runtime from requirements/lock-runtime.txt; `make test` the runtime and the test
# toolchain from requirements/lock.txt. Every package pinned, with its hashes: the same versions on every machine.
# `make lock` resolves the newest releases again and rewrites both locks (the runtime lock within the full one's
# versions); commit them after `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCK   := requirements/lock.txt
RUNTIME_STAMP := $(VENV)/.runtime-installed
RUNTIME_LOCK  := requirements/lock-runtime.txt
# uv (resolver for `make lock` and for the newest / lowest runs of .ci/run) lives in a venv of its own.
TOOLS  := .tools
UV     := $(TOOLS)/bin/uv

.PHONY: demo test lint bench lock clean docs dist mutants mutants-changed mutation-base

$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r $(LOCK)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

# The runtime only (make demo): a .venv that has the full install already has all of it.
$(RUNTIME_STAMP): pyproject.toml $(RUNTIME_LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r $(RUNTIME_LOCK)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(RUNTIME_STAMP)

$(UV):
	test -x $(TOOLS)/bin/python || $(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check 'uv>=0.5'

lock: $(UV)
	$(UV) pip compile pyproject.toml --extra test --python-version 3.11 --generate-hashes --upgrade \
	    --quiet -o $(LOCK)
	$(UV) pip compile pyproject.toml --python-version 3.11 --generate-hashes --constraint $(LOCK) \
	    --quiet -o $(RUNTIME_LOCK)
	@echo "rewrote $(LOCK) and $(RUNTIME_LOCK); run 'make test', then commit them"

demo: $(RUNTIME_STAMP)
	@echo "== The best yes / no / don't-know mechanism at privacy budget eps = 1 (the bundled gwrr-dont-know):"
	@echo "== rows = true answer, columns = what the respondent reports; certified in exact arithmetic."
	@$(BIN)/designer design gwrr-dont-know
	@echo
	@echo "== The same design over six budgets, next to the paper's closed form (Cor 3.12); diff ~ 1e-16:"
	@$(BIN)/designer compare gwrr-dont-know --eps 0.5:3:6
	@echo
	@echo "== Next: the README's recipes; put designer on your PATH with: source .venv/bin/activate"

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist worksteal

# The documentation site into docs/_build/html, warnings as errors (-E: every page read again, so a warning of
# an unchanged page is not hidden by the cache). Installs the `docs` extra of pyproject.toml on first use.
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/sphinx-build -W --keep-going -E -b html -j 1 docs docs/_build/html  # sphinx-mathjax-offline is not parallel-safe
	@echo "built docs/_build/html/index.html"

# The sdist and the wheel into dist/ (an isolated build: setuptools from pyproject.toml's [build-system]). It needs
# `build` and nothing else: neither the runtime nor the test toolchain is installed for it.
dist:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check 'build>=1.2'
	rm -rf dist
	$(BIN)/python -m build --outdir dist

lint: $(STAMP)
	$(BIN)/ruff check designer tests benchmarks examples
	$(BIN)/mypy

# Every benchmark runs even when one misses its goal (a loaded machine); the target fails at the end, naming them.
bench: $(STAMP)
	@failed=""; \
	for b in "transforms.py" "design.py --timeout 600" "speed.py" "regression.py" "large_regression.py" "columns.py" "planning.py" "startup.py" "variance.py" "peers.py"; do \
		$(BIN)/python benchmarks/$$b || failed="$$failed $$b"; \
	done; \
	if [ -n "$$failed" ]; then echo "benchmarks that missed a goal or failed:$$failed" >&2; exit 1; fi

# Mutation testing of the modules that decide privacy and inference (benchmarks/mutation/targets.toml), one module
# at a time against its own tests, two children under `nice`: `make mutants` runs every module (hours), `make
# mutate-MODULE` one (e.g. `make mutate-guarantees.certified`, `make mutate-privacy`); each writes
# benchmarks/mutation/results/MODULE.json and rewrites benchmarks/mutation/report.md (docs/mutation.md says how to
# read it). `make mutants-changed` is the CI step: the mutants of the lines changed since a base commit
# (MUTATION_BASE=REV, else benchmarks/mutation/base, else HEAD's first parent), failing on a survivor;
# `make mutation-base` records HEAD as the base of the next change.
MUTANTS := $(BIN)/python benchmarks/mutation/mutants.py
mutants: $(STAMP)
	$(MUTANTS) run

mutate-%: $(STAMP)
	$(MUTANTS) run $*

mutants-changed: $(STAMP)
	$(MUTANTS) changed

mutation-base:
	git rev-parse HEAD > benchmarks/mutation/base

clean:
	rm -rf $(VENV) $(TOOLS) .ci/venvs mutants build dist *.egg-info .pytest_cache .hypothesis \
	    docs/_build docs/_generated docs/auto_examples docs/reference/generated docs/reference/api.rst \
	    docs/reference/cli.rst docs/sg_execution_times.rst
