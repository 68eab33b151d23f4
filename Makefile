# Two entry points a new user needs: `make demo` (the main job) and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev

.PHONY: demo test check lint bench-locomo bench-memorybank clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m mnemolayer.demo $(if $(DATA),--data $(DATA),)

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests examples
	$(BIN)/ruff format --check src tests examples
	$(BIN)/mypy

check: lint test

bench-locomo: $(STAMP)
	$(BIN)/mnemolayer bench locomo --data ../shared/data/locomo/locomo_dev.json --out results/locomo_dev.json

bench-memorybank: $(STAMP)
	$(BIN)/mnemolayer bench memorybank --bank ../shared/data/memorybank/memory_bank_cn_dev.json --gold ../shared/data/memorybank/gold_dev.jsonl --lang zh --out results/memorybank_zh.json
	$(BIN)/mnemolayer bench memorybank --bank ../shared/data/memorybank/memory_bank_en_dev.json --gold ../shared/data/memorybank/gold_dev.jsonl --lang en --out results/memorybank_en.json

clean:
	rm -rf $(VENV) build *.egg-info
