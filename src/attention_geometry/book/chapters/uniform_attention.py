"""Chapter 2, *Projection lets a query attend uniformly* (``book/02_uniform_attention.md``): its parameters."""

from pydantic import Field

from ..cost import CostModel
from ..params import ChapterParams, Seed

__all__ = ["UniformAttentionParams"]


class UniformAttentionParams(ChapterParams):
    """The parameters of chapter ``uniform_attention``; each default is the value in its ``parameters`` cell."""

    seed: Seed = 0
    n_classes: int = Field(20, ge=2, le=1000, description="classes C of the majority task (the original: 20)")
    length: int = Field(50, ge=2, le=10_000, description="tokens n per sequence (the original: 50)")
    d: int = Field(8, ge=2, le=512, description="model width d (the original: 8)")
    min_margin: int = Field(6, ge=1, le=10_000,
        description="lead of the majority class over the runner-up (the original: 6)")
    n_sequences: int = Field(100_000, ge=10, le=10_000_000,
        description="sequences drawn per seed, split 80/20 (the original: 100,000)")
    n_seeds: int = Field(10, ge=2, le=100, description="seeds (independent models) per variant (the original: 10)")
    steps: int = Field(800, ge=1, le=1_000_000, description="Adam steps per model (the original: 14,000)")
    batch: int = Field(256, ge=1, le=1_000_000, description="sequences per Adam step (the original: 6,000)")
    lr: float = Field(0.01, gt=0.0, le=1.0, description="initial Adam learning rate (the original: 0.001)")
    lr_decay_epochs: int = Field(10_000, ge=0, le=10_000_000,
        description="epochs over which the learning rate decays linearly to 0; 0: constant (the original: 10,000)")
    eval_every: int = Field(80, ge=1, le=1_000_000, description="steps between two points of the curves")
    eval_sequences: int = Field(2000, ge=0, le=10_000_000,
        description="test sequences behind the curves; 0: all (the final numbers use all)")
    check_keys: int = Field(50, ge=2, le=100_000, description="keys in the numerical check of the proposition")
    geo_seeds: int = Field(5, ge=2, le=100, description="seeds of the d = 3 runs (the original: 10)")
    geo_steps: int = Field(500, ge=1, le=1_000_000, description="Adam steps of the d = 3 runs (the original: 10,000)")
    geo_batch: int = Field(512, ge=1, le=1_000_000,
        description="sequences per step of the d = 3 runs (the original: 6,000, the full set)")
    geo_lr: float = Field(0.01, gt=0.0, le=1.0, description="learning rate of the d = 3 runs (the original: 0.001)")

    smoke = {"n_classes": 5, "length": 12, "min_margin": 2, "n_sequences": 300, "n_seeds": 3, "steps": 6,
             "batch": 32, "eval_every": 3, "eval_sequences": 0, "check_keys": 10, "geo_seeds": 2,
             "geo_steps": 4, "geo_batch": 256}
    # run_with_projection.bash / run_without_projection.bash and their _3d versions, with the
    # original's every setting, its 10 seeds included (the stored run: 9,869 s on 2 CPU cores,
    # in two parts across sessions, resumed from checkpoints); the d = 3 geometry keeps 5 of
    # the original's 10 seeds (the table says so)
    presets = {
        "paper": {"n_classes": 20, "length": 50, "d": 8, "min_margin": 6, "n_sequences": 100_000, "n_seeds": 10,
                  "steps": 14_000, "batch": 6000, "lr": 0.001, "lr_decay_epochs": 10_000,
                  "eval_every": 140, "eval_sequences": 0, "geo_seeds": 5, "geo_steps": 10_000,
                  "geo_batch": 6000, "geo_lr": 0.001},
    }
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    cost = CostModel(85, (
        (0.7, {"steps": 1, "n_seeds": 1, "n_sequences": 1, "length": 1}),
        (0.2, {"geo_steps": 1, "geo_seeds": 1, "geo_batch": 1}),
    ))
