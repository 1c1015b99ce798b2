"""Chapter 6 beyond the paper: the real-layer additions, the relativity test and the
NoPE decoder, checked against the paper's layer, exact symmetries and resumption."""

import math

import numpy as np
import pytest
import torch

from attention_geometry.checkpoint import CheckpointStore
from attention_geometry.models.tiny_decoder import TinyDecoderConfig
from attention_geometry.recency import extensions as ext, simulation as rec, theory as th


def test_the_default_spec_is_the_papers_layer_and_heads_split_coordinates():
    X = rec.inputs(7, 6, 16, 0.3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    w = ext.extended_weights(ext.LayerSpec(), 16, 1, generator=torch.Generator().manual_seed(1),
                             dtype=torch.float64)[0]
    for gamma in (0.0, 1.0):
        out, S = ext.extended_layer(X, w, ext.LayerSpec(), gamma=gamma)
        ref, S_ref, _ = rec.decoder_layer(X, gamma=gamma)
        assert torch.allclose(out, ref, atol=1e-12) and torch.allclose(S[:, 0], S_ref, atol=1e-12)
    spec = ext.LayerSpec(n_heads=4)
    _, S = ext.extended_layer(X, w, spec, gamma=0.0)
    Y = torch.nn.functional.layer_norm(X, (16,), eps=0.0)
    block = Y[..., 4:8]
    assert torch.allclose(S[:, 1], block @ block.transpose(-1, -2) / 2.0, atol=1e-12)
    with pytest.raises(ValueError, match="n_heads"):
        ext.LayerSpec(n_heads=3).check(16)


def test_random_projections_and_ffn_and_affine_are_what_they_say():
    gen = torch.Generator().manual_seed(2)
    spec = ext.LayerSpec(random_qk=True, ffn=True, ln_eps=1e-5, ln_affine=0.2)
    w = ext.extended_weights(spec, 32, 2, generator=gen, dtype=torch.float64)
    assert w[0]["W_Q"].std().item() == pytest.approx(32**-0.5, rel=0.1)
    assert w[0]["W_1"].shape == (32, 128) and w[0]["W_2"].std().item() == pytest.approx(128**-0.5, rel=0.1)
    assert w[0]["g"].std().item() == pytest.approx(0.2, rel=0.3)
    X = rec.inputs(5, 6, 32, 0.5, generator=gen, dtype=torch.float64)
    out, S = ext.extended_layer(X, w[0], spec)
    Y = torch.nn.functional.layer_norm(X, (32,), eps=1e-5) * w[0]["g"] + w[0]["b"]
    assert torch.allclose(S[:, 0], (Y @ w[0]["W_Q"]) @ (Y @ w[0]["W_K"]).transpose(-1, -2) / math.sqrt(32))
    assert out.shape == X.shape


def test_extended_simulation_recovers_the_papers_recency_and_resumes(tmp_path):
    kw = dict(d=32, n=8, alpha=0.5, gamma=1.0, n_layers=3, n_models=3, n_samples=400, seed=1)
    base = ext.simulate_extended(ext.LayerSpec(), **kw)
    assert base.per_model.shape == (3, 3) and base.estimates[0].df == 2
    assert abs(base.estimates[0].value - 0.5) < 0.02  # layer 1: exchangeable keys
    assert base.later_layers().value > 0.53  # the paper's recency at alpha = 0.5
    store = CheckpointStore(tmp_path)
    again = ext.simulate_extended(ext.LayerSpec(), **kw, store=store)
    assert np.array_equal(base.per_model, again.per_model)
    assert list(tmp_path.glob("recency-extended-*.pt"))


def test_same_lag_probes_and_the_relativity_test():
    probes = ext.same_lag_probes(6, lag=1)
    assert list(probes) == ["lag1-q2", "lag1-q3", "lag1-q4", "lag1-q5"]
    assert probes["lag1-q3"][2, 1] == 1.0 and probes["lag1-q3"][5, 4] == -1.0
    # the closed form is not a function of i - j at alpha = 0.5 ...
    S = th.layer2_scores(64, 10, 0.5)
    assert np.ptp([S[i, i - 1] for i in range(1, 10)]) > 0.05
    st = rec.simulate_recency(rec.RecencyModel(64, 10, 0.5, n_layers=2), n_samples=20_000, seed=2,
                              probes=ext.same_lag_probes(10, 1))
    _, df, p2 = ext.relativity_test(st, layer=2)
    assert df == 8 and p2 < 1e-10  # ... nor is the simulation at layer 2
    _, _, p1 = ext.relativity_test(st, layer=1)
    assert p1 > 1e-3  # at layer 1 every pair is alike: no rejection (the test holds its level)
    with pytest.raises(ValueError, match="lag"):
        ext.same_lag_probes(6, lag=5)


def test_nope_decoder_has_no_positions_and_training_resumes(tmp_path):
    cfg = TinyDecoderConfig(d=8, n_layers=2, n_heads=2, max_len=16)
    model = ext.nope_decoder(cfg, torch.Generator().manual_seed(0))
    assert torch.all(model.pos.weight == 0) and not model.pos.weight.requires_grad
    data = torch.randint(0, 256, (64, 9), generator=torch.Generator().manual_seed(1))
    whole, losses = ext.train_nope(cfg, data, 12, 4, seed=3)
    store = CheckpointStore(tmp_path)
    ext.train_nope(cfg, data, 12, 4, seed=3, store=store, checkpoint_every=5)  # leaves a checkpoint at 10
    again, losses2 = ext.train_nope(cfg, data, 12, 4, seed=3, store=store, checkpoint_every=5)
    assert np.array_equal(losses, losses2)
    assert all(torch.equal(a, b) for a, b in zip(whole.state_dict().values(), again.state_dict().values()))
    assert torch.all(again.pos.weight == 0)
    ids = data[:6, :8]
    S = ext.attention_scores(again, ids)
    assert S.shape == (6, 2, 2, 8, 8)
    rp = ext.nope_recency(again, ids)
    assert len(rp) == 2 and all(0 <= e.value <= 1 for e in rp)


def test_nope_over_seeds_takes_the_error_over_training_seeds():
    texts = ["the quick brown fox jumps over the lazy dog. " * 40]
    kw = dict(d=8, n_layers=2, n_heads=2, seq_len=8, n_steps=3, batch_size=4, n_eval=6)
    out = ext.nope_over_seeds(texts, seeds=[0, 1, 2], **kw)
    assert out["losses"].shape == (3, 3) and len(out["after"]) == 2
    per_seed = np.array([np.mean([e.value for e in ext.nope_experiment(texts, seed=s, **kw)["after"]])
                         for s in (0, 1, 2)])  # the same runs, one by one
    assert out["after_mean"].value == pytest.approx(per_seed.mean(), abs=1e-12)
    assert out["after_mean"].se == pytest.approx(per_seed.std(ddof=1) / np.sqrt(3), abs=1e-12)
    assert out["after_mean"].df == 2 and all(e.df == 2 for e in out["before"])
    # the seed is the replicate: each estimate keeps the seeds' values, for draws_verdict to count
    assert out["after_mean"].n_draws == 3 and np.allclose(out["after_mean"].draw_means, per_seed, atol=1e-12)
    for bad in ([0], [1, 1]):
        with pytest.raises(ValueError, match=r"seeds = \[.*allowed: at least two distinct seeds"):
            ext.nope_over_seeds(texts, seeds=bad, **kw)
    parallel = ext.nope_over_seeds(texts, seeds=[0, 1, 2], workers=2, **kw)  # one seed a process, same numbers
    assert np.allclose(parallel["losses"], out["losses"], rtol=1e-5)
    assert parallel["after_mean"].value == pytest.approx(out["after_mean"].value, abs=1e-6)
    with pytest.raises(ValueError, match=r"workers = 0.*allowed"):
        ext.nope_over_seeds(texts, seeds=[0, 1], workers=0, **kw)


def test_the_qk_interpolation_runs_from_the_identity_to_a_random_matrix_at_a_fixed_norm():
    d = 256
    ms = {t: ext.qk_matrix(ext.extended_weights(ext.LayerSpec(qk_interp=t), d, 1,
                                                generator=torch.Generator().manual_seed(3))[0], d)
          for t in (0.0, 0.5, 1.0)}
    assert torch.allclose(ms[0.0], torch.eye(d, dtype=torch.float64))
    for M in ms.values():  # the shape changes, the Frobenius norm does not
        assert float(torch.linalg.norm(M)) == pytest.approx(math.sqrt(d), rel=1e-6)
    dom = {t: ext.diagonal_dominance(M) for t, M in ms.items()}
    assert dom[0.0] == pytest.approx(1.0)
    assert dom[0.5] == pytest.approx(2**-0.5, abs=4 / math.sqrt(d))  # (1-t)/sqrt((1-t)^2 + t^2)
    assert abs(dom[1.0]) < 4 / math.sqrt(d)  # the trace of a random G is N(0, 1) against a norm sqrt(d)


def test_the_identity_end_of_the_interpolation_is_the_papers_layer():
    X = torch.randn(16, 6, 32, generator=torch.Generator().manual_seed(0))
    w = ext.extended_weights(ext.LayerSpec(qk_interp=0.0), 32, 1, generator=torch.Generator().manual_seed(1))[0]
    plain = ext.extended_weights(ext.LayerSpec(), 32, 1, generator=torch.Generator().manual_seed(1))[0]
    a = ext.extended_layer(X, w, ext.LayerSpec(qk_interp=0.0))
    b = ext.extended_layer(X, plain, ext.LayerSpec())
    assert torch.allclose(a[0], b[0], atol=1e-5) and torch.allclose(a[1], b[1], atol=1e-5)


def test_the_interpolation_keeps_the_other_specs_keys_and_rejects_a_double_choice():
    assert repr(ext.LayerSpec()) == "LayerSpec(random_qk=False, n_heads=1, ffn=False, ln_eps=0.0, ln_affine=0.0)"
    with pytest.raises(ValueError):
        ext.LayerSpec(random_qk=True, qk_interp=0.5).check(16)
    with pytest.raises(ValueError):
        ext.LayerSpec(qk_interp=1.5).check(16)


def test_the_matched_nope_decoders_change_only_the_norm_in_front_of_attention(tmp_path):
    x = torch.randn(3, 5, 8, generator=torch.Generator().manual_seed(0), dtype=torch.float64) + 2.0
    for norm in ("layernorm", "rmsnorm", "none"):
        model = ext.nope_decoder(TinyDecoderConfig(d=8, n_layers=2, n_heads=2, max_len=16, norm=norm, eps=0.0),
                                 torch.Generator().manual_seed(0))
        u = model.norm_1(x)
        if norm == "none":
            assert torch.equal(u, x)
        else:  # both scale onto the sphere of radius sqrt(d); only LayerNorm centres
            assert torch.allclose(u.norm(dim=-1), torch.full((3, 5), math.sqrt(8), dtype=torch.float64))
            assert torch.allclose(u.mean(-1), torch.zeros(3, 5, dtype=torch.float64)) == (norm == "layernorm")
    texts = ["the quick brown fox jumps over the lazy dog. " * 40]
    kw = dict(d=8, n_layers=2, n_heads=2, seq_len=8, n_steps=3, batch_size=4, n_eval=6)
    store = CheckpointStore(tmp_path)
    runs = {norm: ext.nope_experiment(texts, seed=0, norm=norm, store=store, **kw) for norm in ("layernorm", "none")}
    assert runs["none"]["config"].norm == "none" and runs["layernorm"]["config"].norm == "layernorm"
    assert not np.array_equal(runs["none"]["losses"], runs["layernorm"]["losses"])  # a checkpoint per norm
    again = ext.nope_experiment(texts, seed=0, norm="layernorm", store=store, **kw)
    assert np.array_equal(again["losses"], runs["layernorm"]["losses"])


def test_the_nope_dominance_is_one_for_identity_projections_and_reported_per_layer():
    model = ext.nope_decoder(TinyDecoderConfig(d=8, n_layers=2, n_heads=2, max_len=16), torch.Generator().manual_seed(0))
    with torch.no_grad():
        model.blocks[0].W_Q.weight.copy_(torch.eye(8))
        model.blocks[0].W_K.weight.copy_(3.0 * torch.eye(8))
    dom = ext.nope_dominance(model)
    assert dom.shape == (2,) and dom[0] == pytest.approx(1.0) and abs(dom[1]) < 0.9
