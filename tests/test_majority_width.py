"""The width sweep of chapter 2: the value path's dimension under each norm (a theorem: at most
d - 1 under LayerNorm), the spectrum's summaries, the contrasts across widths, and the sweep's
checkpointed training (resumes to the same numbers)."""

import numpy as np
import pytest
import torch

from attention_geometry import majority as M
from attention_geometry.checkpoint import CheckpointStore

SMALL = M.MajoritySetup(n_classes=6, length=12, d=4, min_margin=2, n_sequences=300, batch=32, steps=6,
                        eval_every=3, checkpoint_every=3)


@pytest.mark.parametrize("d", [3, 5])
def test_layernorm_value_path_spans_d_minus_one(d):
    params = M.init_majority_params(8, d, [0, 1])
    counts = M.majority_dataset(0, M.MajoritySetup(n_classes=8, length=20, d=d, min_margin=2, n_sequences=400))[0]
    counts = torch.stack([counts, counts]).float()
    for norm, rank in (("layernorm", d - 1), ("rmsnorm", d), ("original_code", d)):
        with torch.no_grad():
            out, w = M.value_path_outputs(params, counts, norm)
        spectrum = M.value_spectrum(out.numpy(), w.numpy())
        assert (M.spectrum_rank(spectrum) == rank).all(), norm
        if norm == "layernorm":  # the null direction: the image of 1 under W_O W_V is never reached
            assert (spectrum[:, -1] < 1e-10 * spectrum[:, 0]).all()


def test_value_path_outputs_match_the_count_model():
    """value_path_outputs is the attention term of majority_forward_counts: removing it from h
    leaves the residual E_a + b_O (checked through the attention weights of the count model)."""
    params = M.init_majority_params(5, 4, [3])
    counts = torch.tensor([[[3.0, 0.0, 5.0, 1.0, 3.0]]])
    with torch.no_grad():
        out, w = M.value_path_outputs(params, counts, "rmsnorm")
        nx, s = M.attention_norm(params["E"], "rmsnorm"), M.majority_forward_counts(params, counts, "rmsnorm").scores
        att = torch.softmax(s, -1) * counts[0, 0]
        att = att / att.sum(-1, keepdim=True)  # (1, C, C): class a's attention on class b, in total
        v = nx @ params["W_V"][0].T @ params["W_O"][0].T  # (1, C, d)
        expected = (att @ v)[0, [0, 2, 3, 4]]  # the present classes, in order
    assert torch.allclose(out[0], expected, atol=1e-5)
    assert w[0].tolist() == [3.0, 5.0, 1.0, 3.0]


def test_participation_ratio_bounds_and_rank():
    spectrum = np.array([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0], [4.0, 1e-15, 0.0]])
    assert np.allclose(M.participation_ratio(spectrum), [3.0, 1.0, 1.0])
    assert M.spectrum_rank(spectrum).tolist() == [3, 1, 1]


def test_value_spectrum_is_the_weighted_covariance():
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(1, 50, 3)), rng.integers(1, 5, size=(1, 50)).astype(float)
    expected = np.linalg.eigvalsh(np.cov(x[0].T, aweights=w[0], bias=True))[::-1]
    assert np.allclose(M.value_spectrum(x, w)[0], expected)


def test_width_plan_contrasts_and_slopes():
    plan = M.width_plan([5, 3, 4])
    assert plan == {"layernorm": [3, 4, 5], "rmsnorm": [3, 4, 5]}  # no control at d = 2 (MIN_WIDTH)
    assert M.width_plan([6, 4]) == {"layernorm": [4, 6], "rmsnorm": [3, 4, 6]}
    with pytest.raises(ValueError):
        M.width_plan([2])
    ctrl = {d: np.array([d, d + 1.0]) for d in (2, 3, 4, 5)}
    ln = {d: ctrl[d] - 1 for d in (3, 4, 5)}  # LayerNorm at d does exactly as the control at d - 1
    c = M.width_contrasts(ln, ctrl)
    assert all(np.allclose(c["gap"][d], -1) for d in ln)
    assert all(np.allclose(c["shift"][d], -0.5) for d in ln)  # on the narrower control's side
    gaps = {d: np.array([np.log2(d) * 0.3, 1.0]) for d in (3, 4, 8)}
    assert np.allclose(M.gap_slopes(gaps), [0.3, 0.0])
    x = np.log2([3, 4, 8])
    y = np.array([0.1, -0.2, 0.5])
    assert np.isclose(M.gap_slopes({d: np.array([v]) for d, v in zip((3, 4, 8), y)})[0], np.polyfit(x, y, 1)[0])


def test_width_sweep_resumes_from_checkpoints(tmp_path):
    plan = M.width_plan([4])
    first = M.train_width_sweep(plan, [0, 1], SMALL, store=CheckpointStore(tmp_path))
    again = M.train_width_sweep(plan, [0, 1], SMALL, store=CheckpointStore(tmp_path))  # loads the finished state
    fresh = M.train_width_sweep(plan, [0, 1], SMALL)
    assert set(first) == {("layernorm", 4), ("rmsnorm", 3), ("rmsnorm", 4)}
    for key in first:
        assert first[key].setup.d == key[1]
        assert np.allclose(first[key].final["test_accuracy"], again[key].final["test_accuracy"])
        assert np.allclose(first[key].loss, fresh[key].loss, equal_nan=True)
        assert first[key].value_spectrum.shape == (2, key[1])


def test_width_summary_leaves_out_a_width_with_a_diverged_run():
    """A run whose final training loss is not finite (a diverged seed) leaves its width out of the
    pooled shift and gain, which stay finite, and the width is named; the finite widths are unchanged."""
    from dataclasses import replace

    from attention_geometry.book.chapters.uniform_attention import width_summary
    plan = M.width_plan([4, 5])
    runs = M.train_width_sweep(plan, [0, 1], SMALL)
    clean = width_summary(runs, plan)
    assert clean["loss"]["left_out"] == [] and np.isfinite(clean["loss"]["pooled_shift"]).all()
    loss = runs["rmsnorm", 5].loss.copy()
    loss[1, -1] = np.nan  # seed 1 of the control at d = 5 diverged
    broken = width_summary({**runs, ("rmsnorm", 5): replace(runs["rmsnorm", 5], loss=loss)}, plan)
    assert broken["loss"]["left_out"] == [5]
    assert np.isfinite(broken["loss"]["pooled_shift"]).all() and np.isfinite(broken["loss"]["pooled_gain"]).all()
    assert np.allclose(broken["loss"]["pooled_shift"], clean["loss"]["shift"][4])  # only d = 4 is left
    assert broken["acc"]["left_out"] == []  # the accuracy is finite: nothing left out there


def test_dimensions_lost_reads_one_dimension_none_and_half():
    """f = 1 when LayerNorm at d does as the control at d - 1, 0 when as the control at d, 1/2 at the
    midpoint, the same for a quantity where lower is better; the jackknife error is over seeds."""
    rng = np.random.default_rng(0)
    ctrl = {d: 1 - 0.5 ** d + rng.normal(0, 0.01, 10) for d in (3, 4, 5, 6)}
    assert M.dimensions_lost({d: ctrl[d - 1] for d in (4, 5, 6)}, ctrl).value == pytest.approx(1.0)
    assert M.dimensions_lost({d: ctrl[d] for d in (4, 5, 6)}, ctrl).value == pytest.approx(0.0)
    half = M.dimensions_lost({d: (ctrl[d] + ctrl[d - 1]) / 2 for d in (4, 5, 6)}, ctrl)
    assert half.value == pytest.approx(0.5) and half.n_draws == 10
    loss = {d: -np.log(v) for d, v in ctrl.items()}  # lower is better: the same reading
    assert M.dimensions_lost({d: loss[d - 1] for d in (4, 5, 6)}, loss).value == pytest.approx(1.0)
    noisy = M.dimensions_lost({d: ctrl[d - 1] + rng.normal(0, 0.02, 10) for d in (4, 5, 6)}, ctrl)
    lo, hi = noisy.interval()
    assert noisy.se > 0 and lo < noisy.value < hi
    with pytest.raises(ValueError):
        M.dimensions_lost({8: ctrl[6]}, ctrl)  # no width whose d - 1 the control has


def test_layernorm_at_width_two_is_a_step_with_zero_gradient_and_unbounded_rounding():
    """Why the width sweep starts at d = 3 (MIN_WIDTH): LayerNorm (epsilon 0) at d = 2 is the step
    sign(h_1 - h_2) (1, -1), whose exact Jacobian is zero; the computed one is rounding error divided
    by |h_1 - h_2| / 2, which grows as the two coordinates approach each other."""
    from attention_geometry.layernorm import normalise

    assert M.MIN_WIDTH == 3
    h = torch.tensor([[0.3, -1.2], [2.0, 5.0]], dtype=torch.float64)
    assert torch.allclose(normalise(h, "layernorm"), torch.sign(h[:, :1] - h[:, 1:]) * torch.tensor([1.0, -1.0],
                                                                                                    dtype=torch.float64))
    a = torch.randn(200, generator=torch.Generator().manual_seed(0), dtype=torch.float64)

    def largest_jacobian(x):  # the largest entry of the computed Jacobian over 200 pairs
        x = x.clone().requires_grad_(True)
        y = normalise(x, "layernorm")
        return max(float(torch.autograd.grad(y[:, k].sum(), x, retain_graph=True)[0].abs().max()) for k in range(2))
    sizes = []
    for gap in (1e-2, 1e-3, 1e-4):
        x = torch.stack([a + gap, a], 1)
        assert largest_jacobian(x) < 1e-9 / gap ** 2  # float64: zero up to rounding over the gap
        sizes.append(largest_jacobian(x.float()))
    assert sizes[0] < sizes[1] < sizes[2] and sizes[2] > 10  # float32 rounding over a shrinking gap


def test_width_dims_must_meet_the_control_one_dimension_narrower():
    from attention_geometry.book.chapters.uniform_attention import UniformAttentionParams

    assert UniformAttentionParams(width_dims=[3, 4]).width_dims == [3, 4]
    assert UniformAttentionParams(width_dims=[4, 6]).width_dims == [4, 6]  # the control is also trained at 3
    with pytest.raises(ValueError, match="no two consecutive widths"):
        UniformAttentionParams(width_dims=[3, 5])
