"""The book's executable chapters: where each lives and which model holds its parameters.

A chapter's parameters are one pydantic model (:mod:`.chapters`, one module per
chapter): each parameter's default, type, allowed range and meaning, the
``smoke`` set (tiny sizes, seconds to run) that the tests execute, named
parameter sets (for instance a paper's full scale) and the cost model. The
chapter's papermill ``parameters`` cell shows the same defaults to the reader;
a test checks that the cell and the model agree.
"""

import types
from dataclasses import dataclass
from typing import Any, Mapping

from .chapters import (
    CesaroParams, JacobiansParams, LayerNormEquilibriaParams, LayerNormParams, RankCollapseParams, RecencyParams,
    SelectabilityParams, SynthesisParams, UniformAttentionParams,
)
from .cost import CostModel
from .params import ChapterParams, ParameterError, ParameterSpec, parameters_of, user_data, validated

__all__ = ["Chapter", "CostModel", "CHAPTERS", "find_chapter", "get_chapter", "validate_parameters"]


@dataclass(frozen=True)
class Chapter:
    """One executable chapter of the book."""

    name: str  # what `make run CHAPTER=...` takes
    source: str  # Jupytext MyST source, relative to the repository root
    model: type[ChapterParams] = ChapterParams  # its parameters: defaults, ranges, meanings, presets, cost
    # chapters whose executed notebooks this one's results depend on (chapter 9
    # reads their claims): it executes after them, and editing them re-executes it
    depends_on: tuple[str, ...] = ()
    # the glued number a sweep plots by default (its "headline" quantity)
    headline: str | None = None

    @property
    def stem(self) -> str:
        return self.source.rsplit("/", 1)[-1].removesuffix(".md")

    @property
    def params(self) -> ParameterSpec:
        """The parameters by name, each with its meaning, default and allowed values."""
        return parameters_of(self.model)

    @property
    def smoke(self) -> Mapping[str, Any]:
        """Tiny sizes for the tests: seconds, not minutes."""
        return self.model.smoke

    @property
    def presets(self) -> Mapping[str, Mapping[str, Any]]:
        """Named parameter sets (``paper``: a paper's full scale)."""
        return self.model.presets

    @property
    def cost(self) -> CostModel | None:
        """Seconds as a function of the parameters (what `make run` announces before a long run)."""
        return self.model.cost


# The headline is what a reader of a rerun sees first: a glued number, the default y
# axis of a sweep's figure.
CHAPTERS: dict[str, Chapter] = {
    c.name: c
    for c in [
        Chapter("layernorm", "book/01_layernorm.md", LayerNormParams, headline="ln-err64-max"),
        Chapter("uniform_attention", "book/02_uniform_attention.md", UniformAttentionParams,
                headline="ua-d-layernorm-rmsnorm-final-test-accuracy"),
        Chapter("selectability", "book/03_selectability.md", SelectabilityParams, headline="sel-corner-mean"),
        Chapter("cesaro", "book/07_cesaro.md", CesaroParams, headline="cesaro-alpha-u"),
        Chapter("jacobians", "book/08_jacobians.md", JacobiansParams, headline="jac-q-sp"),
        Chapter("rank_collapse", "book/04_rank_collapse.md", RankCollapseParams, headline="rc-tc-causal"),
        Chapter("layernorm_equilibria", "book/05_layernorm_equilibria.md", LayerNormEquilibriaParams,
                headline="le-frac2-b"),
        Chapter("recency", "book/06_recency.md", RecencyParams, headline="rec-thm1-rp2"),
        Chapter("synthesis", "book/09_synthesis.md", SynthesisParams, headline="syn-base-rp",
                # it reads the claims ledger of the other chapters' executed notebooks
                depends_on=("layernorm", "uniform_attention", "selectability", "rank_collapse",
                            "layernorm_equilibria", "recency", "cesaro", "jacobians")),
    ]
}


def find_chapter(chapters: Mapping[str, Chapter], name: str) -> Chapter:
    """The chapter of ``chapters`` called ``name`` (or whose source stem is ``name``)."""
    if name in chapters:
        return chapters[name]
    for chapter in chapters.values():
        if chapter.stem == name:
            return chapter
    raise KeyError(f"unknown chapter {name!r}; chapters: " + ", ".join(chapters))


def get_chapter(name: str) -> Chapter:
    """The book's chapter called ``name`` (or whose source stem is ``name``)."""
    return find_chapter(CHAPTERS, name)


def validate_parameters(chapter: str, namespace: Mapping[str, Any]) -> types.SimpleNamespace:
    """Validate a chapter's parameters as they stand in the notebook namespace.

    Call it right after the ``parameters`` cell as
    ``P = validate_parameters("layernorm", globals())``. Every plain-data name
    defined so far must be a known parameter of the chapter, every parameter
    must be present, and the values must pass the chapter's model (each value
    allowed, and the rules that join several). Returns the normalised values as
    a read-only-by-convention namespace.
    """
    spec = get_chapter(chapter).params
    present = user_data(namespace)
    instance = validated(spec, present)
    missing = sorted(set(spec) - set(present))
    if missing:
        raise ParameterError(
            f"chapter {chapter!r}: parameters cell does not define {', '.join(missing)}"
        )
    return types.SimpleNamespace(**{name: getattr(instance, name) for name in spec})
