"""attention_geometry: the library behind the book *Attention Geometry*.

One module per mathematical object; everything public is re-exported here.
Figures live in :mod:`attention_geometry.figures` and the book tooling in
:mod:`attention_geometry.book`; both are imported explicitly, and the
mathematics imports neither (it uses numpy, torch and scipy only).
"""

from . import cesaro, layernorm
from .cesaro import *  # noqa: F403 (its __all__ is the public Cesàro API)
from .jacobians import (
    ARCHITECTURES,
    NoRotary,
    build_decoder,
    random_init_like,
    keep_norm_dtype,
    context_length,
    random_embeddings,
    draw_probes,
    probe_norms,
    exact_profile,
    jacobian_blocks,
    ProfileEstimate,
    estimate_profile,
    estimator_variance,
    attention_score_std,
    CesaroFit,
    fit_cesaro,
    normalised_positions_wasserstein,
    profile_spearman,
    ProfileSummary,
    summarise_profile,
    ends_over_middle,
)
from .layernorm import *  # noqa: F403 (its __all__ is the public LayerNorm API)
from .selectability import (
    any_unselectable,
    classify_keys,
    fraction_unselectable,
    gaussian_key_sets,
    multihead_example,
    percent_unselectable,
    selectability_grid,
    unselectable_mask,
    unselectable_mask_lp,
)
from .models.tiny_decoder import TinyDecoder, TinyDecoderConfig, layer_selectability, train_tiny_decoder
from .attention import (
    causal_mask,
    check_mask,
    complete_mask,
    make_mask,
    mask_graph,
    one_sided_window_mask,
    sliding_window_mask,
)
from .collapse import fit_rate, mu, mu_over_depth
from .models.corpus import byte_batches, describe_corpus, load_corpus, token_batches
from .majority import (
    NORM_VARIANTS,
    MajorityRun,
    angle_to_ones,
    attention_norm,
    effective_queries,
    init_majority_params,
    majority_counts,
    majority_data,
    majority_forward,
    majority_forward_counts,
    majority_labels,
    majority_margin,
    steps_to_reach,
    train_majority,
    train_majority_per_seed,
)
from .models.pretrained import (
    PretrainedUnavailable,
    layer_inputs,
    load_pretrained,
    model_facts,
    per_head_keys,
    residual_stream,
)
from .ln_dynamics import (
    counterexample_wv,
    equilibria_2x2,
    ln_step,
    numerical_rank,
    rank_construction_wv,
    rank_k_equilibria,
    token_geometry,
)

from .recency import decoder_layer, gram_layer, recency_fraction, simulate_recency
from .synthesis import (
    SynthConfig,
    decoder_forward,
    default_variants,
    influence_profile,
    init_weights,
    measure_variant,
    synth_inputs,
    synthesis_experiment,
)
from .recency_theory import (
    corrected_h,
    layer2_contrast,
    layer2_scores,
    paper_h,
    residual_weight,
    theorem1_scores,
)

__all__ = [
    # LayerNorm geometry (chapter 1)
    *layernorm.__all__,
    # The Cesàro calculus (chapter 7)
    *cesaro.__all__,
    # Jacobians of real decoders (chapter 8)
    "ARCHITECTURES",
    "NoRotary",
    "build_decoder",
    "random_init_like",
    "keep_norm_dtype",
    "context_length",
    "random_embeddings",
    "draw_probes",
    "probe_norms",
    "exact_profile",
    "jacobian_blocks",
    "ProfileEstimate",
    "estimate_profile",
    "estimator_variance",
    "attention_score_std",
    "CesaroFit",
    "fit_cesaro",
    "normalised_positions_wasserstein",
    "profile_spearman",
    "ProfileSummary",
    "summarise_profile",
    "ends_over_middle",
    # Masks and rank collapse (chapter 4)
    "complete_mask",
    "causal_mask",
    "sliding_window_mask",
    "one_sided_window_mask",
    "make_mask",
    "check_mask",
    "mask_graph",
    "mu",
    "mu_over_depth",
    "fit_rate",
    # LayerNorm dynamics (chapter 5)
    "ln_step",
    "counterexample_wv",
    "equilibria_2x2",
    "rank_construction_wv",
    "rank_k_equilibria",
    "numerical_rank",
    "token_geometry",
    "any_unselectable",
    "classify_keys",
    "fraction_unselectable",
    "gaussian_key_sets",
    "multihead_example",
    "percent_unselectable",
    "selectability_grid",
    "unselectable_mask",
    "unselectable_mask_lp",
    "TinyDecoder",
    "TinyDecoderConfig",
    "layer_selectability",
    "train_tiny_decoder",
    # natural text and a pretrained decoder, offline
    "byte_batches",
    "describe_corpus",
    "load_corpus",
    "token_batches",
    "PretrainedUnavailable",
    "layer_inputs",
    "load_pretrained",
    "model_facts",
    "per_head_keys",
    "residual_stream",
    # the majority task (chapter 2)
    "NORM_VARIANTS",
    "MajorityRun",
    "angle_to_ones",
    "attention_norm",
    "effective_queries",
    "init_majority_params",
    "majority_data",
    "majority_forward",
    "majority_labels",
    "majority_counts",
    "majority_margin",
    "majority_forward_counts",
    "steps_to_reach",
    "train_majority",
    "train_majority_per_seed",
    # recency from LayerNorm (chapter 6)
    "decoder_layer",
    "gram_layer",
    "simulate_recency",
    "recency_fraction",
    "residual_weight",
    "theorem1_scores",
    "layer2_scores",
    "layer2_contrast",
    "paper_h",
    "corrected_h",
    # the switched-component decoder (chapter 9)
    "SynthConfig",
    "init_weights",
    "decoder_forward",
    "synth_inputs",
    "influence_profile",
    "measure_variant",
    "default_variants",
    "synthesis_experiment",
]
