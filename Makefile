# The two commands of the README. Both set up .venv first (once; again when pyproject changes).
VENV ?= .venv
PY := $(VENV)/bin/python
QUESTION ?= Can I take ibuprofen while I am on warfarin?

.PHONY: demo test bench

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# The CPU build of torch; an unpinned torch pulls several GB of CUDA libraries.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/prefrag ask "$(QUESTION)" --trace

test: $(VENV)/.installed
	$(PY) -m pytest

bench: $(VENV)/.installed
	for script in bench/bench_*.py; do $(PY) $$script || exit 1; done
