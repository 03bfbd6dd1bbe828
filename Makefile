# The two commands of the README, `make demo` and `make test`. Each sets up .venv first
# (again when pyproject.toml changes). The main job needs no torch; the tests do.
VENV ?= .venv
PY := $(VENV)/bin/python
QUESTION ?= Can I take ibuprofen while I am on warfarin?
# mypy sees the package through this view of the folders mapped into `prefrag`.
TYPECHECK_VIEW := build/typecheck

.PHONY: demo test lint typecheck bench confidence-model

$(VENV)/bin/python:
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# The main job: the package alone (MiniLM in ONNX Runtime with the weights it ships, embedded
# Qdrant, bm25s).
$(VENV)/.installed-main: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q -e .
	touch $@

# Tests and training: torch 2.13.0 first, pinned so that pip takes the CPU build this
# machine keeps on disk; elsewhere use the CPU index (--index-url .../whl/cpu) to avoid
# several GB of CUDA libraries. Then the dev, train and hf extras.
$(VENV)/.installed-test: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev,train,hf]'
	touch $@

demo: $(VENV)/.installed-main
	$(VENV)/bin/prefrag ask "$(QUESTION)" --trace

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(VENV)/.installed-test
	rm -rf $(TYPECHECK_VIEW) && mkdir -p $(TYPECHECK_VIEW)/prefrag
	for entry in app/*; do ln -s "$$PWD/$$entry" $(TYPECHECK_VIEW)/prefrag/; done
	for pkg in graphs prompts training eval; do ln -s "$$PWD/$$pkg" $(TYPECHECK_VIEW)/prefrag/$$pkg; done
	$(PY) -m mypy
	# The tests as well, less strictly: test functions need no annotations (pytest fixtures), and
	# as mypy's default, the bodies of unannotated ones are not checked; annotated tests
	# (`-> None`), helpers and fakes are, against the package's annotations.
	$(PY) -m mypy tests --allow-untyped-defs --allow-incomplete-defs --allow-untyped-calls \
		--allow-untyped-decorators --allow-subclassing-any --allow-any-generics \
		--no-warn-unused-ignores --no-check-untyped-defs --disable-error-code annotation-unchecked

test: lint typecheck
	$(PY) -m pytest

bench: $(VENV)/.installed-test
	for script in bench/bench_*.py; do $(PY) $$script || exit 1; done

# The answer confidence refit on the current reasoner (bench/fit_confidence.py): asks every
# tuning question and HotpotQA items 1-200 (about 10 minutes on one core), fits, chooses the
# thresholds out of fold, writes app/data/confidence_model.json and prints each split scored
# by a gate chosen without it beside the hand-weighted gate. The rows stay in bench/results/
# (refit on them without asking again: add --refit to the command).
confidence-model: $(VENV)/.installed-test
	$(PY) bench/fit_confidence.py --rows bench/results/confidence-rows.json --hotpot 1-200 \
		--hotpot-rows bench/results/confidence-hotpot.json --hotpot-em-drop 0.01 \
		--hotpot-weight 0 --c 0.1 --honest
