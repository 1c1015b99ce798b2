"""The book tooling: command line, chapter execution, cache, staging, sweeps,
parameter models, paper-scale runs, appendices and the Sphinx extension.

This is the top layer: it may import the mathematics and the figures, and
neither of them imports it. Chapters use a few things from here, right after
their ``parameters`` cell::

    from attention_geometry.book import glue, run_context, show_claims, validate_parameters
    P = validate_parameters("layernorm", globals())
    ctx = run_context()            # ctx.checkpoints: where long loops checkpoint

and, for the "Paper vs. this book" table, ``show_claims(chapter, claims)``.

One module per concern (none imports another in a circle):

==================  ==========================================================
``project``         the project root (the folder with ``_toc.yml``) and its paths
``registry``        the chapters: sources, parameter models, dependencies, headlines
``chapters``        each chapter's parameter model: defaults, ranges, meanings, presets, cost
``params``          the models' base class, and validation with one-line errors
``cost``            a chapter's run time as a function of its parameters
``toc``             the table of contents, chapter discovery, parameters cells
``cache``           cache keys (source, parameters, imported modules, deps)
``files``           atomic writes, JSON read with recovery
``notebooks``       glued values of executed notebooks, trimming for storage
``context``         the run kind and checkpoint folder a chapter runs in
``execute``         one chapter through papermill (the one execution path)
``schedule``        the book's chapters: cached, or executed in dependency order on ``_parallel``
``progress``        the cell progress of an execution, with the time left
``leftovers``       scratch files of executions, and those of killed ones cleaned up
``stage``           staging the book, building its HTML (and PDF)
``appendices``      the generated appendices
``run``             ``make run``: one chapter with other parameters
``report``          run reports: a rerun rendered as a one-chapter book
``sweep``           ``make sweep``: a grid of runs on Dask
``sweep_results``   stored sweeps under ``results/`` that chapters read
``paper``           ``make paper``: stored paper-scale runs and their freshness
``stored``          what a stored paper run shows a chapter: its figures, words and tables
``provenance``      where and how a stored result was computed
``command``         the command's entry point: Ctrl-C handled before anything heavy loads
``cli``             the ``attention-geometry`` command
``kernel_startup``  run by every chapter kernel at start-up
``glue``            the chapters' glue helper
``tables``          Markdown tables that a ``{table}`` directive numbers
``where``           where a glued number comes from: chapter, cell, library functions
``form``            a chapter's form as a reader meets it (visible cells, glued numbers)
``claims``          a chapter's "Paper vs. this book" table
``ledger``          the claims ledger of the whole book
``findings``        "What this chapter finds" and "What the book finds", written from the ledger
``golden``          the golden ledger: every verdict, committed, so a change shows
``errata``          the papers' errata, one record per place a paper is wrong as written
``sphinx_offline``  a Sphinx extension keeping the pages offline
``sphinx_pages``    a Sphinx extension: accent-free search, the build's provenance
``sphinx_report``   a Sphinx extension: run reports' links into the main book
``sphinx_figures``  a Sphinx extension: the figures a reader can move, offline
==================  ==========================================================
"""

import importlib
import importlib.util
import sys
import types

#: ``{public name: the module of this package that defines it}``. Each module is
#: imported when one of its names is first used: importing the package costs nothing
#: (pydantic, nbformat and the mathematics load with the names that need them), so the
#: ``attention-geometry`` command installs its Ctrl-C handler before any of them
#: (:mod:`.command`), and a chapter's kernel loads only what it uses.
_EXPORTERS = {"show_claims": "claims", "RunContext": "context", "run_context": "context", "glue": "glue",
              "ParameterError": "params", "CHAPTERS": "registry", "Chapter": "registry", "get_chapter": "registry",
              "validate_parameters": "registry"}

__all__ = ["CHAPTERS", "Chapter", "ParameterError", "RunContext", "get_chapter", "glue", "run_context",
           "show_claims", "validate_parameters"]


def __getattr__(name: str):
    """A public name, imported from its module on first use; else a submodule (``book.cli``)."""
    if name in _EXPORTERS:
        value = getattr(importlib.import_module(f".{_EXPORTERS[name]}", __name__), name)
        globals()[name] = value
        return value
    if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """The package, whose ``glue`` is the function ``glue.glue``: importing the submodule
    ``.glue`` (which sets the package's attribute of that name) leaves the function there."""

    def __setattr__(self, name: str, value) -> None:
        if name in _EXPORTERS and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
