"""The Jacobian profile of decoders: exact method, estimator, models, validation."""

import numpy as np
import pytest
import torch

import attention_geometry as ag
from attention_geometry.jacobians import profiles as jb

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


def _estimate_from_blocks(J, probes):
    """The k-probe estimate of rho(j)^2 by linear algebra on the blocks: mean_i |u_i^T J_j|^2."""
    return torch.einsum("ka,lab->klb", probes, J).pow(2).sum(-1).mean(0).numpy()


def test_orthogonal_variance_formula(tiny64):
    """Monte Carlo over 4,000 probe draws, through the blocks (one draw through the
    model checks that the model's backward passes give the same estimate)."""
    model, h0 = tiny64
    J = ag.jacobian_blocks(model, h0)
    k = 3
    np.testing.assert_allclose(ag.estimate_profile(model, h0, k, "orthogonal", 7).rho2,
                               _estimate_from_blocks(J, ag.draw_probes(D, k, "orthogonal", 7)), rtol=1e-10)
    draws = np.stack([_estimate_from_blocks(J, ag.draw_probes(D, k, "orthogonal", s)) for s in range(4000)])
    derived = ag.estimator_variance(J, k, "orthogonal")
    exact = J.pow(2).sum((1, 2)).numpy()
    z = (draws.mean(0) - exact) / np.sqrt(derived / len(draws))
    assert np.all(np.abs(z) < 4.5)  # unbiased
    np.testing.assert_allclose(draws.var(0, ddof=1) / derived, 1.0, atol=0.12)
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


def test_sequence_profiles_are_unbiased_per_sequence(tiny64):
    model, _ = tiny64
    X = ag.random_embeddings(model, L, 5, n=3)
    exact = np.stack([ag.exact_profile(model, X[i:i + 1]) ** 2 for i in range(3)])
    full = ag.sequence_profiles(model, X, D, seed=0, kind="orthogonal", batch_size=2)  # k = d: exact
    np.testing.assert_allclose(full.mean(1), exact, rtol=1e-10)
    many = ag.sequence_profiles(model, X, 400, seed=1, kind="gaussian", batch_size=64)  # 7 batches, the last short
    z = (many.mean(1) - exact) / (many.std(1, ddof=1) / np.sqrt(400))
    assert np.all(np.abs(z) < 4.5)


def test_sequence_profiles_resume_from_checkpoints(tiny64, tmp_path):
    """A run killed after its first batch resumes with the second and gives the same
    numbers; the store counts the sequences computed and reused (the last batch is short)."""
    from attention_geometry.checkpoint import CheckpointStore

    model, _ = tiny64
    X = ag.random_embeddings(model, L, 6, n=5)
    calls = []

    class Killed(Exception):
        pass

    def stop_after_one(done, total):
        calls.append(done)
        if done == 1:
            raise Killed

    store = CheckpointStore(tmp_path)
    kw = dict(seed=3, batch_size=2, store=store, key={"model": "tiny64"})
    with pytest.raises(Killed):
        ag.sequence_profiles(model, X, 2, progress=stop_after_one, **kw)
    assert store.computed_items == 2
    mark = store.mark()
    resumed = ag.sequence_profiles(model, X, 2, progress=lambda d, t: calls.append(d), **kw)
    assert calls == [1, 1, 2, 3]  # the first batch was loaded, not recomputed
    assert store.since(mark)[0] == 3 and store.since(mark)[1] > 0  # 3 of 5 computed: the first 2 were reused
    np.testing.assert_array_equal(resumed, ag.sequence_profiles(model, X, 2, seed=3, batch_size=2))


def test_a_checkpoint_made_by_other_code_is_not_reused(tiny64, tmp_path, monkeypatch):
    """The code digest is in the checkpoint key: with the same settings, a run whose profile
    code differs (another digest) computes afresh instead of loading the older code's results,
    and the digest changes when the source of one of the profile's functions changes."""
    from attention_geometry.checkpoint import CheckpointStore, code_digest
    from attention_geometry.jacobians import profiles

    model, _ = tiny64
    X = ag.random_embeddings(model, L, 6, n=2)
    store = CheckpointStore(tmp_path)
    kw = dict(seed=3, batch_size=2, store=store, key={"model": "tiny64"})
    first = ag.sequence_profiles(model, X, 2, **kw)
    assert store.computed_items == 2 and len(list(tmp_path.glob("*.pt"))) == 1
    ag.sequence_profiles(model, X, 2, **kw)
    assert store.computed_items == 2  # same code: reused
    monkeypatch.setattr(profiles, "profile_code_digest", lambda m: "0123456789abcdef")
    again = ag.sequence_profiles(model, X, 2, **kw)
    assert store.computed_items == 4 and len(list(tmp_path.glob("*.pt"))) == 2  # other code: computed afresh
    np.testing.assert_array_equal(again, first)

    def f(x):
        return x + 1

    def g(x):
        return x + 2

    assert code_digest(f) != code_digest(g) and code_digest(f) == code_digest(f)
    assert code_digest(f, g) != code_digest(g, f) and len(code_digest(len)) == 16  # a builtin: by name


def test_the_positional_pair_shares_its_inputs_and_probes():
    """Common inputs and probes: on a GPT-2-shaped model whose position table is already
    zero, turning positions off changes nothing, so the two settings agree per sequence,
    probe and position exactly (independent probes would not)."""
    gpt = ag.build_decoder("gpt2", 1, D, 2, context=16, seed=4)
    with torch.no_grad():
        gpt.wpe.weight.zero_()
    X = ag.random_embeddings(gpt, L, 0, n=2)
    on, off = ag.paired_positional_profiles(gpt, X, 3, seed=5)
    assert on.shape == off.shape == (2, 3, L)
    np.testing.assert_array_equal(on, off)


def test_positions_off_is_temporary_and_paired():
    model = ag.build_decoder("qwen2", 1, D, 2, 1, context=16, seed=4)
    rotary = model.rotary_emb
    with ag.positions_off(model):
        assert isinstance(model.rotary_emb, ag.NoRotary)
    assert model.rotary_emb is rotary
    gpt = ag.build_decoder("gpt2", 1, D, 2, context=16, seed=4)
    before = gpt.wpe.weight.clone()
    with ag.positions_off(gpt):
        assert torch.count_nonzero(gpt.wpe.weight) == 0
    assert torch.equal(gpt.wpe.weight, before)
    X = ag.random_embeddings(model, L, 0, n=2)
    on, off = ag.positional_pair(model, X, 2, seed=0)
    assert on.shape == off.shape == (2, L)


def test_value_pathway_is_everything_when_scores_are_constant():
    """With W_Q = W_K = 0 the attention is uniform for every input: no score pathway."""
    model = ag.build_decoder("qwen2", 2, D, 2, 1, context=16, seed=2, dtype=torch.float64)
    with torch.no_grad():
        for layer in model.layers:
            layer.self_attn.q_proj.weight.zero_()
            layer.self_attn.k_proj.weight.zero_()
    X = ag.random_embeddings(model, L, 0, n=2)
    pw = ag.pathway_profiles(model, X, 3, seed=0)
    np.testing.assert_allclose(pw["value"], pw["full"], rtol=1e-12)
    assert pw["score"].max() < 1e-20 * pw["full"].max()
    big = ag.build_decoder("qwen2", 2, D, 2, 1, context=16, seed=2, init_std=0.5, dtype=torch.float64)
    pw = ag.pathway_profiles(big, ag.random_embeddings(big, L, 0, n=1), 2, seed=0)
    assert pw["score"].sum() > 1e-3 * pw["full"].sum()
    assert big.config._attn_implementation == "sdpa"  # restored


def test_measured_score_std_follows_sigma_squared_d():
    model = ag.build_decoder("qwen2", 2, 64, 4, 2, context=64, init_std=0.1, seed=0)
    sd = ag.measured_score_std(model, ag.random_embeddings(model, 64, 0))
    assert sd.shape == (2,) and sd[0] == pytest.approx(ag.attention_score_std(64, 0.1), rel=0.25)
    gpt = ag.build_decoder("gpt2", 1, 64, 4, context=64, init_std=0.1, seed=0)
    assert ag.measured_score_std(gpt, ag.random_embeddings(gpt, 64, 0)).shape == (1,)
    assert ag.standin_init_std(896) == pytest.approx(0.02)
    assert ag.attention_score_std(64, ag.standin_init_std(64)) == pytest.approx(ag.attention_score_std(896, 0.02))


def test_chunks_boundaries_and_first_token_attention():
    pieces = torch.arange(30).reshape(10, 3)
    seqs = ag.concatenate_chunks(pieces, 2, 7)
    assert seqs.tolist() == [[0, 1, 2, 3, 4, 5, 6], [9, 10, 11, 12, 13, 14, 15]]
    assert ag.chunk_boundaries(20, 5, 2) == [5, 10, 15]
    with pytest.raises(ValueError, match="pieces"):
        ag.concatenate_chunks(pieces, 4, 7)
    model = ag.build_decoder("qwen2", 2, D, 2, 1, context=16, seed=2)
    with torch.no_grad():
        for layer in model.layers:
            layer.self_attn.q_proj.weight.zero_()
    per_layer, uniform = ag.first_token_attention(model, ag.random_embeddings(model, L, 0, n=2))
    np.testing.assert_allclose(per_layer, uniform, rtol=1e-5)  # q = 0: uniform attention, no sink


# ------------------------------------------- one forward pass, batched cotangents


def _looped_sequence_profiles(model, inputs, k, seed, kind, batch_size):
    """The per-probe reference for ``sequence_profiles``: one backward pass per probe."""
    n, L, d = inputs.shape
    out = []
    for start in range(0, n, batch_size):
        x = inputs[start:start + batch_size].detach().clone().requires_grad_(True)
        gen = torch.Generator().manual_seed(seed * 1_000_003 + start)
        U = torch.stack([ag.draw_probes(d, k, kind, gen) for _ in range(len(x))], 1).to(x.dtype)
        with torch.enable_grad():
            y = jb._last_state(model, x)
            g = [torch.autograd.grad(y, x, grad_outputs=U[i], retain_graph=True)[0] for i in range(k)]
        out.append(torch.stack(g, 1).double().pow(2).sum(-1).numpy())
    return np.concatenate(out)


@pytest.mark.parametrize("arch, dtype, rtol", [("qwen2", torch.float64, 1e-12), ("gpt2", torch.float64, 1e-12),
                                               ("qwen2", torch.float32, 1e-5)])
def test_batched_cotangents_equal_the_per_batch_forward_path(arch, dtype, rtol):
    model = ag.build_decoder(arch, 2, D, 2, 1 if arch == "qwen2" else None, context=16, seed=1, dtype=dtype)
    if dtype == torch.float64:
        ag.keep_norm_dtype(model)
    h0 = ag.random_embeddings(model, L, 0)
    probes = ag.draw_probes(D, 5, "gaussian", 0)
    for old_b in (1, 2, 5):  # one forward and a backward per probe; a forward per batch of probes
        old = jb._probe_norms_per_batch(model, h0, probes, old_b).numpy()
        for new_b in (1, 2, 16):
            np.testing.assert_allclose(ag.probe_norms(model, h0, probes, new_b).numpy(), old, rtol=rtol)
    exact_old = np.sqrt(jb._probe_norms_per_batch(model, h0, ag.draw_probes(D, D, "exact", 0), 3).mean(0).numpy())
    for new_b in (3, D):
        np.testing.assert_allclose(ag.exact_profile(model, h0, new_b), exact_old, rtol=rtol)
    X = ag.random_embeddings(model, L, 1, n=3)
    ref = _looped_sequence_profiles(model, X, 4, 2, "orthogonal", 2)
    for probe_batch in (1, 3, 4):
        np.testing.assert_allclose(ag.sequence_profiles(model, X, 4, seed=2, batch_size=2, probe_batch=probe_batch),
                                   ref, rtol=rtol)


def test_pathways_with_batched_cotangents_equal_one_probe_per_pass(tiny64):
    model, _ = tiny64
    X = ag.random_embeddings(model, L, 2, n=2)
    one = ag.pathway_profiles(model, X, 5, seed=3, probe_batch=1)  # one backward pass per probe
    for probe_batch in (2, 16):
        batched = ag.pathway_profiles(model, X, 5, seed=3, probe_batch=probe_batch)
        for name in ("full", "value", "score"):
            np.testing.assert_allclose(batched[name], one[name], rtol=1e-10, atol=1e-12)
