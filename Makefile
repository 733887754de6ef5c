VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3

.PHONY: demo test lint types contracts pytest browser clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	# An editable install leaves our modules to be compiled on first import, and a machine that
	# sets PYTHONDONTWRITEBYTECODE never keeps the result: every command would compile them
	# again (0.2 s). A module edited since is still compiled afresh, in memory.
	$(PY) -m compileall -q src
	touch $@

# The gate of the bundled example blocks on purpose (exit 3); only exit 2, a real error, fails.
demo: $(VENV)/.installed
	rm -rf demo
	$(VENV)/bin/oloproof init --example support_rag demo
	cd demo && ../$(VENV)/bin/oloproof run; code=$$?; [ $$code -ne 2 ] || exit 2; \
	  echo "(oloproof run exited $$code: the gate's verdict)"; echo; \
	  ../$(VENV)/bin/oloproof diagnose latest --intervention gold-context --criterion answer_correct

test: $(VENV)/.installed lint types contracts pytest

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

types: $(VENV)/.installed
	$(VENV)/bin/mypy

contracts: $(VENV)/.installed
	$(VENV)/bin/lint-imports

# The viewer's browser tests drive Debian's Chromium through Playwright (no browser download).
CHROMIUM := /usr/bin/chromium
browser:
	@if [ ! -x $(CHROMIUM) ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	  else echo "the browser tests need $(CHROMIUM): sudo apt-get install -y chromium"; exit 1; fi; \
	fi

pytest: $(VENV)/.installed browser
	$(VENV)/bin/pytest -q -n auto

clean:
	rm -rf $(VENV) .oloproof build dist demo
