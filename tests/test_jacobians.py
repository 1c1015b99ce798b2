"""The Jacobian profile of decoders: exact method, estimator, models, validation."""

import numpy as np
import pytest
import torch

import attention_geometry as ag
from attention_geometry import jacobians as jb

L, D = 6, 8


@pytest.fixture(scope="module")
def tiny():
    model = ag.build_decoder("qwen2", 2, D, 2, 1, context=16, seed=1)
    return model, ag.random_embeddings(model, L, 0)


@pytest.fixture(scope="module")
def tiny64():
    model = ag.build_decoder("qwen2", 2, D, 2, 1, context=16, seed=1, rope=False, dtype=torch.float64)
    ag.keep_norm_dtype(model)
    return model, ag.random_embeddings(model, L, 0)


def test_exact_profile_equals_brute_force_jacobian(tiny64):
    model, h0 = tiny64
    full = torch.autograd.functional.jacobian(lambda x: jb._last_state(model, x)[0], h0)  # (d, 1, L, d)
    brute = full[:, 0].pow(2).sum((0, 2)).sqrt().numpy()
    np.testing.assert_allclose(ag.exact_profile(model, h0), brute, rtol=1e-10)
    blocks = ag.jacobian_blocks(model, h0)
    np.testing.assert_allclose(blocks.numpy(), full[:, 0].permute(1, 0, 2).numpy(), rtol=1e-10, atol=1e-14)


def test_gpt2_exact_profile_equals_brute_force():
    model = ag.build_decoder("gpt2", 2, D, 2, context=16, seed=3, dtype=torch.float64)
    h0 = ag.random_embeddings(model, L, 0)
    full = torch.autograd.functional.jacobian(lambda x: jb._last_state(model, x)[0], h0)
    np.testing.assert_allclose(ag.exact_profile(model, h0), full[:, 0].pow(2).sum((0, 2)).sqrt().numpy(),
                               rtol=1e-10)


def test_batched_probes_equal_looped(tiny64):
    model, h0 = tiny64
    probes = ag.draw_probes(D, 5, "gaussian", 0)
    np.testing.assert_allclose(ag.probe_norms(model, h0, probes, batch_size=2).numpy(),
                               ag.probe_norms(model, h0, probes).numpy(), rtol=1e-10)


def test_orthogonal_probes_with_k_equal_d_are_exact(tiny64):
    model, h0 = tiny64
    est = ag.estimate_profile(model, h0, D, "orthogonal", 7)
    np.testing.assert_allclose(est.rho, ag.exact_profile(model, h0), rtol=1e-10)
    q = ag.draw_probes(D, D, "orthogonal", 7) / np.sqrt(D)
    np.testing.assert_allclose((q @ q.T).numpy(), np.eye(D), atol=1e-12)


def test_gaussian_estimator_is_unbiased_and_variance_matches(tiny64):
    model, h0 = tiny64
    exact2 = ag.exact_profile(model, h0) ** 2
    est = ag.estimate_profile(model, h0, 2000, "gaussian", 11)
    z = (est.rho2 - exact2) / est.standard_error()
    assert np.all(np.abs(z) < 4.5), z
    J = ag.jacobian_blocks(model, h0)
    derived = ag.estimator_variance(J, 1, "gaussian")
    measured = est.per_probe.var(0, ddof=1)
    # the sample variance of 2000 chi^2-type draws is within ~20 % of the truth
    np.testing.assert_allclose(measured / derived, 1.0, atol=0.25)


def test_orthogonal_variance_formula(tiny64):
    model, h0 = tiny64
    J = ag.jacobian_blocks(model, h0)
    k = 3
    draws = np.stack([ag.estimate_profile(model, h0, k, "orthogonal", s).rho2 for s in range(400)])
    derived = ag.estimator_variance(J, k, "orthogonal")
    np.testing.assert_allclose(draws.mean(0), (J.pow(2).sum((1, 2))).numpy(), rtol=0.1)
    np.testing.assert_allclose(draws.var(0, ddof=1) / derived, 1.0, atol=0.3)
    assert np.all(ag.estimator_variance(J, D, "orthogonal") == 0)


def test_no_rotary_is_identity_on_q_and_k():
    from transformers.models.qwen2.modeling_qwen2 import apply_rotary_pos_emb
    q, k = torch.randn(1, 2, 5, 4), torch.randn(1, 1, 5, 4)
    cos, sin = ag.NoRotary(4)(q, torch.arange(5)[None])
    q2, k2 = apply_rotary_pos_emb(q, k, cos, sin)
    assert torch.equal(q2, q) and torch.equal(k2, k)
    model = ag.build_decoder("qwen2", 1, D, 2, 1, context=16, rope=False)
    assert isinstance(model.rotary_emb, ag.NoRotary)


def test_rope_off_and_on_share_weights_and_differ_only_by_rotation():
    on = ag.build_decoder("qwen2", 1, D, 2, 1, context=16, seed=4)
    off = ag.build_decoder("qwen2", 1, D, 2, 1, context=16, seed=4, rope=False)
    for (n1, p1), (n2, p2) in zip(on.named_parameters(), off.named_parameters()):
        assert n1 == n2 and torch.equal(p1, p2)


def test_gpt2_position_embeddings_zero_when_asked():
    off = ag.build_decoder("gpt2", 1, D, 2, context=16, rope=False)
    on = ag.build_decoder("gpt2", 1, D, 2, context=16, rope=True)
    assert torch.count_nonzero(off.wpe.weight) == 0
    assert torch.count_nonzero(on.wpe.weight) > 0


def test_build_is_seeded_and_leaves_global_rng_alone():
    state = torch.random.get_rng_state()
    a = ag.build_decoder("qwen2", 1, D, 2, 1, context=16, seed=5)
    assert torch.equal(torch.random.get_rng_state(), state)
    b = ag.build_decoder("qwen2", 1, D, 2, 1, context=16, seed=5)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_fit_recovers_a_cesaro_profile():
    p = 3.0 * ag.last_row(64, 6, 0.3)
    fit = ag.fit_cesaro(p, 6)
    assert abs(fit.alpha - 0.3) < 1e-4 and abs(fit.gain - 3.0) < 1e-3
    s = ag.summarise_profile(p, 6)
    assert s.spearman > 0.999 and s.wasserstein < 1e-6


def test_wasserstein_of_shifted_point_masses():
    a = np.full(10, 1e-12)
    b = a.copy()
    a[0], b[4] = 1.0, 1.0
    assert abs(ag.normalised_positions_wasserstein(a, b) - 0.4) < 1e-9


@pytest.mark.parametrize("call, fragment", [
    (lambda m, h: ag.estimate_profile(m, h, 0), "k = 0"),
    (lambda m, h: ag.estimate_profile(m, h, 2, "bernoulli"), "kind"),
    (lambda m, h: ag.estimate_profile(m, h, D + 1, "orthogonal"), "orthogonal probes"),
    (lambda m, h: ag.exact_profile(m, torch.zeros(1, 17, D)), "configured context"),
    (lambda m, h: ag.exact_profile(m, torch.zeros(1, 4, D + 1)), "width"),
    (lambda m, h: ag.random_embeddings(m, 17, 0), "configured context"),
])
def test_bad_inputs_raise(tiny, call, fragment):
    model, h0 = tiny
    with pytest.raises(ValueError, match=fragment):
        call(model, h0)


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(arch="llama"), "arch"),
    (dict(width=9), "multiple of n_heads"),
    (dict(width=10), "odd"),
    (dict(n_kv_heads=3), "n_kv_heads"),
    (dict(arch="gpt2", n_kv_heads=1), "gpt2"),
    (dict(init_std=0.0), "init_std"),
    (dict(n_layers=0), "n_layers"),
    (dict(device="tpu"), "device"),
])
def test_bad_decoder_configurations_raise(kwargs, fragment):
    args = dict(arch="qwen2", n_layers=1, width=D, n_heads=2, n_kv_heads=1, context=16)
    with pytest.raises(ValueError, match=fragment):
        ag.build_decoder(**{**args, **kwargs})


def test_bad_profiles_raise():
    with pytest.raises(ValueError, match="positive"):
        ag.fit_cesaro(np.array([1.0, 0.0, 2.0]), 3)
    with pytest.raises(ValueError, match="H"):
        ag.fit_cesaro(np.ones(5), 0)
