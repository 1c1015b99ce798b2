"""The selectability test against brute force, constructed cases and the LP
reference; and the tiny decoder's shapes, training and determinism."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import ConvexHull

from attention_geometry import layer_norm
from attention_geometry import selectability as sel
from attention_geometry.models import tiny_decoder as td


def hull_unselectable(keys):
    """Brute force: non-vertices of the convex hull (distinct points in general position)."""
    mask = np.ones(len(keys), dtype=bool)
    mask[ConvexHull(keys).vertices] = False
    return mask


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("n", [4, 7, 15, 40])
def test_matches_convex_hull_vertices(n, d):
    rng = np.random.default_rng(100 * n + d)
    for _ in range(5):
        keys = rng.standard_normal((n, d))
        np.testing.assert_array_equal(sel.unselectable_mask(keys), hull_unselectable(keys))


def test_key_at_centroid_of_others_is_unselectable():
    rng = np.random.default_rng(1)
    others = rng.standard_normal((6, 4))
    keys = np.vstack([others, others.mean(axis=0)])
    mask = sel.unselectable_mask(keys)
    assert mask[-1] and not mask[:-1].any()
    assert sel.any_unselectable(keys)


@pytest.mark.parametrize("n, d", [(50, 3), (200, 3), (30, 8), (5, 2)])
def test_keys_on_a_sphere_are_all_selectable(n, d):
    rng = np.random.default_rng(n + d)
    x = rng.standard_normal((n, d))
    keys = 3.0 * x / np.linalg.norm(x, axis=1, keepdims=True) + 5.0  # any centre, any radius
    assert not sel.unselectable_mask(keys).any()
    assert not sel.any_unselectable(keys)


def test_layernorm_outputs_and_their_affine_images_are_selectable():
    rng = np.random.default_rng(2)
    y = layer_norm(rng.standard_normal((80, 4)))  # 80 points on a circle-like sphere in H
    assert not sel.unselectable_mask(y).any()
    gamma, beta = np.array([0.5, 2.0, -1.0, 3.0]), rng.standard_normal(4)
    assert not sel.unselectable_mask(gamma * y + beta).any()


def test_duplicates_are_unselectable():
    keys = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_array_equal(sel.unselectable_mask(keys), [False, True, False, True])
    assert sel.unselectable_mask(np.ones((3, 5))).all()
    np.testing.assert_array_equal(sel.unselectable_mask_lp(keys), [False, True, False, True])


def test_collinear_keys_only_endpoints_are_selectable():
    t = np.array([0.3, -2.0, 1.0, 0.0, 5.0, 4.9])
    keys = np.outer(t, [1.0, 2.0, -1.0]) + 1.0
    expected = ~np.isin(t, [t.min(), t.max()])
    np.testing.assert_array_equal(sel.unselectable_mask(keys), expected)
    np.testing.assert_array_equal(sel.unselectable_mask_lp(keys), expected)


@pytest.mark.parametrize("n, d", [(1, 3), (2, 5), (4, 10), (11, 10)])
def test_fewer_keys_than_dimensions_are_all_selectable(n, d):
    keys = np.random.default_rng(n).standard_normal((n, d))
    assert not sel.unselectable_mask(keys).any()


def test_single_and_two_keys():
    assert not sel.unselectable_mask([[1.0, 2.0]]).any()
    assert sel.unselectable_mask([[1.0, 2.0], [1.0, 2.0]]).all()


def test_cheap_path_and_lp_path_agree():
    rng = np.random.default_rng(3)
    for n, d in [(10, 3), (30, 4), (25, 6), (60, 5), (12, 9)]:
        keys = rng.standard_normal((4, n, d))
        fast, stage = sel.classify_keys(keys)
        lp_only, lp_stage = sel.classify_keys(keys, n_gilbert=0)
        for s in range(len(keys)):
            np.testing.assert_array_equal(fast[s], sel.unselectable_mask_lp(keys[s]))
        np.testing.assert_array_equal(fast, lp_only)
        # the LP also agrees with the margin of every key the queries certified
        k = sel.normalise_keys(keys[0])
        for i in np.flatnonzero(stage[0] == 0)[:5]:
            assert sel.l1_margin_lp(k, i) > sel.SELECTABILITY_TOL


def test_any_unselectable_equals_mask_any_on_random_sets():
    rng = np.random.default_rng(4)
    for _ in range(40):
        n, d = int(rng.integers(2, 30)), int(rng.integers(2, 6))
        keys = rng.standard_normal((n, d))
        assert sel.any_unselectable(keys) == sel.unselectable_mask(keys).any()


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 3), st.integers(5, 25), st.integers(0, 2**32 - 1), st.floats(1e-3, 1e3))
def test_property_matches_hull_and_is_invariant(d, n, seed, scale):
    rng = np.random.default_rng(seed)
    keys = rng.standard_normal((n, d))
    mask = sel.unselectable_mask(keys)
    np.testing.assert_array_equal(mask, hull_unselectable(keys))
    # positive scaling, translation and an invertible linear map keep selectability
    a = rng.standard_normal((d, d)) + 3 * np.eye(d)
    np.testing.assert_array_equal(sel.unselectable_mask(scale * keys @ a.T + 7.0), mask)
    # adding a key at a convex combination of others makes it unselectable
    lam = rng.dirichlet(np.ones(n))
    assert sel.unselectable_mask(np.vstack([keys, lam @ keys]))[-1]


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 12), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_property_fast_equals_lp_reference(d, n, seed):
    keys = np.random.default_rng(seed).standard_normal((n, d))
    np.testing.assert_array_equal(sel.unselectable_mask(keys), sel.unselectable_mask_lp(keys))


@pytest.mark.parametrize(
    "bad, fragment",
    [
        (np.zeros(3), "shape"),
        (np.zeros((2, 3, 4)), "shape"),
        (np.zeros((0, 3)), "n >= 1"),
        (np.zeros((3, 0)), "d >= 1"),
        (np.array([[0.0, np.nan]]), "NaN"),
        (np.array([[0.0, np.inf]]), "NaN or infinity"),
        (np.array([["a", "b"]]), "dtype"),
        (np.array([[True, False]]), "dtype"),
    ],
)
def test_bad_inputs_raise(bad, fragment):
    with pytest.raises(ValueError, match=fragment):
        sel.unselectable_mask(bad)
    with pytest.raises(ValueError, match=fragment):
        sel.any_unselectable(bad)


def test_bad_tolerance_and_grid_arguments_raise():
    with pytest.raises(ValueError, match="tol"):
        sel.unselectable_mask(np.eye(3), tol=0.0)
    with pytest.raises(ValueError, match="n_sets"):
        sel.gaussian_key_sets(0, 3, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng"):
        sel.gaussian_key_sets(1, 3, 3, 0)


def test_grid_shapes_and_layernorm_zero():
    rng = np.random.default_rng(5)
    plain = sel.selectability_grid([3, 10, 20], [3, 4], 10, rng)
    ln = sel.selectability_grid([3, 10, 20], [3, 4], 10, rng, layer_norm=True)
    assert plain["any"].shape == plain["mean"].shape == (3, 2)
    assert plain["any"][0].max() == 0  # n = 3 <= d + 1
    assert plain["any"][-1, 0] > 0.5
    assert ln["any"].max() == 0 and ln["mean"].max() == 0
    assert plain["stages"].sum() == 10 * 2 * (3 + 10 + 20)


def test_multihead_example():
    ex = sel.multihead_example()
    np.testing.assert_allclose(layer_norm(ex["normed"]), ex["normed"], atol=1e-12)
    assert not sel.unselectable_mask(ex["normed"]).any()
    np.testing.assert_array_equal(sel.unselectable_mask(ex["keys"]), [False] * 4 + [True])


# ----------------------------------------------------------------- tiny decoder


def _data(n=64, seq=17, seed=0):
    text = b"the quick brown fox jumps over the lazy dog. " * 40
    g = np.random.default_rng(seed)
    starts = g.integers(0, len(text) - seq, n)
    return torch.tensor([list(text[s : s + seq]) for s in starts])


@pytest.mark.parametrize("norm", td.NORMS)
def test_tiny_decoder_shapes(norm):
    cfg = td.TinyDecoderConfig(norm=norm, max_len=32)
    model = td.TinyDecoder(cfg, torch.Generator().manual_seed(0))
    ids = _data(3, 10)
    assert model(ids).shape == (3, 10, 256)
    rec = td.attention_inputs(model, ids)
    assert len(rec) == cfg.n_layers
    assert rec[0]["residual"].shape == rec[0]["normed"].shape == (3, 10, 8)
    assert rec[0]["keys"].shape == (3, 4, 10, 2)
    if norm == "projection":
        # gamma = 1, beta = 0 at initialisation: the normed states are centred
        np.testing.assert_allclose(rec[0]["normed"].sum(-1), 0, atol=1e-5)
    out = td.layer_selectability(model, ids)
    assert len(out) == 4 and all(0 <= v <= 100 for r in out for v in r.values())


def test_tiny_decoder_training_reduces_loss_and_is_deterministic():
    data = _data()
    cfg = td.TinyDecoderConfig(max_len=32)
    model, losses = td.train_tiny_decoder(cfg, data, 30, 8, seed=3)
    assert losses[-5:].mean() < losses[:5].mean() - 0.5
    _, again = td.train_tiny_decoder(cfg, data, 30, 8, seed=3)
    np.testing.assert_array_equal(losses, again)


def test_tiny_decoder_bad_arguments():
    with pytest.raises(ValueError, match="norm"):
        td.TinyDecoderConfig(norm="rms")
    with pytest.raises(ValueError, match="multiple"):
        td.TinyDecoderConfig(d=6, n_heads=4)
    with pytest.raises(ValueError, match="n_steps"):
        td.train_tiny_decoder(td.TinyDecoderConfig(), _data(), 0, 8, seed=0)
    with pytest.raises(ValueError, match="data"):
        td.train_tiny_decoder(td.TinyDecoderConfig(max_len=8), _data(seq=17), 1, 8, seed=0)
