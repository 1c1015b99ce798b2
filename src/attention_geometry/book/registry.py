"""The book's executable chapters: where each lives and what its parameters are.

A chapter's *defaults* are the values in its papermill ``parameters`` cell (one
source of truth, visible to the reader). This registry holds what the cell
cannot say: each parameter's type, allowed range and meaning, the ``smoke``
set (tiny sizes, seconds to run) that the tests execute, and any named
parameter sets (for instance a paper's full scale). A test checks that the
cell and this registry name the same parameters.
"""

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import types

from .params import (
    Bool, Choice, Float, FloatList, Int, IntList, Param, ParameterError, TextFolder, check_parameters,
    user_data,
)

__all__ = ["Chapter", "CostModel", "CHAPTERS", "find_chapter", "get_chapter", "validate_parameters"]

SEED = Int("seed of every random draw in the chapter", low=0, high=2**32 - 1)
CORPUS_DIR = TextFolder(
    "folder of .txt files to use as the text; None: English prose from the Python "
    "standard library's docstrings"
)


def _size(name: str, parameters: Mapping[str, Any]) -> float:
    """A cost term's value: ``name`` itself, ``len:name`` (a list's length) or ``sum:name``."""
    how, _, param = name.rpartition(":")
    value = parameters.get(param)
    if how == "len":
        return float(len(value or ()))
    if how == "sum":
        return float(sum(value or ()))
    return float(value)


@dataclass(frozen=True)
class CostModel:
    """A chapter's execution time as a function of its parameters, calibrated on the defaults.

    ``seconds``: the time at the defaults (one kernel of the 2-core reference
    machine; the last measured time of the book's own run replaces it when there
    is one). Each of ``parts`` is ``(share, {term: exponent})``: that share of the
    time scales as the product of ``(value / default) ** exponent`` over its terms
    (a term is a parameter, ``len:<list>`` or ``sum:<list>``); what the parts do
    not share is fixed (kernel start, imports).
    """

    seconds: float
    parts: tuple[tuple[float, Mapping[str, float]], ...] = ()

    def estimate(self, parameters: Mapping[str, Any], defaults: Mapping[str, Any],
                 seconds: float | None = None) -> float:
        """Seconds for ``parameters`` (missing ones at their ``defaults``); ``seconds``:
        the time measured at the defaults, if known."""
        base = self.seconds if seconds is None else seconds
        values = {**defaults, **parameters}
        fixed = 1.0 - sum(share for share, _ in self.parts)
        total = fixed
        for share, terms in self.parts:
            factor = 1.0
            for term, exponent in terms.items():
                default = _size(term, defaults)
                factor *= (_size(term, values) / default) ** exponent if default else 1.0
            total += share * factor
        return base * total


@dataclass(frozen=True)
class Chapter:
    """One executable chapter of the book."""

    name: str  # what `make run CHAPTER=...` takes
    source: str  # Jupytext MyST source, relative to the repository root
    params: Mapping[str, Param]
    smoke: Mapping[str, Any]  # tiny sizes for the tests: seconds, not minutes
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # chapters whose executed notebooks this one's results depend on (chapter 9
    # reads their claims): it executes after them, and editing them re-executes it
    depends_on: tuple[str, ...] = ()
    # the glued number a sweep plots by default (its "headline" quantity)
    headline: str | None = None
    # seconds as a function of the parameters (what `make run` announces before a long run)
    cost: CostModel | None = None

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
                "n_classes": Int("classes C of the majority task (the original: 20)", low=2, high=1000),
                "length": Int("tokens n per sequence (the original: 50)", low=2, high=10_000),
                "d": Int("model width d (the original: 8)", low=2, high=512),
                "min_margin": Int("lead of the majority class over the runner-up (the original: 6)",
                                  low=1, high=10_000),
                "n_sequences": Int("sequences drawn per seed, split 80/20 (the original: 100,000)",
                                   low=10, high=10_000_000),
                "n_seeds": Int("seeds (independent models) per variant (the original: 10)", low=2, high=100),
                "steps": Int("Adam steps per model (the original: 14,000)", low=1, high=1_000_000),
                "batch": Int("sequences per Adam step (the original: 6,000)", low=1, high=1_000_000),
                "lr": Float("initial Adam learning rate (the original: 0.001)", low=0.0, high=1.0, low_open=True),
                "lr_decay_epochs": Int("epochs over which the learning rate decays linearly to 0; 0: constant "
                                       "(the original: 10,000)", low=0, high=10_000_000),
                "eval_every": Int("steps between two points of the curves", low=1, high=1_000_000),
                "eval_sequences": Int("test sequences behind the curves; 0: all (the final numbers use all)",
                                      low=0, high=10_000_000),
                "check_keys": Int("keys in the numerical check of the proposition", low=2, high=100_000),
                "geo_seeds": Int("seeds of the d = 3 runs (the original: 10)", low=2, high=100),
                "geo_steps": Int("Adam steps of the d = 3 runs (the original: 10,000)", low=1, high=1_000_000),
                "geo_batch": Int("sequences per step of the d = 3 runs (the original: 6,000, the full set)",
                                 low=1, high=1_000_000),
                "geo_lr": Float("learning rate of the d = 3 runs (the original: 0.001)", low=0.0, high=1.0,
                                low_open=True),
            },
            smoke={"n_classes": 5, "length": 12, "min_margin": 2, "n_sequences": 300, "n_seeds": 3, "steps": 6,
                   "batch": 32, "eval_every": 3, "eval_sequences": 0, "check_keys": 10, "geo_seeds": 2,
                   "geo_steps": 4, "geo_batch": 256},
            # run_with_projection.bash / run_without_projection.bash and their _3d versions, with the
            # original's every setting, its 10 seeds included (the stored run: 9,869 s on 2 CPU cores,
            # in two parts across sessions, resumed from checkpoints); the d = 3 geometry keeps 5 of
            # the original's 10 seeds (the table says so)
            presets={"paper": {"n_classes": 20, "length": 50, "d": 8, "min_margin": 6, "n_sequences": 100_000,
                               "n_seeds": 10, "steps": 14_000, "batch": 6000, "lr": 0.001,
                               "lr_decay_epochs": 10_000, "eval_every": 140, "eval_sequences": 0,
                               "geo_seeds": 5, "geo_steps": 10_000, "geo_batch": 6000, "geo_lr": 0.001}},
        ),
        Chapter(
            name="selectability",
            source="book/03_selectability.md",
            params={
                "seed": SEED,
                "corpus_dir": CORPUS_DIR,
                "grid_n_min": Int("smallest number of keys n in the heat map (the original: 3)", low=1, high=500),
                "grid_n_max": Int("largest number of keys n in the heat map (the original: 60)", low=1, high=500),
                "grid_d_min": Int("smallest key dimension d in the heat map (the original: 3)", low=2, high=200),
                "grid_d_max": Int("largest key dimension d in the heat map (the original: 15)", low=2, high=200),
                "grid_sets": Int("random key sets per heat-map cell (the original: 100)", low=1, high=10_000),
                "check_sets": Int("random sets on which the fast test meets the LP reference", low=4, high=2000),
                "growth_sets": Int("Gaussian sets per size in the growth figure (up to 1,024 keys)", low=2,
                                   high=10_000),
                "tiny_steps": Int("training steps of each tiny decoder (the original: 50,000)", low=1,
                                  high=1_000_000),
                "tiny_schedule_steps": Int("step at which the learning rate reaches 0 (the original: 50,000); "
                                           "0: tiny_steps", low=0, high=1_000_000),
                "tiny_batch": Int("sequences per training step (the original: 16)", low=1, high=1024),
                "tiny_seq_len": Int("bytes per training sequence (the original: 1,024 tokens)", low=4, high=1024),
                "tiny_lr": Float("initial AdamW learning rate (the original: 5e-5)", low=0.0, high=1.0,
                                 low_open=True),
                "lm_windows": Int("held-out windows for the language-modelling comparison (the original: "
                                  "1,000)", low=2, high=100_000),
                "table_sets": Int("key sets (held-out windows) for Tables 1-2 (the original: 1,000)", low=2,
                                  high=100_000),
                "table_n_min": Int("fewest keys per set for Tables 1-2 (the original: 768)", low=2, high=1024),
                "table_n_max": Int("most keys per set for Tables 1-2 (the original: 1,024)", low=2, high=1024),
                "short_sets": Int("key sets for Table 3 (the original: 1,000)", low=2, high=100_000),
                "short_n_min": Int("fewest keys per set for Table 3", low=2, high=1024),
                "short_n_max": Int("most keys per set for Table 3 (the original: 128)", low=2, high=1024),
                "pretrained_sequences": Int("text windows measured in SmolLM2", low=1, high=256),
                "pretrained_seq_len": Int("tokens per window (keys per set) in SmolLM2", low=8, high=2048),
            },
            smoke={"grid_n_max": 8, "grid_d_max": 5, "grid_sets": 4, "check_sets": 4, "growth_sets": 2,
                   "tiny_steps": 3, "tiny_batch": 2, "tiny_seq_len": 32, "lm_windows": 4, "table_sets": 3,
                   "table_n_min": 16, "table_n_max": 32, "short_sets": 3, "short_n_min": 8, "short_n_max": 32,
                   "pretrained_sequences": 1, "pretrained_seq_len": 16},
            # unselectable_experiments.sh: Fig. 1c-d (unselectable_figure.py), train_GPT2.py at max_steps 50,000
            # (here the first 1,000 steps of that schedule, for each of the two norms: 1.5-1.8 s per step on
            # one core beside another paper run), Tables 1-2 (--min_sample_size 768 --max_sample_size 1024;
            # 300 of the original's 1,000 samples: about 0.3 s per set of 900 keys in d = 8, per layer and
            # model), Table 3 (at most 128 tokens): the largest run that fits about 80 min on 2 cores
            # beside chapter 4's paper run
            presets={"paper": {"grid_n_min": 3, "grid_n_max": 60, "grid_d_min": 3, "grid_d_max": 15,
                               "grid_sets": 100, "growth_sets": 100, "tiny_steps": 1000,
                               "tiny_schedule_steps": 50_000, "tiny_batch": 16, "tiny_seq_len": 1024,
                               "tiny_lr": 5e-5, "lm_windows": 1000, "table_sets": 300, "table_n_min": 768,
                               "table_n_max": 1024, "short_sets": 1000, "short_n_min": 8, "short_n_max": 128}},
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
            presets={"paper": {"L": 2048, "H": 24}},
        ),
        Chapter(
            name="jacobians",
            source="book/08_jacobians.md",
            params={
                "seed": SEED,
                "corpus_dir": CORPUS_DIR,
                "n_layers": Int("depth H of the Qwen2-shaped decoders (the paper: 24)", low=1, high=128),
                "width": Int("width d of the Qwen2-shaped decoders (the paper: 896)", low=8, high=4096),
                "n_heads": Int("query heads of the Qwen2-shaped decoders (the paper: 14)", low=1, high=64),
                "n_kv_heads": Int("key/value heads of the Qwen2-shaped decoders (the paper: 2)",
                                  low=1, high=64),
                "seq_len": Int("sequence length L of the Qwen2-shaped profiles (the paper: 2048)",
                               low=8, high=32768),
                "init_stds": FloatList("initialisation scales sigma of the Qwen2-shaped decoders "
                                       "(transformers and the paper: 0.02)",
                                       low=0.0, high=1.0, low_open=True, min_len=1, max_len=4),
                "width_standin": Bool("add the stand-in sigma = 0.02 sqrt(896/d) (768 for GPT-2), "
                                      "which gives a width-d decoder the paper's score spread"),
                "gpt2_layers": Int("depth of the GPT-2-shaped decoder (GPT-2 small: 12)", low=1, high=128),
                "gpt2_width": Int("width of the GPT-2-shaped decoder (GPT-2 small: 768)", low=8, high=4096),
                "gpt2_heads": Int("heads of the GPT-2-shaped decoder (GPT-2 small: 12)", low=1, high=64),
                "gpt2_seq_len": Int("sequence length of the GPT-2-shaped profiles (GPT-2: 1024)",
                                    low=8, high=1024),
                "n_sequences": Int("sequences per random-init profile (the paper: 200)", low=4, high=10_000),
                "probes": Int("orthogonal probes per sequence (the estimator's k)", low=1, high=4096),
                "batch_size": Int("sequences per forward/backward pass (memory against speed)",
                                  low=1, high=1024),
                "n_boot": Int("bootstrap replicates over sequences for every interval", low=10,
                              high=100_000),
                "mc_draws": Int("Monte Carlo draws of the linear model (derived expectation check)",
                                low=10, high=1_000_000),
                "est_layers": Int("depth of the small decoder of the estimator study", low=1, high=24),
                "est_width": Int("width of the small decoder of the estimator study", low=8, high=256),
                "est_seq_len": Int("sequence length of the estimator study", low=8, high=1024),
                "est_k": Int("probes per orthogonal estimate in the estimator study", low=1, high=256),
                "n_probe_draws": Int("Gaussian probes / orthogonal draws in the estimator study",
                                     low=8, high=100_000),
                "pathway_widths": IntList("widths of the score-pathway study (multiples of 8; at least 3 for a slope)", low=8,
                                          high=4096, min_len=1, max_len=8),
                "pathway_layers": Int("depth of the score-pathway study", low=1, high=48),
                "pathway_seq_len": Int("sequence length of the score-pathway study", low=8, high=4096),
                "heads_list": IntList("head counts of the heads study (each dividing heads_width; at least 3)",
                                      low=1, high=64, min_len=1, max_len=8),
                "heads_width": Int("width of the heads study", low=8, high=1024),
                "heads_layers": Int("depth of the heads study", low=1, high=48),
                "heads_seq_len": Int("sequence length of the heads study", low=4, high=1024),
                "n_inits": Int("initialisations per head count", low=3, high=1000),
                "pretrained_sequences": Int("text windows fed to SmolLM2 and its random-init twin",
                                            low=4, high=1024),
                "pretrained_seq_len": Int("tokens per window for SmolLM2 (the paper: 2048)",
                                          low=16, high=8192),
                "pretrained_probes": Int("orthogonal probes per window for SmolLM2 and its twin",
                                         low=1, high=1024),
                "chunk_len": Int("tokens per chunk of the chunked windows (the paper: 300)", low=4,
                                 high=4096),
                "toy_layers": Int("depth of the toy decoder trained for the paper's Fig. 3", low=1, high=48),
                "toy_width": Int("width of the toy decoder (a multiple of 8)", low=8, high=1024),
                "toy_seq_len": Int("bytes per training and held-out window of the toy", low=8, high=4096),
                "toy_steps": Int("training steps of the toy (the paper: 100)", low=1, high=100_000),
                "toy_eval_sequences": Int("held-out windows measured during training (the paper: 10)",
                                          low=2, high=1024),
                "device": Choice("where the decoders run", choices=("cpu", "cuda")),
            },
            smoke={"n_layers": 2, "width": 16, "n_heads": 2, "n_kv_heads": 1, "seq_len": 16,
                   "gpt2_layers": 2, "gpt2_width": 16, "gpt2_heads": 2, "gpt2_seq_len": 16,
                   "n_sequences": 4, "probes": 1, "batch_size": 4, "n_boot": 10, "mc_draws": 50,
                   "est_layers": 1, "est_width": 8, "est_seq_len": 8, "est_k": 2, "n_probe_draws": 8,
                   "pathway_widths": [16, 32, 64], "pathway_layers": 1, "pathway_seq_len": 8,
                   "heads_list": [1, 2, 4], "heads_width": 16, "heads_layers": 1, "heads_seq_len": 8,
                   "n_inits": 3, "pretrained_sequences": 4, "pretrained_seq_len": 24,
                   "pretrained_probes": 1, "chunk_len": 8, "toy_layers": 1, "toy_width": 16,
                   "toy_seq_len": 16, "toy_steps": 4, "toy_eval_sequences": 2},
            # The paper's shapes (Qwen2-0.5B; GPT-2 small), sigma = 0.02, 16 sequences: the largest
            # faithful subset on 2 CPU cores (the paper: exact profiles of 200 sequences).
            presets={"paper": {"n_layers": 24, "width": 896, "n_heads": 14, "n_kv_heads": 2,
                               "seq_len": 2048, "init_stds": [0.02], "width_standin": True,
                               "gpt2_layers": 12, "gpt2_width": 768, "gpt2_heads": 12,
                               "gpt2_seq_len": 1024, "n_sequences": 16, "probes": 4, "batch_size": 1,
                               "n_boot": 200, "mc_draws": 20000,
                               "pathway_widths": [64, 128, 256, 512, 896], "n_inits": 16,
                               "pretrained_sequences": 16, "pretrained_seq_len": 2048,
                               "pretrained_probes": 2, "chunk_len": 300, "toy_layers": 12,
                               "toy_width": 128, "toy_seq_len": 512, "toy_steps": 100,
                               "toy_eval_sequences": 10}},
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
            # windows of the paper's 128 tokens, 1,000 of its 3000: about 1 s of CPU per window (two
            # models), so all 3000 take about 50 min of one core; the rest of the chapter runs at its
            # defaults (its experiments are the book's own, not the paper's)
            presets={"paper": {"n_text_samples": 1000, "seq_len": 128}},
        ),
        Chapter(
            name="recency",
            source="book/06_recency.md",
            params={
                "seed": SEED,
                "corpus_dir": CORPUS_DIR,
                "n_samples": Int("sequences per model of the first figure (the paper: 100,000; the authors' "
                                 "later repository version: 10^7)", low=100, high=100_000_000),
                "n_samples_alpha": Int("sequences per model of the anisotropy sweeps at width d (the later "
                                       "repository version: 10^7)", low=100, high=100_000_000),
                "n_samples_sweep": Int("sequences per point of the width x anisotropy x residual grid at the "
                                       "other widths", low=100, high=100_000_000),
                "n_samples_factor": Int("sequences per width of the missing-factor study (control variates)",
                                        low=100, high=100_000_000),
                "n_tokens": Int("tokens per sequence (the paper: 10)", low=3, high=64),
                "d": Int("width of the anisotropy sweeps and single-width analyses (the paper: 64; the later "
                         "repository version sweeps anisotropy at 16)", low=4, high=16384),
                "n_layers": Int("layers simulated (the paper: 4)", low=2, high=32),
                "alpha_rows": Float("anisotropy of rows 3 and 4 of the first figure (the paper: 0.5)",
                                    low=0.0, high=0.99),
                "alphas": FloatList("anisotropies alpha of the sweeps", low=0.0, high=0.99, max_len=8),
                "figure_dims": IntList("widths of the first figure (the later repository version: 16, 64, "
                                       "256, 1024)", low=4, high=16384, min_len=1, max_len=8),
                "dims": IntList("widths d of the recency-probability grid", low=4, high=16384, max_len=8),
                "factor_dims": IntList("widths d of the missing-factor study at alpha = 0", low=4, high=400,
                                       max_len=16),
                "heatmap_scale": Choice("colour scale of the heat maps: the authors' ('paper'), one per "
                                        "panel, or one per row", choices=("paper", "panel", "row")),
                "ext_models": Int("weight draws per addition to the paper's layer", low=2, high=1024),
                "ext_samples": Int("input sequences per weight draw", low=16, high=1_000_000),
                "nope_d": Int("width of the trained NoPE decoder", low=8, high=512),
                "nope_seq_len": Int("training and evaluation window of the NoPE decoder (bytes)", low=8,
                                    high=512),
                "nope_steps": Int("Adam steps of the NoPE decoder", low=1, high=1_000_000),
                "nope_seeds": Int("training seeds of the NoPE decoder (its recency's error is over them)",
                                  low=2, high=100),
                "device": Choice("torch device of the simulation", choices=("cpu", "cuda")),
            },
            smoke={"n_samples": 2000, "n_samples_alpha": 1000, "n_samples_sweep": 1000,
                   "n_samples_factor": 2000, "n_layers": 2, "alphas": [0.0, 0.5], "dims": [16, 64],
                   "factor_dims": [16, 36], "ext_models": 2, "ext_samples": 32, "nope_d": 8,
                   "nope_seq_len": 8, "nope_steps": 4, "nope_seeds": 2},
            # The authors' later repository version (starmpcc/layernorm_recency_bias, commit d68cf47,
            # concept/simulation.ipynb): 10^7 sequences of 10 tokens, the four models at d = 16, 64,
            # 256, 1024, four layers, anisotropy sweeps at d = 16. The grid, the missing-factor study,
            # the extensions and the NoPE decoder are this book's; they are scaled up, not the paper's.
            # nope_seeds: five seeds, so that the trained NoPE row has an error over training.
            presets={"paper": {"n_samples": 10_000_000, "n_samples_alpha": 10_000_000,
                               "n_samples_sweep": 1_000_000, "n_samples_factor": 1_000_000, "n_tokens": 10,
                               "d": 16, "n_layers": 4, "alpha_rows": 0.5, "alphas": [0.0, 0.2, 0.4, 0.6, 0.8],
                               "figure_dims": [16, 64, 256, 1024], "dims": [16, 64, 256, 1024],
                               "factor_dims": [16, 25, 36, 49, 64, 100, 144, 196, 256, 400],
                               "ext_models": 32, "ext_samples": 8192, "nope_d": 64, "nope_seq_len": 64,
                               "nope_steps": 8000, "nope_seeds": 5}},
        ),
        Chapter(
            name="synthesis",
            source="book/09_synthesis.md",
            params={
                "seed": SEED,
                "d": Int("width of the switchable decoder (a multiple of 2 n_heads)", low=4, high=512),
                "n_tokens": Int("tokens per sequence", low=8, high=256),
                "n_layers": Int("depth H of the baseline decoder (the depth variant doubles it)",
                                low=1, high=32),
                "n_heads": Int("attention heads", low=1, high=16),
                "batch": Int("sequences per variant", low=8, high=100_000),
                "jac_batch": Int("sequences for the exact Jacobian profiles", low=2, high=256),
                "anisotropy": Float("anisotropy a of the inputs", low=0.0, high=0.99),
                "alpha": Float("residual weight alpha of the baseline (1: no residual)", low=0.01, high=1.0),
                "window": Int("width w of the one-sided window variant", low=1, high=255),
                "scales": FloatList("weight scales of the uniformity study", low=0.0, high=100.0,
                                    low_open=True, min_len=2, max_len=12),
                "cesaro_L": Int("sequence length of the Cesàro collapse check", low=4, high=1024),
            },
            smoke={"d": 8, "n_tokens": 10, "n_layers": 2, "n_heads": 2, "batch": 8, "jac_batch": 2,
                   "window": 2, "scales": [0.5, 1.0], "cesaro_L": 8},
            # it reads the claims ledger of the other chapters' executed notebooks
            depends_on=("layernorm", "uniform_attention", "selectability", "rank_collapse",
                        "layernorm_equilibria", "recency", "cesaro", "jacobians"),
        ),
    ]
}

# What a reader of a rerun sees first: each chapter's headline quantity (a glued
# number; the default y axis of a sweep's figure) and its cost model, the shares
# of its time at the defaults that scale with each group of parameters. Kept
# apart from the parameter specifications above, which the chapters' authors edit.
# The seconds: each chapter at its defaults in the cold book build of a clean clone
# on 2026-12-03 (commit 11be456; two kernels at a time on the 2-core reference
# machine, synthesis alone on both cores); a clean clone's build starts the
# longest first by them.
_READER = {
    "layernorm": dict(headline="ln-err64-max", cost=CostModel(11, (
        (0.6, {"n_samples": 1, "d_max": 1}), (0.1, {"n_points_3d": 1})))),
    "uniform_attention": dict(headline="ua-d-layernorm-rmsnorm-final-test-accuracy", cost=CostModel(85, (
        (0.7, {"steps": 1, "n_seeds": 1, "n_sequences": 1, "length": 1}),
        (0.2, {"geo_steps": 1, "geo_seeds": 1, "geo_batch": 1})))),
    "selectability": dict(headline="sel-corner-mean", cost=CostModel(116, (
        (0.3, {"grid_sets": 1, "grid_n_max": 2, "grid_d_max": 1}),
        (0.3, {"tiny_steps": 1, "tiny_batch": 1, "tiny_seq_len": 1}),
        (0.2, {"table_sets": 1, "table_n_max": 2}),
        (0.1, {"pretrained_sequences": 1, "pretrained_seq_len": 1})))),
    "rank_collapse": dict(headline="rc-tc-causal", cost=CostModel(43, (
        (0.8, {"n_inputs": 1, "n_layers": 1, "n_tokens": 2, "d_model": 1, "len:windows": 0.5,
               "len:temperatures": 0.5}),))),
    "layernorm_equilibria": dict(headline="le-frac2-b", cost=CostModel(43, (
        (0.3, {"n_samples_a": 1, "n_steps_a": 1, "n_tokens_a": 2}), (0.2, {"grid_2x2": 2, "steps_2x2": 1}),
        (0.2, {"n_random": 1, "steps_rank": 1}), (0.2, {"n_text_samples": 1, "seq_len": 1})))),
    "recency": dict(headline="rec-thm1-rp2", cost=CostModel(93, (
        (0.25, {"n_samples": 1, "n_layers": 1, "n_tokens": 2}),
        (0.15, {"n_samples_sweep": 1, "len:dims": 1, "len:alphas": 1, "n_tokens": 2}),
        (0.05, {"ext_samples": 1}), (0.45, {"nope_steps": 1, "nope_seeds": 1, "nope_seq_len": 1, "nope_d": 1})))),
    "cesaro": dict(headline="cesaro-alpha-u", cost=CostModel(28, (
        (0.3, {"L": 1, "H": 1, "len:alphas": 1}), (0.3, {"heatmap_L_max": 1, "heatmap_H_max": 1}),
        (0.2, {"limit_L_max": 1, "len:limit_Hs": 1})))),
    "jacobians": dict(headline="jac-q-sp", cost=CostModel(69, (
        (0.4, {"n_layers": 1, "width": 2, "seq_len": 2, "n_sequences": 1, "probes": 1}),
        (0.2, {"pretrained_sequences": 1, "pretrained_seq_len": 2, "pretrained_probes": 1}),
        (0.1, {"toy_steps": 1, "toy_width": 2}), (0.1, {"n_probe_draws": 1, "est_seq_len": 1})))),
    "synthesis": dict(headline="syn-base-rp", cost=CostModel(26, (
        (0.8, {"batch": 1, "n_layers": 1, "d": 2, "n_tokens": 2}),))),
}
CHAPTERS = {name: replace(chapter, **_READER.get(name, {})) for name, chapter in CHAPTERS.items()}


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
