"""The switched-component decoder of chapter 9: each switch does what it says."""

import pytest
import torch

from attention_geometry.synthesis import (
    SynthConfig, decoder_forward, default_variants, influence_profile, init_weights,
    measure_variant, synth_inputs)

D, N = 8, 6


def _setup(seed=0, layers=3):
    w = init_weights(D, layers, generator=torch.Generator().manual_seed(seed))
    X = synth_inputs(4, N, D, 0.5, generator=torch.Generator().manual_seed(seed + 1))
    return w, X


def test_causal_mask_makes_outputs_independent_of_later_inputs():
    w, X = _setup()
    Y = X.clone()
    Y[:, 3:] += torch.randn(Y[:, 3:].shape, generator=torch.Generator().manual_seed(5), dtype=Y.dtype)
    cfg = SynthConfig(n_layers=3)
    a, b = decoder_forward(X, w, cfg)[0], decoder_forward(Y, w, cfg)[0]
    torch.testing.assert_close(a[:, :3], b[:, :3])
    assert not torch.allclose(a[:, 3:], b[:, 3:])
    bidir = SynthConfig(n_layers=3, causal=False)
    assert not torch.allclose(decoder_forward(X, w, bidir)[0][:, :3], decoder_forward(Y, w, bidir)[0][:, :3])


def test_window_masks_scores():
    w, X = _setup()
    S = decoder_forward(X, w, SynthConfig(n_layers=1, window=2))[1][:, 0]
    i, j = torch.meshgrid(torch.arange(N), torch.arange(N), indexing="ij")
    allowed = (j <= i) & (j >= i - 2)  # a window of width 2: keys i-2, i-1, i
    assert torch.isinf(S[:, ~allowed]).all() and torch.isfinite(S[:, allowed]).all()


def test_residual_off_changes_outputs():
    w, X = _setup()
    a = decoder_forward(X, w, SynthConfig(n_layers=2))[0]
    b = decoder_forward(X, w, SynthConfig(n_layers=2, residual=False))[0]
    assert not torch.allclose(a, b)


def test_rope_changes_scores_but_not_at_position_zero_pair():
    w, X = _setup()
    a = decoder_forward(X, w, SynthConfig(n_layers=1))[1]
    b = decoder_forward(X, w, SynthConfig(n_layers=1, rope=True))[1]
    torch.testing.assert_close(a[..., 0, 0], b[..., 0, 0])  # both at position 0: no rotation
    assert not torch.allclose(a[..., 1:, :1], b[..., 1:, :1])


def test_influence_profile_sums_to_one_and_respects_the_mask():
    w, X = _setup()
    p = influence_profile(X[:1], w, SynthConfig(n_layers=2, window=2))
    assert p.shape == (N,) and abs(float(p.sum()) - 1) < 1e-12
    assert float(p[: N - 5].max()) == 0.0  # 2 layers of window 2 reach back 4 positions
    assert float(p[N - 5]) > 0.0


def test_determinism():
    m1 = measure_variant(SynthConfig(n_layers=2), d=D, n=N, batch=4, jac_batch=1, seed=3)
    m2 = measure_variant(SynthConfig(n_layers=2), d=D, n=N, batch=4, jac_batch=1, seed=3)
    assert {k: v for k, v in m1.items() if k != "profile"} == {k: v for k, v in m2.items() if k != "profile"}
    assert set(default_variants()) and len(default_variants()) == 9


@pytest.mark.parametrize("kwargs", [dict(norm="batchnorm"), dict(n_layers=0), dict(window=0),
                                    dict(window=2, causal=False), dict(alpha=1.0)])
def test_bad_config_raises(kwargs):
    w, X = _setup()
    with pytest.raises(ValueError):
        decoder_forward(X, w, SynthConfig(**kwargs))


def test_bad_weights_and_inputs_raise():
    with pytest.raises(ValueError, match="d = 7"):
        init_weights(7, 1, generator=torch.Generator())
    with pytest.raises(ValueError, match="scale"):
        init_weights(8, 1, generator=torch.Generator(), scale=0.0)
    w, X = _setup(layers=1)
    with pytest.raises(ValueError, match="n_layers"):
        decoder_forward(X, w, SynthConfig(n_layers=2))
    with pytest.raises(ValueError, match="width"):
        decoder_forward(X[..., :4], w, SynthConfig(n_layers=1))
    with pytest.raises(ValueError, match="shape"):
        decoder_forward(X[0], w, SynthConfig(n_layers=1))


def test_rp_inside_differs_from_rp_only_with_a_window():
    kw = dict(d=D, n=N, batch=8, jac_batch=1, seed=1)
    m = measure_variant(SynthConfig(n_layers=2), **kw)
    assert m["rp"] == pytest.approx(m["rp_inside"])
    w = measure_variant(SynthConfig(n_layers=2, window=3), **kw)
    assert w["rp"] > w["rp_inside"]  # masked far keys count as wins for the near key
