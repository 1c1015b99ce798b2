r"""The majority task and the one-layer transformer of Brody et al.'s code (chapter 2).

Everything here follows ``majority/majority_exp.py`` of the original
repository (tech-srl/layer_norm_expressivity_role), with the settings of its
``run_with_projection.bash`` / ``run_without_projection.bash`` as the defaults
of :class:`MajoritySetup`; where this module differs, the docstring says so.

**Task** (:func:`partition_majority_data`, the original's ``gen_X``). Integer
partitions of the length :math:`n` into at most :math:`C` parts are enumerated
depth first, each part at least as large as the one before it and the choices
at every level shuffled; a partition is kept when its last (largest) part leads
the one before it by at least ``min_margin``. Each kept partition gives
``per_partition`` sequences: a random permutation of the classes assigns class
:math:`\pi_j` to part :math:`j`. Enumeration stops as soon as the sequences
number more than ``n_sequences`` (100,010 for 100,000). The target at *every*
position is the majority class. The sequences are split 80 / 20 into training
and test sets, stratified by label (:func:`stratified_split`).

**Model** (:func:`majority_forward`; PyTorch's ``TransformerEncoderLayer`` with
``norm_first=True``, one head, ``dim_feedforward = d``, no dropout, epsilon 0,
no positional encoding, tied embeddings :math:`E \in \mathbb R^{C\times d}`):

.. math::

    x_i &= E_{t_i}, \qquad n_i = N(x_i), \\
    s_{ij} &= (W_Q n_i) \cdot (W_K n_j) / \sqrt{d}
          = (W_K^\top W_Q n_i) \cdot n_j / \sqrt d, \\
    h_i &= x_i + W_O \textstyle\sum_j \mathrm{softmax}_j(s_{ij})\, W_V n_j + b_O, \\
    g_i &= h_i + W_2\,\mathrm{ReLU}(W_1\,\mathrm{LN}_{\gamma,\beta}(h_i) + b_1) + b_2, \qquad
    \mathrm{logits}_i = E\, g_i .

The attention has no input bias (the original deletes ``in_proj_bias``); the
LayerNorm before the feed-forward layer keeps its gain :math:`\gamma` and bias
:math:`\beta`; there is no norm before the read-out. Only the norm :math:`N`
in front of attention changes, without parameters in every variant
(:data:`NORM_VARIANTS`, :func:`attention_norm`):

- ``"layernorm"``: :math:`N(x) = \sqrt d\, Px/\|Px\|`, projection and scaling
  (the original's ``WITH_PROJ``);
- ``"rmsnorm"``: :math:`N(x) = \sqrt d\, x/\|x\|`, the same scaling without the
  projection: the fair control (not in the original);
- ``"original_code"``: :math:`N(x) = x/(\sqrt d\, \|x\|)`, the original's
  ``WITHOUT_PROJ`` (``normalize(x) / dim**0.5``): it divides by :math:`\sqrt d`
  where ``"rmsnorm"`` multiplies, so its attention logits are :math:`d^2` and its
  values :math:`d` times smaller.

:math:`u_i = W_K^\top W_Q n_i` is the *effective query* (eq.
``eq-ua-effective-query`` of the book): the scores of position :math:`i` are
:math:`u_i \cdot n_j / \sqrt d`. After LayerNorm every :math:`n_j \perp
\mathbf 1`, so :math:`u_i \parallel \mathbf 1` attends uniformly.

**Counts instead of tokens.** Without positional encoding a sequence matters
only through its class counts, and all positions of one class compute the same
output; :func:`majority_forward_counts` evaluates the model on count vectors with
``C`` queries and keys instead of ``n`` (the same function; the tests check it
against the token-level :func:`majority_forward`).

**Training** (:func:`train_majority`): Adam, the learning rate decaying linearly
from ``lr`` to 0 over ``lr_decay_epochs`` epochs (the original's
``get_linear_schedule_with_warmup(opt, 0, ceil(n_train / batch) * 10000)``),
mini-batches of a fresh permutation of the training set every epoch (the last
one smaller), and a seed stops when its test accuracy reaches
``stop_at_accuracy`` (the original stops at 1.0). All seeds train at once on a
leading axis ``S`` (Adam is elementwise and the total loss is the sum of the
per-seed losses, so this is exactly ``S`` separate trainings).

Shapes: ``S`` seeds, ``N`` sequences, ``n`` positions, ``d`` width, ``C`` classes.

The package, one module per part (every public name re-exported here):
:mod:`.data` the task, :mod:`.model` the norms and the model, :mod:`.setup` the
set-up and its differences from the original's, :mod:`.training` the training
and its curves, :mod:`.analysis` the numbers the chapter compares. The words
and the verdict of chapter 2 live in :mod:`attention_geometry.words`
(``share_words``, ``differences_in_words``) and
:mod:`attention_geometry.verdicts` (``angle_verdict``).
"""

from .analysis import (MIN_WIDTH, confound_share, dimensions_lost, first_crossing, gap_slopes, initial_queries, participation_ratio,
                       query_components, random_angle_to_ones, run_summary, spectrum_rank, step_ratio,
                       uniform_query_check, width_contrasts, width_plan)
from .data import (counts_to_tokens, majority_counts, majority_labels, majority_margin, partition_majority_data,
                   possible_smallest_parts, stratified_split)
from .model import (NORM_VARIANTS, angle_to_ones, attention_norm, effective_queries, init_majority_params,
                    majority_forward, majority_forward_counts, majority_loss, value_path_outputs,
                    value_spectrum)
from .setup import (ORIGINAL_GEOMETRY, ORIGINAL_SEEDS, MajoritySetup, geometry_differences, majority_setup,
                    run_differences, setup_differences)
from .training import (MajorityRun, majority_dataset, majority_lr, steps_to_reach, train_majority,
                       train_majority_groups, train_majority_per_seed, train_width_sweep)

__all__ = [
    "NORM_VARIANTS",
    "MajoritySetup",
    "MajorityRun",
    "majority_labels",
    "majority_counts",
    "majority_margin",
    "partition_majority_data",
    "possible_smallest_parts",
    "counts_to_tokens",
    "stratified_split",
    "majority_dataset",
    "attention_norm",
    "init_majority_params",
    "majority_forward",
    "majority_forward_counts",
    "majority_loss",
    "effective_queries",
    "angle_to_ones",
    "majority_lr",
    "train_majority",
    "train_majority_per_seed",
    "train_majority_groups",
    "run_differences",
    "majority_setup",
    "ORIGINAL_SEEDS",
    "ORIGINAL_GEOMETRY",
    "geometry_differences",
    "steps_to_reach",
    "confound_share",
    "first_crossing",
    "step_ratio",
    "query_components",
    "initial_queries",
    "uniform_query_check",
    "setup_differences",
    "run_summary",
    "random_angle_to_ones",
    "value_path_outputs",
    "value_spectrum",
    "participation_ratio",
    "spectrum_rank",
    "MIN_WIDTH",
    "width_plan",
    "width_contrasts",
    "gap_slopes",
    "dimensions_lost",
    "train_width_sweep",
]
