"""Numbers the chapter compares: the share of the gap that the fair control closes
(with a bootstrap interval), the proposition on uniform attention in float64, per-seed
summaries of a run and the yardstick angle of a random direction."""

import math
from typing import Sequence

import numpy as np
import numpy.typing as npt
import torch

from .._checks import as_torch_generator, check_int
from .model import attention_norm
from .training import MajorityRun


def confound_share(with_ln: npt.ArrayLike, fair: npt.ArrayLike, original: npt.ArrayLike, rng: np.random.Generator | int,
                   n_boot: int = 4000, level: float = 0.95) -> tuple[float, float, float]:
    r"""The share of the gap between LayerNorm and the original code's variant that the
    fair control closes: :math:`(\bar f - \bar o) / (\bar \ell - \bar o)`, with a
    percentile bootstrap interval over seeds (the three arrays ``(S,)`` are
    paired by seed). Returns ``(share, low, high)``; NaN where the gap is 0.

    1 means the fair control does as well as LayerNorm (the whole gap is the
    confound of the original's smaller norm); 0 means it does no better than
    the original's variant (the whole gap is the projection).
    """
    arrays = np.stack([np.asarray(a, dtype=float) for a in (with_ln, fair, original)], axis=1)  # (S, 3)

    def share(rows):
        ln, f, o = rows.mean(0)
        return (f - o) / (ln - o) if ln != o else np.nan

    from ..stats import bootstrap_interval

    lo, hi = bootstrap_interval(share, arrays, n_boot=n_boot, level=level, rng=rng)
    return float(share(arrays)), lo, hi


def uniform_query_check(n_keys: int, d: int, cs: Sequence[float], generator: torch.Generator | int,
                        n_queries: int = 100) -> dict:
    """Proposition ``prop-ua-uniform`` in float64 on ``n_keys`` random inputs in ``d`` dimensions.

    Returns arrays over the multiples ``cs: (k,)``: ``spread_ln`` / ``spread_scaled``,
    the spread (max - min) of the scores that the query ``c 1`` gives keys after
    LayerNorm / after scaling alone (``"rmsnorm"``); ``shift``, the largest change
    of any score of ``n_queries`` random queries when ``c 1`` is added to them
    (LayerNorm keys); and ``att_dev``, the largest deviation of the attention of
    ``cs[-1] * 1`` on the LayerNorm keys from ``1 / n_keys``.
    """
    check_int("n_keys", n_keys, low=2)
    check_int("d", d, low=2)
    generator = as_torch_generator("generator", generator)
    x = torch.randn(n_keys, d, generator=generator, dtype=torch.float64)
    keys_ln, keys_sc = attention_norm(x, "layernorm"), attention_norm(x, "rmsnorm")
    ones = torch.ones(d, dtype=torch.float64)
    queries = torch.randn(n_queries, d, generator=generator, dtype=torch.float64)
    cs = [float(c) for c in cs]

    def spread(keys, q):
        s = keys @ q
        return (s.max() - s.min()).item()

    att = torch.softmax(keys_ln @ (cs[-1] * ones) / math.sqrt(d), dim=0)
    return {
        "spread_ln": np.array([spread(keys_ln, c * ones) for c in cs]),
        "spread_scaled": np.array([spread(keys_sc, c * ones) for c in cs]),
        "shift": np.array([(queries @ keys_ln.T - (queries + c * ones) @ keys_ln.T).abs().max().item() for c in cs]),
        "att_dev": float((att - 1 / n_keys).abs().max()),
    }


def run_summary(run: MajorityRun) -> dict[str, np.ndarray]:
    """Per-seed numbers of a run, each ``(S,)``: ``"mean training loss"`` (over the
    records after step 0: the area under the curve of Fig. 2a, small when the loss
    falls early), ``"final training loss"``, ``"final test accuracy"`` and
    ``"final angle"`` (degrees, whole test set)."""
    return {
        "mean training loss": np.nanmean(run.loss[:, 1:], axis=1) if run.loss.shape[1] > 1 else run.loss[:, 0],
        "final training loss": run.loss[:, -1].copy(),
        "final test accuracy": np.asarray(run.final["test_accuracy"], dtype=float),
        "final angle": np.asarray(run.final["angle"], dtype=float),
    }


def random_angle_to_ones(d: int) -> float:
    r"""The mean angle (degrees) between a uniformly random direction in :math:`\mathbb R^d`
    and the line through :math:`\mathbf 1`: :math:`\mathbb E\,\arccos\sqrt B` with
    :math:`B = z_1^2/\lVert z\rVert^2 \sim \mathrm{Beta}(1/2, (d-1)/2)`, by quadrature.
    The yardstick for the angles of :func:`angle_to_ones`."""
    from scipy import integrate, stats

    check_int("d", d, low=2)
    beta = stats.beta(0.5, (d - 1) / 2)
    value, _ = integrate.quad(lambda b: np.degrees(np.arccos(np.sqrt(b))) * beta.pdf(b), 0, 1, limit=200)
    return float(value)
