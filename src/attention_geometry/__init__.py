"""attention_geometry: the library behind the book *Attention Geometry*.

One module per mathematical object; every module's public names (its
``__all__``) are re-exported here, flat (``ag.layer_norm``, ``ag.last_row``).
This layer uses numpy, torch and scipy only (``transformers`` for the real
decoders in :mod:`.decoders`, :mod:`.jacobians` and :mod:`.models`). Figures live in
:mod:`attention_geometry.figures` and the book tooling in
:mod:`attention_geometry.book`; both are imported explicitly, and the
mathematics imports neither.

========================  =====================================================
module                    object
========================  =====================================================
:mod:`.layernorm`         LayerNorm as projection and scaling, its variants (ch. 1)
:mod:`.layernorm_checks`  PyTorch's LayerNorm measured against the geometry (ch. 1)
:mod:`.attention`         masks as graphs, their radius, the masked softmax (ch. 4)
:mod:`.majority`          the majority task and its one-layer model (ch. 2)
:mod:`.selectability`     unselectable keys: convex-hull test, heat maps (ch. 3)
:mod:`.collapse`          rank collapse over depth, the measure mu (ch. 4)
:mod:`.ln_dynamics`       LayerNorm dynamics on the sphere, equilibria (ch. 5)
:mod:`.recency`           the recency simulation, token and Gram space (ch. 6)
:mod:`.recency_theory`    its closed forms (ch. 6)
:mod:`.recency_extensions` real-layer additions, relativity, a NoPE decoder (ch. 6)
:mod:`.cesaro`            the Cesàro calculus of causal averaging (ch. 7)
:mod:`.decoders`          random-init decoders from configurations, their surgery (ch. 8)
:mod:`.jacobians`         Jacobian profiles: exact, estimated, over sequences (ch. 8)
:mod:`.jacobian_theory`   their derived expectation, the value pathway (ch. 8)
:mod:`.jacobian_stats`    profiles as samples: bands, fits, ceilings, tests (ch. 8)
:mod:`.jacobian_training` early training with the profile measured (ch. 8)
:mod:`.synthesis`         a decoder with every component switchable (ch. 9)
:mod:`.stats`             intervals, paired differences, control variates
:mod:`.verdicts`          the rules that turn a measurement into a verdict
:mod:`.checkpoint`        atomic checkpoints for long loops
:mod:`.models`            the tiny decoder, SmolLM2 (offline), the text corpus
========================  =====================================================
"""

from . import (
    attention,
    cesaro,
    checkpoint,
    collapse,
    decoders,
    jacobian_stats,
    jacobian_theory,
    jacobian_training,
    jacobians,
    layernorm,
    layernorm_checks,
    ln_dynamics,
    majority,
    recency,
    recency_extensions,
    recency_theory,
    selectability,
    stats,
    synthesis,
    verdicts,
)
from .models import corpus, pretrained, tiny_decoder
from .attention import *  # noqa: F401,F403
from .cesaro import *  # noqa: F401,F403
from .checkpoint import *  # noqa: F401,F403
from .collapse import *  # noqa: F401,F403
from .decoders import *  # noqa: F401,F403
from .jacobian_stats import *  # noqa: F401,F403
from .jacobian_theory import *  # noqa: F401,F403
from .jacobian_training import *  # noqa: F401,F403
from .jacobians import *  # noqa: F401,F403
from .layernorm import *  # noqa: F401,F403
from .layernorm_checks import *  # noqa: F401,F403
from .ln_dynamics import *  # noqa: F401,F403
from .majority import *  # noqa: F401,F403
from .models.corpus import *  # noqa: F401,F403
from .models.pretrained import *  # noqa: F401,F403
from .models.tiny_decoder import *  # noqa: F401,F403
from .recency import *  # noqa: F401,F403
from .recency_extensions import *  # noqa: F401,F403
from .recency_theory import *  # noqa: F401,F403
from .selectability import *  # noqa: F401,F403
from .stats import *  # noqa: F401,F403
from .synthesis import *  # noqa: F401,F403
from .verdicts import *  # noqa: F401,F403

#: The modules whose ``__all__`` make up the package's public names.
MODULES = (layernorm, layernorm_checks, attention, majority, selectability, collapse, ln_dynamics, recency,
           recency_theory, recency_extensions, cesaro, decoders, jacobians, jacobian_theory, jacobian_stats,
           jacobian_training, synthesis, stats, verdicts, checkpoint, corpus, pretrained,
           tiny_decoder)

__all__ = [name for module in MODULES for name in module.__all__]
