r"""Input-output Jacobians of decoders (chapter 8): a subpackage.

The object is the influence profile of the last position of a decoder,
:math:`\rho(j) = \lVert \partial h^{(H)}_L / \partial h^{(0)}_j \rVert_F`,
``j = 1..L`` (``def-jac-profile``): measured on random-init and pretrained
decoders, derived for a decoder whose attention is the Cesàro matrix, and
followed through early training. One module per part (every public name
re-exported here, and flat from :mod:`attention_geometry`):

=====================  ==========================================================
module                 what
=====================  ==========================================================
:mod:`.decoders`       random-init decoders from ``transformers`` configurations,
                       and the surgery the chapter does on them (positions off,
                       value pathway only)
:mod:`.profiles`       :math:`\rho` exact, estimated with random probes, over many
                       sequences
:mod:`.theory`         :math:`\mathbb E\,\lVert J_j\rVert_F^2` derived for the value
                       pathway (``eq-jac-expected``)
:mod:`.stats`          a sample of profiles: averages, bands, fits, noise ceiling,
                       tests
:mod:`.training`       early training with the profile measured as it goes
=====================  ==========================================================

Shapes: ``n`` sequences, ``L`` positions, ``d`` width, ``k`` probes, ``H`` layers;
an input ``h0: (1, L, d)``.
"""

# Each module lists its public names once, in its own __all__; the package is their union, in this
# order. A module is imported when one of its names is first used (see _lazy.py): a chapter that
# uses one module of the package has not loaded the others, so editing them re-executes nothing.
from .._lazy import lazy_exports

MODULE_NAMES = ("decoders", "profiles", "theory", "stats", "training")
__all__, __getattr__, __dir__ = lazy_exports(__name__, MODULE_NAMES)
