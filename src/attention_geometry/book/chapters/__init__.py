"""Each chapter's parameter model: one module per chapter, named as the chapter.

To add or change a chapter's parameter, edit its model here and the chapter's
``parameters`` cell (``book/*.md``) together; a test checks that the two name
the same parameters with the same defaults.
"""

from .cesaro import CesaroParams
from .jacobians import JacobiansParams
from .layernorm import LayerNormParams
from .layernorm_equilibria import LayerNormEquilibriaParams
from .rank_collapse import RankCollapseParams
from .recency import RecencyParams
from .selectability import SelectabilityParams
from .synthesis import SynthesisParams
from .uniform_attention import UniformAttentionParams

__all__ = ["LayerNormParams", "UniformAttentionParams", "SelectabilityParams", "RankCollapseParams",
           "LayerNormEquilibriaParams", "RecencyParams", "CesaroParams", "JacobiansParams", "SynthesisParams"]
