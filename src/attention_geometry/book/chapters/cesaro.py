"""Chapter 7, *The Cesàro calculus* (``book/07_cesaro.md``): its parameters."""

from typing import Annotated

from pydantic import Field

from ..cost import CostModel
from ..params import ChapterParams, Seed

__all__ = ["CesaroParams"]


class CesaroParams(ChapterParams):
    """The parameters of chapter ``cesaro``; each default is the value in its ``parameters`` cell."""

    seed: Seed = 0
    L: int = Field(2048, ge=3, le=1_048_576, description="sequence length of the profiles studied (the paper: 2048)")
    H: int = Field(24, ge=2, le=400, description="depth, number of layers (the paper: 24)")
    alphas: list[Annotated[float, Field(ge=0.0, le=1.0)]] = Field([0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.99, 1.0],
        min_length=1, max_length=12, description="residual mixing weights alpha compared")
    exact_L_max: int = Field(7, ge=2, le=12, description="largest L for the exact matrix-power checks")
    n_random_checks: int = Field(20, ge=1, le=500,
        description="random (L, H, alpha) cases checked in exact arithmetic")
    heatmap_L_max: int = Field(2048, ge=4, le=4096,
        description="largest L (powers of 2 from 4) in the float64 error map")
    heatmap_H_max: int = Field(48, ge=1, le=96, description="largest H in the float64 error map")
    exact_reference_L_max: int = Field(256, ge=4, le=1024,
        description="largest L with an exact-rational reference in the error map")
    limit_L_max: int = Field(1_048_576, ge=16, le=8_388_608, description="largest L in the continuous-limit study")
    limit_Hs: list[Annotated[int, Field(ge=1, le=200)]] = Field([4, 8, 24], min_length=1, max_length=6,
        description="depths H of the continuous-limit study")
    n_alpha_grid: int = Field(101, ge=11, le=2001, description="alphas on the grid of the which-claim-holds figure")

    smoke = {"L": 128, "H": 8, "alphas": [0.1, 0.5, 1.0], "exact_L_max": 4, "n_random_checks": 3,
             "heatmap_L_max": 64, "heatmap_H_max": 8, "exact_reference_L_max": 64, "limit_L_max": 4096,
             "limit_Hs": [2, 4], "n_alpha_grid": 11}
    presets = {
        "paper": {"L": 2048, "H": 24},
    }
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    cost = CostModel(28, (
        (0.3, {"L": 1, "H": 1, "len:alphas": 1}),
        (0.3, {"heatmap_L_max": 1, "heatmap_H_max": 1}),
        (0.2, {"limit_L_max": 1, "len:limit_Hs": 1}),
    ))
