# Two entry points on a fresh machine (see README):
#   make demo   - install, generate a sample crawl, run the daily pipeline end to end locally, end with
#                 the service on the day (keeps serving on a terminal outside CI; DEMO_SERVE=yes|no|auto)
#   make test   - install (system packages included) and run the whole test suite
VENV ?= .venv
PY := $(VENV)/bin/python
DEMO_ROOT ?= demo
DEMO_DATE ?= 2026-01-15
DEMO_SERVE ?= auto

.PHONY: setup system-deps test demo clean

$(VENV)/.installed: pyproject.toml setup.py lib/html/native/lexwalk.c lib/serve/native/maxscore.c
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

setup: $(VENV)/.installed

system-deps:
	bash scripts/install-system-deps.sh

test: system-deps setup
	@$(PY) -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

demo: setup
	$(PY) -m jobs.demo --root $(DEMO_ROOT) --date $(DEMO_DATE) --serve $(DEMO_SERVE)

clean:
	rm -rf $(VENV) $(DEMO_ROOT) .pytest_cache
