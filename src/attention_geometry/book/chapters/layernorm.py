"""Chapter 1, *LayerNorm is a projection and a scaling* (``book/01_layernorm.md``): its parameters."""

from typing import Annotated

from pydantic import Field

from ..cost import CostModel
from ..params import ChapterParams, Seed

__all__ = ["LayerNormParams"]


class LayerNormParams(ChapterParams):
    """The parameters of chapter ``layernorm``; each default is the value in its ``parameters`` cell."""

    seed: Seed = 0
    d_max: int = Field(4096, ge=3, le=65_536, description="largest dimension d in the numerical check")
    n_dims: int = Field(16, ge=2, le=64, description="number of dimensions, log-spaced from 2 to d_max")
    # >= 2: selectability compares keys; <= 10^4: the check forms an n x n score matrix
    n_samples: int = Field(1000, ge=2, le=10_000, description="random inputs drawn per dimension")
    eps_values: list[Annotated[float, Field(gt=0.0, le=1.0)]] = Field([1e-12, 1e-05, 0.01],
        min_length=1, max_length=8, description="LayerNorm epsilons compared with the exact (eps = 0) map")
    n_points_3d: int = Field(40, ge=3, le=2000, description="inputs drawn for the d = 3 figure")

    smoke = {"d_max": 64, "n_dims": 3, "n_samples": 20, "n_points_3d": 12}
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    cost = CostModel(11, (
        (0.6, {"n_samples": 1, "d_max": 1}),
        (0.1, {"n_points_3d": 1}),
    ))
