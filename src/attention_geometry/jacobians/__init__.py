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

# Each module lists its public names once, in its own __all__; the package is their union.
from . import decoders, profiles, stats, theory, training
from .decoders import *  # noqa: F403
from .profiles import *  # noqa: F403
from .stats import *  # noqa: F403
from .theory import *  # noqa: F403
from .training import *  # noqa: F403

__all__ = [*decoders.__all__, *profiles.__all__, *theory.__all__, *stats.__all__, *training.__all__]
