"""Chapter 5, *LayerNorm can prevent collapse* (``book/05_layernorm_equilibria.md``): its parameters."""

from typing import Annotated, Literal

from pydantic import Field

from ..cost import CostModel
from ..params import ChapterParams, CorpusDir, Seed

__all__ = ["LayerNormEquilibriaParams"]


class LayerNormEquilibriaParams(ChapterParams):
    """The parameters of chapter ``layernorm_equilibria``; each default is the value in its ``parameters`` cell."""

    seed: Seed = 0
    corpus_dir: CorpusDir = None
    n_tokens_a: int = Field(32, ge=2, le=512, description="tokens N in the orthogonal-W_V experiment")
    d_a: int = Field(16, ge=2, le=1024, description="dimension d in the orthogonal-W_V experiment")
    n_samples_a: int = Field(64, ge=2, le=10_000, description="random inputs in the orthogonal-W_V experiment")
    n_steps_a: int = Field(80, ge=5, le=5000, description="layers iterated in the orthogonal-W_V experiment")
    qk_scales: list[Annotated[float, Field(ge=0.0, le=100.0)]] = Field([0.0625, 10.0], min_length=1, max_length=4,
        description="standard deviations s of random W_QK (logit std for unit tokens): nearly uniform, then peaked")
    beta_similarity: float = Field(20.0, ge=0.0, le=200.0,
        description="beta of W_QK = beta I (attention to similar tokens)")
    grid_2x2: int = Field(200, ge=10, le=1000, description="grid points per angle in the N = d = 2 basin map")
    steps_2x2: int = Field(300, ge=10, le=5000, description="layers iterated in the N = d = 2 basin map")
    rank_n: int = Field(6, ge=2, le=64, description="tokens N in the rank construction")
    rank_d: int = Field(4, ge=3, le=16,
        description="dimension d in the rank construction (the centred version uses d - 1)")
    n_random: int = Field(2000, ge=10, le=100_000, description="random inputs run in the basin and rank experiments")
    steps_rank: int = Field(400, ge=10, le=10_000, description="layers iterated from the random inputs")
    n_text_samples: int = Field(16, ge=2, le=3000,
        description="text windows for the pretrained-model geometry (the paper: 3000)")
    seq_len: int = Field(128, ge=8, le=1024, description="tokens per text window (the paper: 128)")
    device: Literal["cpu", "cuda"] = Field("cpu", description="where the pretrained model runs")
    full_rank_tol: float = Field(0.05, ge=0.0, le=0.5,
        description="share of windows allowed below full rank when 'every layer keeps full rank' is judged")

    smoke = {"n_tokens_a": 8, "d_a": 4, "n_samples_a": 4, "n_steps_a": 20, "grid_2x2": 20, "steps_2x2": 60,
             "rank_n": 3, "rank_d": 3, "n_random": 50, "steps_rank": 50, "n_text_samples": 2,
             "seq_len": 16}
    # windows of the paper's 128 tokens, 1,000 of its 3000: about 1 s of CPU per window (two
    # models), so all 3000 take about 50 min of one core; the rest of the chapter runs at its
    # defaults (its experiments are the book's own, not the paper's)
    presets = {
        "paper": {"n_text_samples": 1000, "seq_len": 128},
    }
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    cost = CostModel(43, (
        (0.3, {"n_samples_a": 1, "n_steps_a": 1, "n_tokens_a": 2}),
        (0.2, {"grid_2x2": 2, "steps_2x2": 1}),
        (0.2, {"n_random": 1, "steps_rank": 1}),
        (0.2, {"n_text_samples": 1, "seq_len": 1}),
    ))
