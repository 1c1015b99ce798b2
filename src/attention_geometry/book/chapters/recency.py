"""Chapter 6, *LayerNorm induces recency bias* (``book/06_recency.md``): its parameters."""

from typing import Annotated, Literal

from pydantic import Field

from ..cost import CostModel
from ..params import ChapterParams, CorpusDir, Seed

__all__ = ["RecencyParams"]


class RecencyParams(ChapterParams):
    """The parameters of chapter ``recency``; each default is the value in its ``parameters`` cell."""

    seed: Seed = 0
    corpus_dir: CorpusDir = None
    n_samples: int = Field(100_000, ge=100, le=100_000_000,
        description="sequences per model of the first figure (the paper: 100,000; the authors' later repository "
                    "version: 10^7)")
    n_samples_alpha: int = Field(30_000, ge=100, le=100_000_000,
        description="sequences per model of the anisotropy sweeps at width d (the later repository version: 10^7)")
    n_samples_sweep: int = Field(20_000, ge=100, le=100_000_000,
        description="sequences per point of the width x anisotropy x residual grid at the other widths")
    n_samples_factor: int = Field(30_000, ge=100, le=100_000_000,
        description="sequences per width of the missing-factor study (control variates)")
    n_tokens: int = Field(10, ge=3, le=64, description="tokens per sequence (the paper: 10)")
    d: int = Field(64, ge=4, le=16_384,
        description="width of the anisotropy sweeps and single-width analyses (the paper: 64; the later repository "
                    "version sweeps anisotropy at 16)")
    n_layers: int = Field(4, ge=2, le=32, description="layers simulated (the paper: 4)")
    alpha_rows: float = Field(0.5, ge=0.0, le=0.99,
        description="anisotropy of rows 3 and 4 of the first figure (the paper: 0.5)")
    alphas: list[Annotated[float, Field(ge=0.0, le=0.99)]] = Field([0.0, 0.2, 0.4, 0.6, 0.8],
        min_length=1, max_length=8, description="anisotropies alpha of the sweeps")
    figure_dims: list[Annotated[int, Field(ge=4, le=16_384)]] = Field([64], min_length=1, max_length=8,
        description="widths of the first figure (the later repository version: 16, 64, 256, 1024)")
    dims: list[Annotated[int, Field(ge=4, le=16_384)]] = Field([16, 64, 256, 1024], min_length=1, max_length=8,
        description="widths d of the recency-probability grid")
    factor_dims: list[Annotated[int, Field(ge=4, le=400)]] = Field([16, 25, 36, 49, 64, 100, 144, 256],
        min_length=1, max_length=16, description="widths d of the missing-factor study at alpha = 0")
    heatmap_scale: Literal["paper", "panel", "row"] = Field("paper",
        description="colour scale of the heat maps: the authors' ('paper'), one per panel, or one per row")
    ext_models: int = Field(8, ge=2, le=1024, description="weight draws per addition to the paper's layer")
    ext_samples: int = Field(1024, ge=16, le=1_000_000, description="input sequences per weight draw")
    nope_d: int = Field(32, ge=8, le=512, description="width of the trained NoPE decoder")
    nope_seq_len: int = Field(32, ge=8, le=512,
        description="training and evaluation window of the NoPE decoder (bytes)")
    nope_steps: int = Field(400, ge=1, le=1_000_000, description="Adam steps of the NoPE decoder")
    nope_seeds: int = Field(5, ge=2, le=100,
        description="training seeds of the NoPE decoder (its recency's error is over them)")
    device: Literal["cpu", "cuda"] = Field("cpu", description="torch device of the simulation")

    smoke = {"n_samples": 2000, "n_samples_alpha": 1000, "n_samples_sweep": 1000, "n_samples_factor": 2000,
             "n_layers": 2, "alphas": [0.0, 0.5], "dims": [16, 64], "factor_dims": [16, 36],
             "ext_models": 2, "ext_samples": 32, "nope_d": 8, "nope_seq_len": 8, "nope_steps": 4,
             "nope_seeds": 2}
    # The authors' later repository version (starmpcc/layernorm_recency_bias, commit d68cf47,
    # concept/simulation.ipynb): 10^7 sequences of 10 tokens, the four models at d = 16, 64,
    # 256, 1024, four layers, anisotropy sweeps at d = 16. The grid, the missing-factor study,
    # the extensions and the NoPE decoder are this book's; they are scaled up, not the paper's.
    # nope_seeds: five seeds, so that the trained NoPE row has an error over training.
    presets = {
        "paper": {"n_samples": 10_000_000, "n_samples_alpha": 10_000_000, "n_samples_sweep": 1_000_000,
                  "n_samples_factor": 1_000_000, "n_tokens": 10, "d": 16, "n_layers": 4,
                  "alpha_rows": 0.5, "alphas": [0.0, 0.2, 0.4, 0.6, 0.8],
                  "figure_dims": [16, 64, 256, 1024], "dims": [16, 64, 256, 1024],
                  "factor_dims": [16, 25, 36, 49, 64, 100, 144, 196, 256, 400], "ext_models": 32,
                  "ext_samples": 8192, "nope_d": 64, "nope_seq_len": 64, "nope_steps": 8000,
                  "nope_seeds": 5},
    }
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    cost = CostModel(93, (
        (0.25, {"n_samples": 1, "n_layers": 1, "n_tokens": 2}),
        (0.15, {"n_samples_sweep": 1, "len:dims": 1, "len:alphas": 1, "n_tokens": 2}),
        (0.05, {"ext_samples": 1}),
        (0.45, {"nope_steps": 1, "nope_seeds": 1, "nope_seq_len": 1, "nope_d": 1}),
    ))
