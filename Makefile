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

.PHONY: setup system-deps lint typecheck asan test demo demo-s3 clean

$(VENV)/.installed: pyproject.toml setup.py lib/html/native/lexwalk.c lib/html/rules.py lib/serve/native/maxscore.c
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,bench]'
	touch $@

setup: $(VENV)/.installed

system-deps:
	bash scripts/install-system-deps.sh

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
