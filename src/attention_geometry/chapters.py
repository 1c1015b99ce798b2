"""The book's executable chapters: where each lives and what its parameters are.

A chapter's *defaults* are the values in its papermill ``parameters`` cell (one
source of truth, visible to the reader). This registry holds what the cell
cannot say: each parameter's type, allowed range and meaning, the ``smoke``
set (tiny sizes, seconds to run) that the tests execute, and any named
parameter sets (for instance a paper's full scale). A test checks that the
cell and this registry name the same parameters.
"""

from dataclasses import dataclass, field
from typing import Any, Mapping

from .parameters import Choice, Float, FloatList, Int, Param

__all__ = ["Chapter", "CHAPTERS", "get_chapter"]

SEED = Int("seed of every random draw in the chapter", low=0, high=2**32 - 1)


@dataclass(frozen=True)
class Chapter:
    """One executable chapter of the book."""

    name: str  # what `make run CHAPTER=...` takes
    source: str  # Jupytext MyST source, relative to the repository root
    params: Mapping[str, Param]
    smoke: Mapping[str, Any]  # tiny sizes for the tests: seconds, not minutes
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def stem(self) -> str:
        return self.source.rsplit("/", 1)[-1].removesuffix(".md")


CHAPTERS: dict[str, Chapter] = {
    c.name: c
    for c in [
        Chapter(
            name="layernorm",
            source="book/01_layernorm.md",
            params={
                "seed": SEED,
                "d_max": Int("largest dimension d in the numerical check", low=3, high=65536),
                "n_dims": Int("number of dimensions, log-spaced from 2 to d_max", low=2, high=64),
                "n_samples": Int("random inputs drawn per dimension", low=1, high=100_000),
                "eps_values": FloatList(
                    "LayerNorm epsilons compared with the exact (eps = 0) map",
                    low=0.0,
                    high=1.0,
                    low_open=True,
                    max_len=8,
                ),
                "n_points_3d": Int("inputs drawn for the d = 3 figure", low=3, high=2000),
            },
            smoke={"d_max": 64, "n_dims": 3, "n_samples": 20, "n_points_3d": 12},
        ),
    ]
}


def get_chapter(name: str) -> Chapter:
    """The chapter called ``name`` (or whose source stem is ``name``)."""
    if name in CHAPTERS:
        return CHAPTERS[name]
    for chapter in CHAPTERS.values():
        if chapter.stem == name:
            return chapter
    raise KeyError(
        f"unknown chapter {name!r}; chapters: " + ", ".join(CHAPTERS)
    )
