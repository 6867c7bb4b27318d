# gluonjax: `make demo` and `make test` work on a fresh machine with Python 3.11 and make.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
MXVENV := .venv-mxnet

.PHONY: demo test bench lint format mxnet-ref clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,gluoncv,onnx]'
	$(PY) -m pip install -q --no-deps 'gluoncv==0.10.5'
	touch $@

# Reference MXNet 1.9.1 in its own interpreter, for cross-checks (never imported by gluonjax).
$(MXVENV)/.installed:
	test -x $(MXVENV)/bin/python || $(PYTHON) -m venv $(MXVENV)
	$(MXVENV)/bin/python -m pip install -q 'mxnet==1.9.1' 'numpy<1.24' \
	  && touch $@ || echo "WARNING: could not install MXNet 1.9.1; cross-check tests will skip"

mxnet-ref: $(MXVENV)/.installed

demo: $(VENV)/.installed
	$(PY) -m gluonjax.demo

test: $(VENV)/.installed mxnet-ref
	$(PY) -m pytest -n 2 --dist loadfile

bench: $(VENV)/.installed
	$(PY) -m benchmarks

lint: $(VENV)/.installed
	$(PY) -m ruff check gluonjax tests benchmarks tools
	$(PY) -m ruff format --check gluonjax tests benchmarks tools

format: $(VENV)/.installed
	$(PY) -m ruff format gluonjax tests benchmarks tools
	$(PY) -m ruff check --fix gluonjax tests benchmarks tools

clean:
	rm -rf $(VENV) $(MXVENV) build *.egg-info
