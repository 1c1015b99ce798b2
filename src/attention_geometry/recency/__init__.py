r"""Recency bias from LayerNorm (chapter 6, after Kim et al. 2025): a subpackage.

The object is the parameter-free causal decoder on anisotropic inputs,
:math:`x_i = \varepsilon_i + \sqrt{\alpha/(1-\alpha)}\,v`, one layer
:math:`f(X) = \mathrm{softmax}(\mathrm{causal}(YY^\top/\sqrt d))\,Y + \gamma X` with
:math:`Y = \mathrm{norm}(X)`, and the recency probability
:math:`\mathrm{RP} = P(S_{ik} > S_{ij} \mid i > k > j)` of its scores. One module
per view of it (every public name re-exported here, and flat from
:mod:`attention_geometry`):

=====================  ==========================================================
module                 what
=====================  ==========================================================
:mod:`.simulation`     the model (:class:`RecencyModel`), its layer in token and in
                       Gram space, the recency fraction, the Monte Carlo
                       (:func:`simulate_recency`)
:mod:`.theory`         the closed forms in the large-:math:`d` limit, the paper's
                       and the corrected ones
:mod:`.extensions`     what a real layer adds (random :math:`W_Q, W_K`, heads,
                       feed-forward, LN affine), relativity, a NoPE decoder
=====================  ==========================================================

Shapes: ``batch`` sequences, ``n`` tokens (query :math:`i`, keys :math:`j, k`),
``d`` features, ``layer`` layers.
"""

# Each module lists its public names once, in its own __all__; the package is their union, in this
# order. A module is imported when one of its names is first used (see _lazy.py): a chapter that
# uses one module of the package has not loaded the others, so editing them re-executes nothing.
from .._lazy import lazy_exports

MODULE_NAMES = ("simulation", "theory", "extensions")
__all__, __getattr__, __dir__ = lazy_exports(__name__, MODULE_NAMES)
