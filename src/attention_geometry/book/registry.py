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

import types

from .params import (
    Bool, Choice, Float, FloatList, Int, IntList, Param, ParameterError, TextFolder, check_parameters,
    user_data,
)

__all__ = ["Chapter", "CHAPTERS", "get_chapter", "validate_parameters"]

SEED = Int("seed of every random draw in the chapter", low=0, high=2**32 - 1)
CORPUS_DIR = TextFolder(
    "folder of .txt files to use as the text; None: English prose from the Python "
    "standard library's docstrings"
)


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
                # >= 2: selectability compares keys; <= 10^4: the check forms an n x n score matrix
                "n_samples": Int("random inputs drawn per dimension", low=2, high=10_000),
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
        Chapter(
            name="uniform_attention",
            source="book/02_uniform_attention.md",
            params={
                "seed": SEED,
                "n_classes": Int("classes C of the majority task (the paper: 20)", low=2, high=1000),
                "length": Int("tokens n per sequence (the paper: 50)", low=2, high=10_000),
                "d": Int("model width d (the paper: 8)", low=2, high=512),
                "min_margin": Int("lead of the majority class over the runner-up (the original code: 6)",
                                  low=1, high=10_000),
                "n_train": Int("training sequences per seed, drawn once", low=1, high=1_000_000),
                "batch": Int("sequences per Adam step, drawn from the training set", low=1, high=1_000_000),
                "n_test": Int("held-out sequences per seed", low=1, high=1_000_000),
                "steps": Int("Adam steps per model", low=1, high=1_000_000),
                "n_seeds": Int("seeds (independent models) per variant", low=1, high=100),
                "lr": Float("Adam learning rate", low=0.0, high=1.0, low_open=True),
                "eval_every": Int("steps between two points of the curves", low=1, high=100_000),
                "loss_threshold": Float("test loss whose first crossing is timed", low=0.0, high=10.0,
                                        low_open=True),
                "check_keys": Int("keys in the numerical check of the proposition", low=2, high=100_000),
            },
            smoke={"n_classes": 5, "length": 12, "min_margin": 2, "n_train": 64, "batch": 16, "n_test": 32,
                   "steps": 6, "n_seeds": 2, "eval_every": 3, "check_keys": 10},
            presets={"paper": {"d": 8, "n_classes": 20, "length": 50, "min_margin": 6, "n_train": 80_000,
                               "batch": 80_000, "n_test": 20_000, "steps": 14_000, "n_seeds": 10,
                               "lr": 0.001, "eval_every": 200}},
        ),
        Chapter(
            name="selectability",
            source="book/03_selectability.md",
            params={
                "seed": SEED,
                "corpus_dir": CORPUS_DIR,
                "grid_n_min": Int("smallest number of keys n in the heat map", low=1, high=500),
                "grid_n_max": Int("largest number of keys n in the heat map", low=1, high=500),
                "grid_d_min": Int("smallest key dimension d in the heat map", low=2, high=200),
                "grid_d_max": Int("largest key dimension d in the heat map", low=2, high=200),
                "grid_sets": Int("random key sets per heat-map cell", low=1, high=10_000),
                "check_sets": Int("random sets on which the fast test meets the LP reference", low=4, high=2000),
                "tiny_steps": Int("Adam steps of each tiny decoder", low=1, high=100_000),
                "tiny_batch": Int("sequences per training step of the tiny decoders", low=1, high=1024),
                "tiny_seq_len": Int("bytes per sequence (keys per set) for the tiny decoders", low=4, high=1024),
                "tiny_eval_sequences": Int("held-out sequences measured per tiny decoder", low=1, high=10_000),
                "pretrained_sequences": Int("text windows measured in SmolLM2", low=1, high=256),
                "pretrained_seq_len": Int("tokens per window (keys per set) in SmolLM2", low=8, high=2048),
            },
            smoke={"grid_n_max": 8, "grid_d_max": 5, "grid_sets": 4, "check_sets": 4, "tiny_steps": 5,
                   "tiny_batch": 4, "tiny_seq_len": 16, "tiny_eval_sequences": 2,
                   "pretrained_sequences": 1, "pretrained_seq_len": 16},
        ),
        Chapter(
            name="cesaro",
            source="book/07_cesaro.md",
            params={
                "seed": SEED,
                "L": Int("sequence length of the profiles studied (the paper: 2048)", low=3, high=2**20),
                "H": Int("depth, number of layers (the paper: 24)", low=2, high=400),
                "alphas": FloatList("residual mixing weights alpha compared", low=0.0, high=1.0,
                                    max_len=12),
                "exact_L_max": Int("largest L for the exact matrix-power checks", low=2, high=12),
                "n_random_checks": Int("random (L, H, alpha) cases checked in exact arithmetic",
                                       low=1, high=500),
                "heatmap_L_max": Int("largest L (powers of 2 from 4) in the float64 error map",
                                     low=4, high=4096),
                "heatmap_H_max": Int("largest H in the float64 error map", low=1, high=96),
                "exact_reference_L_max": Int(
                    "largest L with an exact-rational reference in the error map", low=4, high=1024),
                "limit_L_max": Int("largest L in the continuous-limit study", low=16, high=2**23),
                "limit_Hs": IntList("depths H of the continuous-limit study", low=1, high=200,
                                    max_len=6),
                "n_alpha_grid": Int("alphas on the grid of the which-claim-holds figure",
                                    low=11, high=2001),
            },
            smoke={"L": 128, "H": 8, "alphas": [0.1, 0.5, 1.0], "exact_L_max": 4,
                   "n_random_checks": 3, "heatmap_L_max": 64, "heatmap_H_max": 8,
                   "exact_reference_L_max": 64, "limit_L_max": 4096, "limit_Hs": [2, 4],
                   "n_alpha_grid": 11},
        ),
        Chapter(
            name="jacobians",
            source="book/08_jacobians.md",
            params={
                "seed": SEED,
                "corpus_dir": CORPUS_DIR,
                "n_layers": Int("depth H of the random-init decoders (the paper: 24)", low=1, high=128),
                "width": Int("width d of the random-init decoders (the paper: 896)", low=8, high=4096),
                "n_heads": Int("query heads (the paper: 14)", low=1, high=64),
                "n_kv_heads": Int("key/value heads of the Qwen2-shaped decoders (the paper: 2)",
                                  low=1, high=64),
                "seq_len": Int("sequence length L of the random-init profiles (the paper: 2048)",
                               low=8, high=32768),
                "init_stds": FloatList("initialisation scales sigma compared (transformers: 0.02)",
                                       low=0.0, high=1.0, low_open=True, min_len=1, max_len=4),
                "est_layers": Int("depth of the small decoder of the estimator study", low=1, high=24),
                "est_width": Int("width of the small decoder of the estimator study", low=8, high=256),
                "est_seq_len": Int("sequence length of the estimator study", low=8, high=1024),
                "est_k": Int("probes per orthogonal estimate in the estimator study", low=1, high=256),
                "n_probe_draws": Int("Gaussian probes / orthogonal draws in the estimator study",
                                     low=8, high=100_000),
                "default_probes": Int("probes k of the estimator compared with the exact profile",
                                      low=1, high=4096),
                "pretrained_sequences": Int("text windows fed to SmolLM2 and its random-init twin",
                                            low=1, high=256),
                "pretrained_seq_len": Int("tokens per window for SmolLM2 (the paper: 2048)",
                                          low=8, high=8192),
                "pretrained_probes": Int("Gaussian probes per window for SmolLM2 and its twin",
                                         low=2, high=1024),
                "device": Choice("where the decoders run", choices=("cpu", "cuda")),
            },
            smoke={"n_layers": 2, "width": 16, "n_heads": 2, "n_kv_heads": 1, "seq_len": 16,
                   "init_stds": [0.02], "est_layers": 1, "est_width": 8, "est_seq_len": 8, "est_k": 2,
                   "n_probe_draws": 8, "default_probes": 2, "pretrained_sequences": 1,
                   "pretrained_seq_len": 8, "pretrained_probes": 2},
            presets={"paper": {"n_layers": 24, "width": 896, "n_heads": 14, "n_kv_heads": 2,
                               "seq_len": 2048, "pretrained_sequences": 8, "pretrained_seq_len": 2048,
                               "pretrained_probes": 32, "device": "cuda"}},
        ),
        Chapter(
            name="rank_collapse",
            source="book/04_rank_collapse.md",
            params={
                "seed": SEED,
                "corpus_dir": CORPUS_DIR,
                "n_tokens": Int("tokens per text window (N; the paper: 128)", low=16, high=512),
                "d_model": Int("width of the random networks; SmolLM2's 576-wide embeddings are projected "
                               "to it (576: no projection)", low=8, high=576),
                "n_inputs": Int("text windows, each through its own random network (the paper: 3000)",
                                low=3, high=5000),
                "n_layers": Int("depth of the random attention networks (the paper: 128)", low=8, high=512),
                "windows": IntList("window widths w of the sliding-window masks (the middle one is the "
                                   "reference)", low=1, high=511, min_len=1, max_len=6),
                "temperatures": FloatList("d_QK / d values compared with d_QK = d (small: sharp)",
                                          low=0.0, high=1e4, low_open=True, max_len=4),
                "n_heads": Int("heads of the multi-head variant (must divide d_model)", low=2, high=64),
                "paper_init_std": Float("weight standard deviation taken as the paper's initialisation "
                                        "(transformers' default initializer_range)", low=1e-4, high=1.0),
                "device": Choice("where the dynamics run", choices=("cpu", "cuda")),
            },
            smoke={"n_tokens": 32, "d_model": 32, "n_inputs": 3, "n_layers": 10, "windows": [2, 4],
                   "temperatures": [0.015625, 64.0], "n_heads": 4},
            # the paper's sizes (N = 128, 128 layers, the embeddings' full width 576) on 128 of its
            # 3000 inputs: about 37 s of one CPU core per input (measured), 1.3 h; all 3000 would
            # take about 31 h on one core (a GPU run)
            presets={"paper": {"n_tokens": 128, "n_layers": 128, "d_model": 576, "n_inputs": 128}},
        ),
        Chapter(
            name="layernorm_equilibria",
            source="book/05_layernorm_equilibria.md",
            params={
                "seed": SEED,
                "corpus_dir": CORPUS_DIR,
                "n_tokens_a": Int("tokens N in the orthogonal-W_V experiment", low=2, high=512),
                "d_a": Int("dimension d in the orthogonal-W_V experiment", low=2, high=1024),
                "n_samples_a": Int("random inputs in the orthogonal-W_V experiment", low=2, high=10000),
                "n_steps_a": Int("layers iterated in the orthogonal-W_V experiment", low=5, high=5000),
                "qk_scales": FloatList("standard deviations s of random W_QK (logit std for unit tokens): "
                                       "nearly uniform, then peaked", low=0.0, high=100.0, max_len=4),
                "beta_similarity": Float("beta of W_QK = beta I (attention to similar tokens)", low=0.0,
                                         high=200.0),
                "grid_2x2": Int("grid points per angle in the N = d = 2 basin map", low=10, high=1000),
                "steps_2x2": Int("layers iterated in the N = d = 2 basin map", low=10, high=5000),
                "rank_n": Int("tokens N in the rank construction", low=2, high=64),
                "rank_d": Int("dimension d in the rank construction (the centred version uses d - 1)",
                              low=3, high=16),
                "n_random": Int("random inputs run in the basin and rank experiments", low=10, high=100000),
                "steps_rank": Int("layers iterated from the random inputs", low=10, high=10000),
                "n_text_samples": Int("text windows for the pretrained-model geometry (the paper: 3000)",
                                      low=2, high=3000),
                "seq_len": Int("tokens per text window (the paper: 128)", low=8, high=1024),
                "device": Choice("where the pretrained model runs", choices=("cpu", "cuda")),
            },
            smoke={"n_tokens_a": 8, "d_a": 4, "n_samples_a": 4, "n_steps_a": 20, "grid_2x2": 20,
                   "steps_2x2": 60, "rank_n": 3, "rank_d": 3, "n_random": 50, "steps_rank": 50,
                   "n_text_samples": 2, "seq_len": 16},
            # the paper's 3000 windows of 128 tokens: about 1 s of CPU per window (two models)
            presets={"paper": {"n_text_samples": 3000, "seq_len": 128}},
        ),
        Chapter(
            name="recency",
            source="book/06_recency.md",
            params={
                "seed": SEED,
                "n_samples": Int("sequences per simulated model in the figures (the paper: 100,000)",
                                 low=100, high=10_000_000),
                "n_samples_sweep": Int("sequences per model in the sweeps over d, alpha, gamma",
                                       low=100, high=10_000_000),
                "n_tokens": Int("tokens per sequence (the paper: 10)", low=3, high=64),
                "d": Int("width of the figure reproductions (the paper: 64)", low=4, high=16384),
                "n_layers": Int("layers simulated (the paper's figures: several)", low=2, high=32),
                "alpha_rows": Float("anisotropy of rows 3 and 4 of the first figure (the paper: 0.5)",
                                    low=0.0, high=0.99),
                "alphas": FloatList("anisotropies alpha of the sweeps", low=0.0, high=0.99,
                                    max_len=8),
                "dims": IntList("widths d of the recency-probability sweep", low=4, high=16384,
                                max_len=8),
                "regime_dims": IntList("widths d of the regime sweep (effect against noise)",
                                       low=4, high=16384, max_len=16),
                "device": Choice("torch device of the simulation", choices=("cpu", "cuda")),
            },
            smoke={"n_samples": 2000, "n_samples_sweep": 1000, "n_layers": 2,
                   "alphas": [0.0, 0.5], "dims": [16, 64], "regime_dims": [4, 16, 64]},
        ),
        Chapter(
            name="synthesis",
            source="book/09_synthesis.md",
            params={
                "seed": SEED,
                "d": Int("width of the switched-component decoder (even)", low=4, high=512),
                "n_tokens": Int("tokens per sequence", low=4, high=128),
                "n_layers": Int("depth of the baseline decoder (the depth variant doubles it)",
                                low=1, high=32),
                "batch": Int("sequences for the recency probability and mu", low=2, high=100_000),
                "jac_batch": Int("sequences for the exact Jacobian profile", low=1, high=256),
                "alpha": Float("anisotropy of the inputs", low=0.0, high=0.99),
                "window": Int("width of the sliding-window variant", low=1, high=128),
                "run_sweep_demo": Bool("run the small recency sweep on Dask (about a minute)"),
                "sweep_dims": IntList("widths d of the recency sweep", low=4, high=16384,
                                      min_len=1, max_len=4),
                "sweep_alphas": FloatList("anisotropies alpha_rows of the recency sweep",
                                          low=0.0, high=0.99, min_len=1, max_len=4),
            },
            smoke={"d": 8, "n_tokens": 6, "n_layers": 2, "batch": 8, "jac_batch": 1,
                   "run_sweep_demo": False},
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


def validate_parameters(chapter: str, namespace: Mapping[str, Any]) -> types.SimpleNamespace:
    """Validate a chapter's parameters as they stand in the notebook namespace.

    Call it right after the ``parameters`` cell as
    ``P = validate_parameters("layernorm", globals())``. Every plain-data name
    defined so far must be a known parameter of the chapter, every parameter
    must be present, and each value must be allowed. Returns the normalised
    values as a read-only-by-convention namespace.
    """
    spec = get_chapter(chapter).params
    present = user_data(namespace)
    values = check_parameters(spec, present)
    missing = sorted(set(spec) - set(values))
    if missing:
        raise ParameterError(
            f"chapter {chapter!r}: parameters cell does not define {', '.join(missing)}"
        )
    return types.SimpleNamespace(**values)
