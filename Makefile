# Entry points:
#   make demo   the main job: installs mnemolayer (core only) into .venv and shows add, recall
#               with scores and provenance, a fact that changes, and a token-budgeted context
#               on the bundled sample conversation (under a minute)
#   make test   the whole test suite, with every dev dependency (what CI runs: .ci/run)
#   make check  format, lint, types and the fast tests (no slow, no server/browser tests)
#   make bench  the LoCoMo retrieval benchmark on the full dev set
# VENV=path uses another environment (e.g. make demo VENV=/tmp/venv-demo).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.installed-core
DEV := $(VENV)/.installed-dev
PIP := $(BIN)/python -m pip --disable-pip-version-check
LINTED := src tests examples bench
# The full LoCoMo dev set: DATA=..., else $MNEMOLAYER_LOCOMO, else beside the repository.
LOCOMO := $(or $(DATA),$(MNEMOLAYER_LOCOMO),../shared/data/locomo/locomo_dev.json)
SHARED_DATA := $(or $(MNEMOLAYER_DATA_DIR),../shared/data)
# The embedding engine's OpenMP threads sleep instead of spinning while they wait: on a
# busy machine spinning makes the real model crawl (see tests/conftest.py).
export OMP_WAIT_POLICY ?= PASSIVE

.PHONY: demo test test-crewai check test-fast lint bench bench-memorybank clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

# The core install: what `pip install mnemolayer` gives a user, and all the demo needs
# (--no-compile: a module is byte-compiled when first imported, not all of them now).
$(CORE): $(BIN)/python pyproject.toml
	$(PIP) install -q --no-compile -e .
	touch $@

$(DEV): $(BIN)/python pyproject.toml
	$(PIP) install -q -e '.[dev]'
	touch $@ $(CORE)

demo: $(CORE)
	$(BIN)/python -m mnemolayer.cli.demo

# The whole suite: slow (real model, benchmark data), server, browser and PostgreSQL tests
# included, on every core (pytest-xdist; a file's tests stay on one worker: --dist
# loadfile; JOBS=0 runs it in this process). Exit status is pytest's: 5 (no tests
# collected) fails too.
JOBS ?= auto
test: $(DEV)
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile --durations=15

# The CrewAI adapter's tests, in an environment of their own: crewai's pins clash with the
# dev extra's (docs/integrations/crewai.md), so `make test` skips them. CI runs both.
CREWAI_VENV ?= .venv-crewai
$(CREWAI_VENV)/.installed: pyproject.toml
	$(PY) -m venv $(CREWAI_VENV)
	$(CREWAI_VENV)/bin/python -m pip --disable-pip-version-check install -q -e '.[dev]'
	$(CREWAI_VENV)/bin/python -m pip --disable-pip-version-check install -q -e '.[crewai]'
	touch $@

test-crewai: $(CREWAI_VENV)/.installed
	MNEMOLAYER_REQUIRE_CREWAI=1 CREWAI_DISABLE_TELEMETRY=true OTEL_SDK_DISABLED=true \
	  $(CREWAI_VENV)/bin/python -m pytest -q tests/integration/test_crewai_storage.py tests/e2e/cli/test_example_crewai.py

# Quick tests: not `slow`, not `e2e` (server processes, browsers), not `postgres` (the
# contract suite's second run), property tests at 20 examples (test_properties.py).
FAST_TESTS := MNEMOLAYER_HYPOTHESIS_PROFILE=quick $(BIN)/python -m pytest -q -m "not slow and not e2e and not postgres"
test-fast: $(DEV)
	$(FAST_TESTS)

lint: $(DEV)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/mypy
	$(BIN)/lint-imports

# lint and the import contracts, then the fast tests with mypy beside them on the second
# core (its report follows the tests'); fails when either does.
check: $(DEV)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/lint-imports
	@echo "$(BIN)/mypy (beside the tests) && $(FAST_TESTS)"
	@$(BIN)/mypy > $(VENV)/.mypy.out 2>&1 & mypy=$$!; \
	$(FAST_TESTS); tests=$$?; \
	wait $$mypy; types=$$?; echo "mypy:"; cat $(VENV)/.mypy.out; \
	test $$tests -eq 0 && test $$types -eq 0

bench: $(CORE)
	@test -f "$(LOCOMO)" || { echo "LoCoMo not found at $(LOCOMO): set MNEMOLAYER_LOCOMO or DATA=path" >&2; exit 2; }
	$(BIN)/python -m bench locomo --data "$(LOCOMO)" --out results/locomo_dev.json

bench-memorybank: $(CORE)
	$(BIN)/python -m bench memorybank --bank $(SHARED_DATA)/memorybank/memory_bank_cn_dev.json --gold $(SHARED_DATA)/memorybank/gold_dev.jsonl --lang zh --out results/memorybank_zh.json
	$(BIN)/python -m bench memorybank --bank $(SHARED_DATA)/memorybank/memory_bank_en_dev.json --gold $(SHARED_DATA)/memorybank/gold_dev.jsonl --lang en --out results/memorybank_en.json

clean:
	rm -rf $(VENV) $(CREWAI_VENV) build *.egg-info .demo
