"""Chapter 4, *Rank collapse under attention masks* (``book/04_rank_collapse.md``): its parameters."""

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..cost import CostModel
from ..params import ChapterParams, CorpusDir, Seed

__all__ = ["RankCollapseParams"]


class RankCollapseParams(ChapterParams):
    """The parameters of chapter ``rank_collapse``; each default is the value in its ``parameters`` cell."""

    seed: Seed = 0
    corpus_dir: CorpusDir = None
    n_tokens: int = Field(128, ge=16, le=512, description="tokens per text window (N; the paper: 128)")
    d_model: int = Field(128, ge=8, le=576,
        description="width of the random networks; SmolLM2's 576-wide embeddings are projected to it (576: no "
                    "projection)")
    n_inputs: int = Field(16, ge=3, le=5000,
        description="text windows, each through its own random network (the paper: 3000)")
    n_layers: int = Field(64, ge=8, le=512, description="depth of the random attention networks (the paper: 128)")
    windows: list[Annotated[int, Field(ge=1, le=511)]] = Field([2, 8, 32], min_length=1, max_length=6,
        description="window widths w of the sliding-window masks (the middle one is the reference)")
    temperatures: list[Annotated[float, Field(gt=0.0, le=10000.0)]] = Field([0.015625, 64.0],
        min_length=1, max_length=4, description="d_QK / d values compared with d_QK = d (small: sharp)")
    n_heads: int = Field(8, ge=2, le=64, description="heads of the multi-head variant (must divide d_model)")
    paper_init_std: float = Field(0.02, ge=0.0001, le=1.0,
        description="weight standard deviation taken as the paper's initialisation (transformers' default "
                    "initializer_range)")
    device: Literal["cpu", "cuda"] = Field("cpu", description="where the dynamics run")

    @model_validator(mode="after")
    def _heads_fit_the_width(self):
        if self.d_model % self.n_heads:
            raise self.reject("n_heads", f"does not divide d_model = {self.d_model}", "a divisor of d_model")
        return self

    smoke = {"n_tokens": 32, "d_model": 32, "n_inputs": 3, "n_layers": 10, "windows": [2, 4],
             "temperatures": [0.015625, 64.0], "n_heads": 4}
    # the paper's sizes (N = 128, 128 layers, the embeddings' full width 576) on 128 of its
    # 3000 inputs: about 37 s of one CPU core per input (measured), 1.3 h; all 3000 would
    # take about 31 h on one core (a GPU run)
    presets = {
        "paper": {"n_tokens": 128, "n_layers": 128, "d_model": 576, "n_inputs": 128},
    }
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    cost = CostModel(43, (
        (0.8, {"n_inputs": 1, "n_layers": 1, "n_tokens": 2, "d_model": 1, "len:windows": 0.5,
               "len:temperatures": 0.5}),
    ))
