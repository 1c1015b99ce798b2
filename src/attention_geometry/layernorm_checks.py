r"""Chapter 1's measurements: PyTorch's LayerNorm against the exact geometry.

The identities of :mod:`attention_geometry.layernorm` are exact; what can be
measured is how close an implementation (``torch.nn.functional.layer_norm`` and
``rms_norm``) comes to them in floating point, and what the parts the
geometric statement leaves out (:math:`\varepsilon`, :math:`\gamma, \beta`)
change. Each function here is one such measurement; it returns plain NumPy
arrays or numbers for the chapter to glue, and the tests check each on inputs
where the answer is known.

* :func:`decomposition_errors` -- eq. ``eq-ln-decomposition`` against PyTorch,
  per input, with the condition number :math:`\kappa = |\mu|/\sigma` of the centring;
* :func:`eps_deficit_points`, :func:`eps_deficit_by_dim` -- the norm deficit of
  eq. ``eq-d-mideficit`` measured and in closed form;
* :func:`affine_checks` -- what the affine map keeps (``prop-ln-affine``);
* :func:`rms_checks` -- RMSNorm is the scaling alone, and eq. ``eq-ln-rms``;
* :func:`low_variance_key` -- a key with :math:`\sigma^2 \ll \varepsilon` falls
  inside the hull of the others;
* :func:`extreme_rows` -- PyTorch on rows of extreme size.

The claims these measurements test (``layernorm_claims``) are built in
:mod:`attention_geometry.verdicts`.
"""

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from ._checks import as_generator, check_float, check_int, fail
from .layernorm import (
    coordinate_std,
    eps_norm_deficit,
    hyperplane_basis,
    layer_norm,
    project_to_hyperplane,
    scale_to_sphere,
    selection_margin,
    uniform_query,
)

__all__ = [
    "decomposition_errors",
    "eps_deficit_points",
    "eps_deficit_by_dim",
    "affine_checks",
    "rms_checks",
    "low_variance_key",
    "extreme_rows",
    "random_affine",
]


def _torch_ln(x: np.ndarray, eps: float = 0.0, gamma=None, beta=None) -> np.ndarray:
    t = torch.from_numpy
    return F.layer_norm(t(x), (x.shape[-1],), None if gamma is None else t(gamma),
                        None if beta is None else t(beta), eps=eps).numpy()


def decomposition_errors(x: np.ndarray) -> dict[str, np.ndarray]:
    r"""PyTorch's ``layer_norm`` (:math:`\varepsilon = 0`) against :math:`\sqrt d\,Px/\lVert Px\rVert`.

    ``x: (n, d)`` float64. Per input (each ``(n,)``): ``kappa`` :math:`= |\mu(x)|/\sigma(x)`;
    the largest entrywise error of PyTorch in float64 (``torch64``) and float32
    (``torch32``), and of the library's float32 :func:`layer_norm`
    (``library32``), each against the exact map of the same (rounded) input;
    the output's ``mean`` :math:`|\mu(y)|` and relative norm deviation ``norm``
    :math:`|\lVert y\rVert/\sqrt d - 1|` (float64).
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 2:
        raise fail("x", f"an array of shape {x.shape}", "shape (n, d) with d >= 2")
    d = x.shape[1]
    x32 = x.astype(np.float32)
    exact = scale_to_sphere(project_to_hyperplane(x))
    exact32 = layer_norm(x32.astype(np.float64))
    y, y32 = _torch_ln(x), _torch_ln(x32)
    return {
        "d": np.full(len(x), d),
        "kappa": np.abs(x.mean(axis=-1)) / coordinate_std(x),
        "torch64": np.abs(y - exact).max(axis=-1),
        "torch32": np.abs(y32 - exact32).max(axis=-1),
        "library32": np.abs(layer_norm(x32) - exact32).max(axis=-1),
        "mean": np.abs(y.mean(axis=-1)),
        "norm": np.abs(np.linalg.norm(y, axis=-1) / np.sqrt(d) - 1),
    }


def eps_deficit_points(z: np.ndarray, eps_values: Sequence[float], t_values: Sequence[float]) -> dict[str, np.ndarray]:
    r"""The norm deficit of PyTorch's ``layer_norm`` against eq. ``eq-d-mideficit``.

    For every :math:`\varepsilon` and target :math:`t`, the inputs are
    :math:`\sqrt{\varepsilon/t}\,z` (``z: (n, d)``). Returns, concatenated over
    the grid: the actual ``t`` :math:`= \varepsilon/\sigma^2` per input, the
    ``measured`` deficit :math:`1 - \lVert y\rVert/\sqrt d`, the ``closed`` form
    (:func:`~attention_geometry.layernorm.eps_norm_deficit`), ``eps``, and the
    output's ``mean`` :math:`|\mu(y)|`.
    """
    z = np.asarray(z, dtype=np.float64)
    d = z.shape[-1]
    out = {"t": [], "measured": [], "closed": [], "eps": [], "mean": []}
    for eps in eps_values:
        eps = check_float("eps", eps, low=0.0, low_open=True)
        for t in t_values:
            x = np.sqrt(eps / check_float("t", t, low=0.0, low_open=True)) * z
            y = _torch_ln(x, eps)
            out["t"].append(eps / coordinate_std(x) ** 2)
            out["measured"].append(1 - np.linalg.norm(y, axis=-1) / np.sqrt(d))
            out["closed"].append(eps_norm_deficit(x, eps))
            out["eps"].append(np.full(len(x), eps))
            out["mean"].append(np.abs(y.mean(axis=-1)))
    return {k: np.concatenate(v) for k, v in out.items()}


def eps_deficit_by_dim(rng: np.random.Generator | int, dims: Sequence[int], n: int,
                       eps_values: Sequence[float]) -> dict:
    r"""Median deficit against :math:`d`, for unit-variance rows :math:`z` and unit-norm rows.

    Returns ``{(eps, kind): (measured (len(dims),), closed (len(dims),))}`` with
    ``kind`` in ``("unit variance", "unit norm")``; inputs drawn from ``rng``.
    """
    n = check_int("n", n, low=1)
    rng = as_generator("rng", rng)
    out = {(eps, kind): ([], []) for eps in eps_values for kind in ("unit variance", "unit norm")}
    for d in dims:
        z = rng.standard_normal((n, int(d)))
        for kind, x in [("unit variance", z), ("unit norm", z / np.linalg.norm(z, axis=-1, keepdims=True))]:
            for eps in eps_values:
                y = _torch_ln(x, eps)
                out[(eps, kind)][0].append(np.median(1 - np.linalg.norm(y, axis=-1) / np.sqrt(d)))
                out[(eps, kind)][1].append(np.median(eps_norm_deficit(x, eps)))
    return {key: (np.array(m), np.array(c)) for key, (m, c) in out.items()}


def affine_checks(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> dict[str, float]:
    r"""What survives the affine map :math:`\gamma\odot\mathrm{LN}(x) + \beta` (``prop-ln-affine``).

    ``x: (n, d)``; PyTorch's ``layer_norm`` with ``gamma, beta: (d,)``.
    ``mean_median``: median :math:`|\mu(y)|`; ``norm_ratio``: longest over shortest
    :math:`\lVert y - \beta\rVert`; ``plane_residual``: largest relative distance of an
    output from the hyperplane eq. ``eq-affine-plane``; ``uniform_spread``: relative
    spread of the scores of the query :math:`\mathbf 1/\gamma`; ``selected``: fraction of
    outputs that are the unique maximiser of their own query :math:`v_k/\gamma`, and
    ``min_margin`` the smallest winning margin in units of :math:`d`;
    ``self_selected``: the same with the output itself as the query.
    """
    y = _torch_ln(np.asarray(x, dtype=np.float64), 0.0, gamma, beta)
    d = y.shape[-1]
    v = (y - beta) / gamma  # the point of S_H behind each output
    q = uniform_query(gamma)
    norms, scores = np.linalg.norm(y - beta, axis=-1), y @ q
    margin = selection_margin(v / gamma, y)
    return {
        "mean_median": float(np.median(np.abs(y.mean(axis=-1)))),
        "norm_ratio": float(norms.max() / norms.min()),
        "plane_residual": float(np.max(np.abs(scores - q @ beta) / (np.linalg.norm(q) * norms))),
        "uniform_spread": float(np.ptp(scores) / (np.linalg.norm(q) * np.linalg.norm(y, axis=-1).max())),
        "selected": float(np.mean(margin > 0)),
        "min_margin": float(margin.min() / d),
        "self_selected": float(np.mean(selection_margin(y, y) > 0)),
    }


def rms_checks(x: np.ndarray) -> dict[str, float]:
    r"""RMSNorm is the scaling alone (eq. ``eq-rmsnorm``) and LN = RMSNorm after P (eq. ``eq-ln-rms``).

    ``x: (n, d)``. ``norm_dev``: largest relative deviation of
    :math:`\lVert\mathrm{RMSNorm}(x)\rVert` from :math:`\sqrt d`; ``mean_err``: largest
    error of :math:`\mu(\mathrm{RMSNorm}(x)) = \mu(x)/\mathrm{rms}(x)`; ``mean_median``:
    median :math:`|\mu(\mathrm{RMSNorm}(x))|` (not zero: no projection); ``ln_err``:
    largest entrywise error of PyTorch's LayerNorm against RMSNorm of :math:`Px`.
    """
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    r = F.rms_norm(torch.from_numpy(x), (d,), eps=0.0).numpy()
    rms = np.linalg.norm(x, axis=-1) / np.sqrt(d)
    ln_via_rms = F.rms_norm(torch.from_numpy(project_to_hyperplane(x)), (d,), eps=0.0).numpy()
    return {
        "norm_dev": float(np.max(np.abs(np.linalg.norm(r, axis=-1) / np.sqrt(d) - 1))),
        "mean_err": float(np.max(np.abs(r.mean(axis=-1) - x.mean(axis=-1) / rms))),
        "mean_median": float(np.median(np.abs(r.mean(axis=-1)))),
        "ln_err": float(np.max(np.abs(_torch_ln(x) - ln_via_rms))),
    }


def low_variance_key(eps: float, ratio: float, queries: np.ndarray) -> dict[str, float]:
    r"""Five unit-variance keys at a regular pentagon in :math:`H` (:math:`d = 3`) and a sixth,
    of variance :math:`\varepsilon/\text{ratio}`, halfway between two of them.

    For LayerNorm without and with ``eps``: the fraction of ``queries: (m, 3)``
    whose highest-scoring key is the sixth (``wins_exact``, ``wins_eps``), and
    its output norm (``norm_exact``, ``norm_eps``).
    """
    eps = check_float("eps", eps, low=0.0, low_open=True)
    theta = np.append(2 * np.pi * np.arange(5) / 5, np.pi / 5)
    u = np.column_stack([np.cos(theta), np.sin(theta)]) @ hyperplane_basis(3).T  # unit, in H
    x_keys = np.sqrt(3 * np.array([1, 1, 1, 1, 1, eps / ratio]))[:, None] * u
    out = {}
    for name, e in [("exact", 0.0), ("eps", eps)]:
        keys = _torch_ln(x_keys, e)
        out[f"wins_{name}"] = float(np.mean((queries @ keys.T).argmax(axis=1) == 5))
        out[f"norm_{name}"] = float(np.linalg.norm(keys[5]))
    return out


def extreme_rows(huge: float = 1e200, tiny: float = 1e-170) -> dict[str, float]:
    r"""PyTorch's ``layer_norm`` on the row :math:`s\,(1, -1, 0)` for a huge and a tiny :math:`s` (float64).

    ``torch_huge_norm``: the norm of PyTorch's output for ``huge`` (exact:
    :math:`\sqrt 3`); ``library_huge_norm``: the library's; ``torch_tiny_nonfinite``:
    how many of PyTorch's outputs for ``tiny`` are not finite.
    """
    row = np.array([[1.0, -1.0, 0.0]])
    return {
        "torch_huge_norm": float(np.linalg.norm(_torch_ln(huge * row))),
        "library_huge_norm": float(np.linalg.norm(layer_norm(huge * row))),
        "torch_tiny_nonfinite": int(np.sum(~np.isfinite(_torch_ln(tiny * row)))),
    }


def random_affine(rng: np.random.Generator | int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Random ``gamma`` (random signs, log-normal sizes) and ``beta`` (normal, sd 0.5), each ``(d,)``."""
    rng = as_generator("rng", rng)
    gamma = rng.choice([-1.0, 1.0], d) * rng.lognormal(0.0, 0.5, d)
    return gamma, rng.normal(0.0, 0.5, d)
