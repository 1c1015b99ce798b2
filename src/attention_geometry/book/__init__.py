"""The book tooling: command line, chapter execution, cache, staging, sweeps,
parameter specifications, paper-scale runs, appendices and the Sphinx extension.

This is the top layer: it may import the mathematics and the figures, and
neither of them imports it. Chapters use two things from here, right after
their ``parameters`` cell::

    from attention_geometry.book import glue, run_context, show_claims, validate_parameters
    P = validate_parameters("layernorm", globals())
    ctx = run_context()            # ctx.checkpoints: where long loops checkpoint

and, for the "Paper vs. this book" table, ``show_claims(chapter, claims)``.
"""

from .claims import show_claims
from .context import RunContext, run_context
from .glue import glue
from .params import ParameterError
from .registry import CHAPTERS, Chapter, get_chapter, validate_parameters

__all__ = ["CHAPTERS", "Chapter", "ParameterError", "RunContext", "get_chapter", "glue", "run_context",
           "show_claims", "validate_parameters"]
