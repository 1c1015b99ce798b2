r"""Input-output Jacobians of decoders: the influence profile of the last position.

For a decoder with input embeddings :math:`h^{(0)} \in \mathbb R^{L\times d}`
(what ``transformers`` takes as ``inputs_embeds``) and last hidden state
:math:`h^{(H)}` (``last_hidden_state``, after the final norm), the blocks

.. math::  J_j = \partial h^{(H)}_L / \partial h^{(0)}_j \in \mathbb R^{d\times d}

(output dimension first) give the **influence profile**
:math:`\rho(j) = \lVert J_j\rVert_F`, ``j = 1..L`` (``def-jac-profile``).

* **Exact**: one vector-Jacobian product per output direction :math:`e_i` gives row
  ``i`` of every :math:`J_j` at once; ``d`` of them give
  :math:`\rho(j)^2 = \sum_i \lVert e_i^\top J_j\rVert^2`.
* **Random projections** (``thm-jac-estimator``): with :math:`B_j = J_j J_j^\top`
  and probes :math:`u` with :math:`\mathbb E[u u^\top] = I`,
  :math:`\mathbb E\,\lVert u^\top J_j\rVert^2 = \operatorname{tr} B_j = \rho(j)^2`.
  ``k`` probes, all positions at once per probe. One forward pass per sequence;
  the probes go back ``probe_batch`` at a time as batched cotangents
  (``is_grads_batched``). Gaussian probes:
  :math:`\operatorname{Var} = \tfrac2k\lVert B_j\rVert_F^2` (``eq-jac-var-gauss``);
  orthogonal probes (:math:`\sqrt d` times ``k`` columns of a Haar orthogonal matrix):
  :math:`\operatorname{Var} = \tfrac{2d(d-k)}{k(d-1)(d+2)}\bigl(\lVert B_j\rVert_F^2 - (\operatorname{tr}B_j)^2/d\bigr)`
  (``eq-jac-var-orth``), zero at ``k = d`` (:func:`estimator_variance`).
* **Many sequences**: :func:`sequence_profiles` estimates the profile of each of
  ``n`` sequences (``k`` probes each, sequences batched), checkpointing every
  batch through a :class:`~attention_geometry.checkpoint.CheckpointStore` so
  that a killed run resumes; :func:`paired_positional_profiles` does it with and
  without positions, with common inputs and probes (:func:`positional_pair`: the
  probe means); :func:`pathway_profiles` splits the Jacobian into its value and
  score pathways (``eq-jac-pathways``).

The models come from :mod:`attention_geometry.jacobians.decoders`; the statistics of a
sample of profiles are in :mod:`attention_geometry.jacobians.stats`, the
derived expectation in :mod:`attention_geometry.jacobians.theory`.

Shapes: ``L`` positions, ``d`` width, ``k`` probes; an input ``h0: (1, L, d)``.
"""

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from .._checks import check_choice, check_int, described, fail, shape_of
from ..checkpoint import CheckpointStore, code_digest, resumable_map
from .decoders import NoRotary, _check_h0, _check_inputs, _check_int, _generator, positions_off, value_only_attention

__all__ = [
    "draw_probes",
    "probe_norms",
    "exact_profile",
    "jacobian_blocks",
    "ProfileEstimate",
    "estimate_profile",
    "estimator_variance",
    "sequence_profiles",
    "positional_pair",
    "paired_positional_profiles",
    "profile_code_digest",
    "pathway_profiles",
]


# ---------------------------------------------------------------- probes


def draw_probes(d: int, k: int, kind: str, seed: int | torch.Generator) -> torch.Tensor:
    r"""``(k, d)`` probes with :math:`\mathbb E[u u^\top] = I` (float64, CPU).

    ``kind="gaussian"``: iid N(0, 1) entries. ``kind="orthogonal"``: the rows are
    :math:`\sqrt d` times ``k`` orthonormal vectors, the first ``k`` columns of a
    Haar orthogonal matrix (QR of a Gaussian matrix, signs fixed); needs ``k <= d``.
    ``kind="exact"``: :math:`\sqrt d\,e_1, \dots, \sqrt d\,e_d` (``k`` must be ``d``).
    """
    d = _check_int("d", d)
    k = _check_int("k", k)
    if kind == "exact":
        if k != d:
            raise fail("k", k, f"k = d = {d}", "is not allowed with kind = 'exact'")
        return math.sqrt(d) * torch.eye(d, dtype=torch.float64)
    g = _generator(seed)
    if kind == "gaussian":
        return torch.randn(k, d, generator=g, dtype=torch.float64)
    if kind == "orthogonal":
        if k > d:
            raise fail("k", k, f"1 <= k <= d = {d}", "is too many orthogonal probes")
        q, r = torch.linalg.qr(torch.randn(d, k, generator=g, dtype=torch.float64))
        q = q * torch.sign(torch.diagonal(r))  # Haar: fix the signs of the QR factor
        return math.sqrt(d) * q.T
    raise fail("kind", kind, "'gaussian', 'orthogonal' or 'exact'", "is not known")


def _last_state(model, h0):
    return model(inputs_embeds=h0, use_cache=False).last_hidden_state[:, -1, :]


#: Cotangents per batched backward pass (``probe_batch``): memory grows with it
#: (``probe_batch`` copies of the activations' gradients), speed saturates near it.
PROBE_BATCH = 16


def _vjp_norms(y: torch.Tensor, x: torch.Tensor, U: torch.Tensor, probe_batch: int) -> torch.Tensor:
    r"""``(b, k, L)``: :math:`\lVert u^\top \partial y_s/\partial x_{s,j}\rVert^2` for the
    cotangents ``U: (k, b, d)`` through one forward pass ``y = f(x)`` (``y: (b, d)``,
    ``x: (b, L, d)``), ``probe_batch`` cotangents per backward pass
    (``is_grads_batched``, a vmap over the backward); the graph is kept until the last."""
    k, b = U.shape[0], x.shape[0]
    out = torch.empty(b, k, x.shape[1], dtype=torch.float64)
    for start in range(0, k, probe_batch):
        g = _vjp_grads(y, x, U[start:start + probe_batch], start + probe_batch >= k)  # (c, b, L, d)
        out[:, start:start + len(g)] = g.double().pow(2).sum(-1).transpose(0, 1).cpu()
    return out


def _vjp_grads(y, x, u, last):
    """``(c, *x.shape)``: the vector-Jacobian products of the ``c`` cotangents ``u: (c, *y.shape)``
    in one backward pass; the graph is freed when ``last``."""
    if len(u) == 1:  # a single cotangent needs no vmap
        return torch.autograd.grad(y, x, grad_outputs=u[0], retain_graph=not last)[0][None]
    return torch.autograd.grad(y, x, grad_outputs=u, retain_graph=not last, is_grads_batched=True)[0]


def _check_probes(h0, probes):
    if not isinstance(probes, torch.Tensor) or probes.ndim != 2 or probes.shape[1] != h0.shape[2]:
        raise fail("probes", shape_of(probes, "a tensor") if isinstance(probes, torch.Tensor)
                   else described(f"a {type(probes).__name__}"), f"a tensor (k, {h0.shape[2]})", "has the wrong shape")


def probe_norms(model: torch.nn.Module, h0: torch.Tensor, probes: torch.Tensor,
                batch_size: int = PROBE_BATCH) -> torch.Tensor:
    r"""``(k, L)``: :math:`\lVert u_i^\top J_j\rVert^2` for each probe ``u_i`` (rows of
    ``probes: (k, d)``) and position ``j``; one vector-Jacobian product per probe.

    One forward pass, then ``ceil(k / batch_size)`` backward passes through it,
    each carrying ``batch_size`` probes at once (batched cotangents). Float64 out.
    """
    h0 = _check_h0(model, h0)
    _check_probes(h0, probes)
    batch_size = _check_int("batch_size", batch_size)
    U = probes.to(device=h0.device, dtype=h0.dtype)[:, None, :]  # (k, 1, d)
    x = h0.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        return _vjp_norms(_last_state(model, x), x, U, batch_size)[0]


def _probe_norms_per_batch(model: torch.nn.Module, h0: torch.Tensor, probes: torch.Tensor,
                           batch_size: int = 1) -> torch.Tensor:
    r"""Reference for :func:`probe_norms` (tests and ``benchmarks/bench_jacobians.py``):
    ``batch_size = 1``, one forward pass and one backward pass per probe;
    ``batch_size = b > 1``, the sequence repeated ``b`` times along the batch axis,
    one forward and one backward pass per ``b`` probes."""
    h0 = _check_h0(model, h0)
    _check_probes(h0, probes)
    batch_size = _check_int("batch_size", batch_size)
    k = probes.shape[0]
    U = probes.to(device=h0.device, dtype=h0.dtype)
    out = torch.empty(k, h0.shape[1], dtype=torch.float64)
    if batch_size == 1:
        x = h0.detach().clone().requires_grad_(True)
        with torch.enable_grad():
            y = _last_state(model, x)
            for i in range(k):
                (g,) = torch.autograd.grad(y, x, grad_outputs=U[i:i + 1], retain_graph=i < k - 1)
                out[i] = g[0].double().pow(2).sum(-1).cpu()
        return out
    for start in range(0, k, batch_size):
        u = U[start:start + batch_size]
        x = h0.detach().expand(len(u), -1, -1).clone().requires_grad_(True)
        with torch.enable_grad():
            (g,) = torch.autograd.grad(_last_state(model, x), x, grad_outputs=u)
        out[start:start + len(u)] = g.double().pow(2).sum(-1).cpu()
    return out


def exact_profile(model: torch.nn.Module, h0: torch.Tensor, batch_size: int = PROBE_BATCH) -> np.ndarray:
    r"""``(L,)``: :math:`\rho(j) = \lVert J_j\rVert_F` exactly, by ``d`` vector-Jacobian
    products through one forward pass, ``batch_size`` per backward pass."""
    d = h0.shape[-1]
    vals = probe_norms(model, h0, draw_probes(d, d, "exact", 0), batch_size)
    return np.sqrt(vals.mean(0).numpy())


def jacobian_blocks(model: torch.nn.Module, h0: torch.Tensor) -> torch.Tensor:
    r"""``(L, d, d)``: every block :math:`J_j` (output index first), by ``d`` backward
    passes; for small models (memory ``L d^2``)."""
    h0 = _check_h0(model, h0)
    L, d = h0.shape[1], h0.shape[2]
    x = h0.detach().clone().requires_grad_(True)
    J = torch.empty(L, d, d, dtype=h0.dtype)
    with torch.enable_grad():
        y = _last_state(model, x)
        for i in range(d):
            e = torch.zeros(1, d, dtype=h0.dtype, device=h0.device)
            e[0, i] = 1
            (g,) = torch.autograd.grad(y, x, grad_outputs=e, retain_graph=i < d - 1)
            J[:, i, :] = g[0].cpu()
    return J


@dataclass(frozen=True)
class ProfileEstimate:
    r"""A random-projection estimate: ``rho2: (L,)`` the unbiased estimate of
    :math:`\rho(j)^2`, ``per_probe: (k, L)`` its terms (their mean is ``rho2``),
    ``kind`` and ``k``. ``rho`` (``sqrt(rho2)``) is slightly biased low (Jensen)."""

    rho2: np.ndarray
    per_probe: np.ndarray
    kind: str
    k: int

    @property
    def rho(self) -> np.ndarray:
        return np.sqrt(self.rho2)

    def standard_error(self) -> np.ndarray:
        """``(L,)`` standard error of ``rho2`` from the spread of iid (Gaussian) probes."""
        if self.kind != "gaussian" or self.k < 2:
            raise fail("kind, k", described(f"{self.kind!r}, {self.k}"), "kind = 'gaussian' and k >= 2 (a standard "
                       "error needs the spread of iid probes)", "is not allowed")
        return self.per_probe.std(0, ddof=1) / math.sqrt(self.k)


def estimate_profile(model: torch.nn.Module, h0: torch.Tensor, k: int, kind: str = "gaussian",
                     seed: int | torch.Generator = 0, batch_size: int = PROBE_BATCH) -> ProfileEstimate:
    r"""Unbiased estimate of :math:`\rho(j)^2` for all ``j`` from ``k`` probes
    (``kind`` ``"gaussian"`` or ``"orthogonal"``; orthogonal with ``k = d`` is exact).
    ``seed``: int or ``torch.Generator`` for the probes; ``batch_size`` probes per
    backward pass (:func:`probe_norms`)."""
    check_int("k", k, low=1)  # the number of probes
    check_choice("kind", kind, ("gaussian", "orthogonal"))
    probes = draw_probes(h0.shape[-1], int(k), kind, seed)
    vals = probe_norms(model, h0, probes, batch_size).numpy()
    return ProfileEstimate(rho2=vals.mean(0), per_probe=vals, kind=kind, k=int(k))


def estimator_variance(J: torch.Tensor, k: int, kind: str) -> np.ndarray:
    r"""``(L,)``: the variance of the ``k``-probe estimate of :math:`\rho(j)^2` (``eq-jac-var-gauss``,
    ``eq-jac-var-orth``), from the
    blocks ``J: (L, d, d)``. With :math:`B = J_j J_j^\top`:
    Gaussian :math:`\tfrac2k\lVert B\rVert_F^2`; orthogonal
    :math:`\tfrac{2d(d-k)}{k(d-1)(d+2)}(\lVert B\rVert_F^2 - (\operatorname{tr}B)^2/d)`."""
    k = _check_int("k", k)
    J = J.double()
    B = J @ J.transpose(1, 2)
    fro2 = B.pow(2).sum((1, 2)).numpy()
    tr = torch.diagonal(B, dim1=1, dim2=2).sum(-1).numpy()
    d = J.shape[1]
    if kind == "gaussian":
        return 2.0 * fro2 / k
    if kind == "orthogonal":
        if k > d:
            raise fail("k", k, f"1 <= k <= d = {d}", "is too many orthogonal probes")
        return 2.0 * d * (d - k) / (k * (d - 1) * (d + 2)) * (fro2 - tr**2 / d)
    raise fail("kind", kind, "'gaussian' or 'orthogonal'", "is not known")


def profile_code_digest(model: torch.nn.Module) -> str:
    """A digest of the code that computes a profile of ``model`` (:func:`code_digest`): the
    functions of this module that :func:`sequence_profiles` runs, the positional surgery
    (:func:`positions_off`), and the source of the ``transformers`` module that defines the
    model's class (its attention, norms, MLP and rotary embedding). It goes into every
    checkpoint key of :func:`sequence_profiles`, so that a run resumed after any of them
    changed computes afresh instead of reusing the older code's profiles."""
    import sys

    return code_digest(sequence_profiles, _vjp_norms, _vjp_grads, _last_state, draw_probes, positions_off,
                       NoRotary, sys.modules[type(model).__module__])


def sequence_profiles(model: torch.nn.Module, inputs: torch.Tensor, k: int, *, seed: int, kind: str = "orthogonal",
                      batch_size: int = 1, store: CheckpointStore | None = None, name: str = "profiles",
                      key: dict | None = None, progress: Callable[[int, int], None] | None = None,
                      probe_batch: int = PROBE_BATCH) -> np.ndarray:
    r"""``(n, k, L)``: :math:`\lVert u_{s,i}^\top J^{(s)}_j\rVert^2` for each of the ``n``
    sequences ``inputs: (n, L, d)`` and ``k`` probes per sequence; their mean over
    the probes is an unbiased estimate of sequence ``s``'s :math:`\rho(j)^2`.

    Sequences go through the model ``batch_size`` at a time (one forward pass,
    then backward passes of ``probe_batch`` probes each; the sequences of a batch
    do not interact), each with
    its own probes (``kind`` ``"orthogonal"`` or ``"gaussian"``, from a generator
    seeded by ``seed`` and the batch's first index). Each batch's result is
    checkpointed in ``store`` under ``name`` and ``key`` (which must describe the
    model and the inputs; the sizes, ``k``, ``kind``, ``seed``, ``batch_size`` and
    the digest of the code (:func:`profile_code_digest`) are added here; not
    ``probe_batch``, which changes no number), so that a killed run resumes with
    the next batch, and a run resumed after the code changed starts afresh.
    ``progress(done, total)`` is called after each batch.
    """
    n, L, d = _check_inputs(model, inputs)
    k = _check_int("k", k)
    check_choice("kind", kind, ("gaussian", "orthogonal"))
    batch_size = _check_int("batch_size", batch_size)
    seed = _check_int("seed", seed, low=0)
    probe_batch = _check_int("probe_batch", probe_batch)
    starts = list(range(0, n, batch_size))

    def one_batch(start):
        x = inputs[start:start + batch_size].detach().clone().requires_grad_(True)
        b = x.shape[0]
        gen = torch.Generator().manual_seed(seed * 1_000_003 + start)
        U = torch.stack([draw_probes(d, k, kind, gen) for _ in range(b)], 1)  # (k, b, d)
        U = U.to(device=x.device, dtype=x.dtype)
        with torch.enable_grad():
            return _vjp_norms(_last_state(model, x), x, U, probe_batch).numpy()

    full_key = {**(key or {}), "n": n, "L": L, "d": d, "k": k, "kind": kind, "seed": seed,
                "batch_size": batch_size, "code": profile_code_digest(model)}
    parts = resumable_map(one_batch, starts, store=store, name=name, key=full_key, progress=progress,
                          size=lambda start: min(batch_size, n - start))  # the store counts sequences
    return np.concatenate(parts, axis=0)


def paired_positional_profiles(model: torch.nn.Module, inputs: torch.Tensor, k: int, *, seed: int,
                               batch_size: int = 1, store: CheckpointStore | None = None, key: dict | None = None,
                               progress: Callable[[int, int], None] | None = None,
                               probe_batch: int = PROBE_BATCH) -> tuple[np.ndarray, np.ndarray]:
    """``(with, without)``, ``(n, k, L)`` each: :func:`sequence_profiles` of ``model`` with
    its positional information and without it (:func:`positions_off`), per probe. Same
    weights, same inputs and the **same probes** (both drawn from ``seed``), so the
    difference between the two is paired per sequence, probe and position; each setting
    is checkpointed under its own name."""
    kw = dict(batch_size=batch_size, store=store, key=key, progress=progress, probe_batch=probe_batch)
    with_pos = sequence_profiles(model, inputs, k, seed=seed, name="profiles-positions", **kw)
    with positions_off(model):
        without = sequence_profiles(model, inputs, k, seed=seed, name="profiles-no-positions", **kw)
    return with_pos, without


def positional_pair(model: torch.nn.Module, inputs: torch.Tensor, k: int, *, seed: int, batch_size: int = 1,
                    store: CheckpointStore | None = None, key: dict | None = None,
                    progress: Callable[[int, int], None] | None = None,
                    probe_batch: int = PROBE_BATCH) -> tuple[np.ndarray, np.ndarray]:
    """``(with, without)``: :func:`paired_positional_profiles` averaged over the probes,
    ``(n, L)`` each (common inputs and probes)."""
    on, off = paired_positional_profiles(model, inputs, k, seed=seed, batch_size=batch_size, store=store, key=key,
                                         progress=progress, probe_batch=probe_batch)
    return on.mean(1), off.mean(1)


def pathway_profiles(model: torch.nn.Module, inputs: torch.Tensor, k: int, *, seed: int,
                     kind: str = "orthogonal", probe_batch: int = PROBE_BATCH) -> dict:
    r"""Per sequence and probe, the full Jacobian and its two pathways (``eq-jac-pathways``):
    ``{"full", "value", "score"}``, each ``(n, k, L)``, with
    :math:`\lVert u^\top J_j\rVert^2` for the full Jacobian, for the value pathway
    (:func:`value_only_attention`) and for their difference, the score pathway --
    the same probes for all three, so the difference is exact per probe. One
    sequence at a time (``inputs: (n, L, d)``), one forward pass per model and
    ``probe_batch`` probes per backward pass."""
    n, L, d = _check_inputs(model, inputs)
    k = _check_int("k", k)
    check_choice("kind", kind, ("gaussian", "orthogonal"))
    gen = torch.Generator().manual_seed(_check_int("seed", seed, low=0))
    probe_batch = _check_int("probe_batch", probe_batch)
    out = {name: np.empty((n, k, L)) for name in ("full", "value", "score")}
    for s in range(n):
        U = draw_probes(d, k, kind, gen).to(device=inputs.device, dtype=inputs.dtype)
        grads = {}
        for name, ctx in [("full", contextlib.nullcontext()), ("value", value_only_attention(model))]:
            x = inputs[s:s + 1].detach().clone().requires_grad_(True)
            with ctx, torch.enable_grad():
                y = _last_state(model, x)
                grads[name] = torch.cat([_vjp_grads(y, x, U[i:i + probe_batch, None], i + probe_batch >= k)[:, 0]
                                         for i in range(0, k, probe_batch)])
        grads["score"] = grads["full"] - grads["value"]
        for name, g in grads.items():
            out[name][s] = g.double().pow(2).sum(-1).cpu().numpy()
    return out
