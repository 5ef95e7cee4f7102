# Two entry points on a fresh machine (see README):
#   make demo   - install, generate a sample crawl, run the daily pipeline end to end locally, end with
#                 the service on the day (keeps serving on a terminal outside CI; DEMO_SERVE=yes|no|auto)
#   make demo-s3 - the same against a real S3 server (SeaweedFS on loopback, started and stopped here)
#   make test   - install (system packages included) and run the whole test suite
#   make asan   - the compiled HTML walker under AddressSanitizer and UBSan over the real pages (make test runs it)
VENV ?= .venv
PY := $(VENV)/bin/python
DEMO_ROOT ?= demo
DEMO_DATE ?= 2026-01-15
DEMO_SERVE ?= auto

.PHONY: setup system-deps lock upgrade lint typecheck asan test demo demo-s3 clean

# Installs reproduce: every package at the version and hash requirements/lock.txt names (the set of the
# last green run), then this project itself without resolving anything (docs/dependencies.md).
# pyproject.toml keeps its ranges for installs into other environments; `make upgrade` moves the lock.
$(VENV)/.installed: requirements/lock.txt setup.py lib/html/native/lexwalk.c lib/html/rules.py lib/serve/native/maxscore.c lib/neardup/native/minhash.c
	python3 -m venv --clear $(VENV)
	$(PY) -m pip install -q --require-hashes --no-deps -r requirements/lock.txt
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	touch $@

setup: $(VENV)/.installed

system-deps:
	bash scripts/install-system-deps.sh

# the lock's resolution: pyproject.toml's ranges with the test and bench extras, for every platform
# (markers kept), Python 3.11, hashes of every file. `make lock` re-resolves only what pyproject.toml
# changed (the lock's other pins are kept); `make upgrade` moves every package to the newest version
# within the ranges, reinstalls the venv from scratch and runs the whole suite (docs/dependencies.md).
# The resolution goes to a copy (uv keeps the pins it finds there) that replaces the lock only when it
# differs, so an unchanged lock does not make the next `make setup` reinstall the venv.
LOCK_CMD = cp requirements/lock.txt requirements/.lock.new && $(VENV)/bin/uv pip compile -q pyproject.toml \
	requirements/build.in --extra test --extra bench --universal --python-version 3.11 --generate-hashes \
	--no-emit-package daily-index-slice --custom-compile-command 'make lock' -o requirements/.lock.new

lock: setup
	$(LOCK_CMD)
	cmp -s requirements/.lock.new requirements/lock.txt && rm requirements/.lock.new \
		|| mv requirements/.lock.new requirements/lock.txt

upgrade: setup
	$(LOCK_CMD) --upgrade
	mv requirements/.lock.new requirements/lock.txt
	git --no-pager diff --stat -- requirements/lock.txt || true
	$(MAKE) test

# ruff: the linter and the formatter's check ([tool.ruff] in pyproject.toml; `ruff format .` fixes the format)
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# mypy over lib/ and jobs/ ([tool.mypy] in pyproject.toml: the files, the strictness, the overrides)
typecheck: setup
	$(PY) -m mypy

# lib/html/native/lexwalk.c reads selectolax's memory: an instrumented copy over the real pages, failing on any
# sanitizer report (scripts/asan_walk.py; about 10 s of CPU)
asan: setup
	$(PY) scripts/asan_walk.py

test: system-deps setup lint typecheck asan
	@$(PY) -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

demo: setup
	$(PY) -m jobs.demo --root $(DEMO_ROOT) --date $(DEMO_DATE) --serve $(DEMO_SERVE)

# the sample crawl is uploaded to s3://demo-crawl/root; outputs are read back from there, the
# URL database and a copy of the results go to $(DEMO_ROOT)-s3
demo-s3: setup
	$(PY) -m devtools.seaweed --bucket demo-crawl -- $(PY) -m jobs.demo --s3 s3://demo-crawl/root \
		--root $(DEMO_ROOT)-s3 --date $(DEMO_DATE)

clean:
	rm -rf $(VENV) $(DEMO_ROOT) $(DEMO_ROOT)-s3 .pytest_cache .mypy_cache
