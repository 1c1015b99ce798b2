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
from attention_geometry.verdicts import after_norm_verdict, table_verdict
from attention_geometry.words import relative_words, training_shortfall


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
        sel.gaussian_key_sets(1, 3, 3, 0.5)  # a seed is an integer (then it is default_rng(seed))
    assert np.array_equal(sel.gaussian_key_sets(1, 3, 3, 4), sel.gaussian_key_sets(1, 3, 3, np.random.default_rng(4)))


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


def test_fast_test_matches_the_lp_on_larger_and_flat_sets():
    rng = np.random.default_rng(11)
    keys = rng.standard_normal((300, 8))
    np.testing.assert_array_equal(sel.unselectable_mask(keys), sel.unselectable_mask_lp(keys))
    flat = keys - keys.mean(axis=1, keepdims=True)  # centred: a 7-dim subspace of R^8 (after projection)
    np.testing.assert_array_equal(sel.unselectable_mask(flat), sel.unselectable_mask_lp(flat))


def test_large_sets_are_chunked_and_agree_with_small_batches():
    rng = np.random.default_rng(12)
    sets = rng.standard_normal((6, 1024, 4))  # the query stage must split these (6 x 1024^2 scores)
    together, _ = sel.classify_keys(sets)
    for s in range(0, 6, 3):
        np.testing.assert_array_equal(sel.classify_keys(sets[s:s + 3])[0], together[s:s + 3])


def test_gaussian_percent_is_reproducible_and_checkpointed(tmp_path):
    from attention_geometry.checkpoint import CheckpointStore

    lengths = [20, 60, 60, 120] * 20
    a = sel.gaussian_percent(lengths, 3, np.random.default_rng(0))
    b = sel.gaussian_percent(lengths, 3, np.random.default_rng(0), store=CheckpointStore(tmp_path), key={"t": 1})
    np.testing.assert_array_equal(a, b)
    assert any(tmp_path.iterdir())
    c = sel.gaussian_percent(lengths, 3, np.random.default_rng(0), store=CheckpointStore(tmp_path), key={"t": 1})
    np.testing.assert_array_equal(a, c)
    assert a.shape == (80,) and a[lengths.index(120)] > 0  # 120 Gaussian keys in d = 3: many interior


def test_half_contour_interpolates_and_brackets():
    ns = np.array([10, 20, 30, 40])
    frac = np.array([[0.0, 0.1], [0.2, 0.3], [0.6, 0.4], [1.0, 0.45]])
    n_star, lo, hi = sel.half_contour(ns, frac, n_sets=100)
    assert n_star[0] == pytest.approx(20 + (0.5 - 0.2) / (0.6 - 0.2) * 10)
    assert np.isnan(n_star[1])  # never reaches 1/2 on the grid
    assert lo[0] <= n_star[0] <= hi[0]
    big = sel.half_contour(ns, frac, n_sets=100_000)
    assert big[2][0] - big[1][0] < hi[0] - lo[0]  # more sets: a narrower interval


def test_relative_words_and_table_verdict():
    from attention_geometry.stats import Estimate

    assert relative_words(Estimate(5.0, 1.0, df=30)) == "more than"
    assert relative_words(Estimate(-5.0, 1.0, df=30)) == "fewer than"
    assert relative_words(Estimate(0.5, 1.0, df=30)) == "as many as"
    est = [Estimate(50.0, 0.5, df=99), Estimate(30.0, 0.5, df=99)]
    assert table_verdict(est, [51.0, 32.0], (16, 128), (768, 1024)).label == "not tested"
    assert table_verdict(est, [51.0, 32.0], (768, 1024), (768, 1024)).label == "reproduced"
    assert table_verdict(est, [51.0, 45.0], (768, 1024), (768, 1024)).label == "differs"



def test_after_norm_verdict_reproduces_only_when_no_normed_state_is_unselectable():
    assert after_norm_verdict(0.0, 0.0, 0.99, eps=1e-5).label == "reproduced"
    only_eps = after_norm_verdict(1.9, 0.0, 0.95, eps=1e-5)
    assert only_eps.label == "not decided" and "epsilon term" in only_eps.reason
    # on the sphere distinct states are all vertices: what is unselectable there is a tie, no counterexample
    ties = after_norm_verdict(1.9, 0.4, 0.95, eps=1e-5)
    assert ties.label == "not decided" and "ties" in ties.reason
    with pytest.raises(ValueError, match="normed_max"):
        after_norm_verdict(-1.0, 0.0, 1.0, eps=1e-5)


def test_epsilon_pulls_a_short_state_inside_the_hull():
    """The mechanism the verdict names: with epsilon a state of short centred norm
    lands inside the sphere, and inside the hull of the others; with epsilon = 0
    every state is on the sphere and selectable (Cor. sel-cor-sphere)."""
    from attention_geometry.layernorm import layer_norm

    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 4))
    x[0] *= 1e-3  # |P x_0|^2 ~ 1e-6 << d eps = 4e-5
    on_sphere, with_eps = layer_norm(x), layer_norm(x, eps=1e-5)
    assert not sel.unselectable_mask(on_sphere).any()
    assert sel.unselectable_mask(with_eps)[0] and not sel.unselectable_mask(with_eps)[1:].any()


# ----------------------------------------------------------------- tiny decoder


TEXT = ["The quick brown fox jumps over the lazy dog, and then it runs away into the woods. " * 3,
        "A second paragraph, with other words in it, so that the text is not one repeated sentence. " * 3] * 6
TINY = td.TinyTraining(steps=12, batch=4, seq_len=32, lr=1e-2, checkpoint_every=5)


@pytest.mark.parametrize("norm", td.NORMS)
def test_tiny_decoder_shapes_and_norms(norm):
    cfg = td.TinyDecoderConfig(norm=norm)
    model = td.TinyDecoder(cfg, torch.Generator().manual_seed(0))
    ids = torch.randint(256, (3, 10), generator=torch.Generator().manual_seed(1))
    assert model(ids).shape == (3, 10, 256)
    rec = td.attention_inputs(model, ids)
    assert len(rec) == cfg.n_layers
    assert rec[0]["residual"].shape == rec[0]["normed"].shape == (3, 10, 8)
    assert rec[0]["keys"].shape == (3, 4, 10, 2)
    normed = rec[1]["normed"]
    np.testing.assert_allclose(normed.sum(-1), 0, atol=1e-12)  # both norms centre, in float64: on H
    centred = rec[1]["residual"] - rec[1]["residual"].mean(-1, keepdims=True)
    if norm == "layernorm":  # sqrt(d) P x / sqrt(|P x|^2 + d eps): the sphere only where |P x|^2 >> d eps
        r = np.linalg.norm(centred, axis=-1)
        np.testing.assert_allclose(np.linalg.norm(normed, axis=-1), np.sqrt(8) * r / np.sqrt(r**2 + 8e-5), rtol=1e-4)
    else:  # the centred residual stream itself
        np.testing.assert_allclose(normed, centred, atol=1e-6)
    out = td.layer_selectability(model, [ids[0], ids[1, :7]], places=("residual", "normed", "sphere", "keys"))
    assert out["normed"].shape == (2, 4) and ((0 <= out["keys"]) & (out["keys"] <= 100)).all()
    c = rec[1]["residual"] - rec[1]["residual"].mean(-1, keepdims=True)  # epsilon = 0: exactly the sphere
    np.testing.assert_allclose(rec[1]["sphere"], np.sqrt(8) * c / np.linalg.norm(c, axis=-1, keepdims=True))
    radius = td.normed_radius(model, [ids[0], ids[1, :7]])
    expect = np.linalg.norm(rec[0]["normed"][0], axis=-1).min() / np.sqrt(8)
    assert radius.shape == (2, 4) and radius[0, 0] == pytest.approx(expect)
    if norm == "layernorm":  # inside the sphere; an untrained model's residual is short: epsilon shows
        assert (radius <= 1 + 1e-6).all() and radius.min() < 1 - 1e-4
    with pytest.raises(ValueError, match="places"):
        td.layer_selectability(model, [ids[0]], places=("after",))


def test_tiny_decoder_initialisation_is_gpt2s():
    model = td.TinyDecoder(td.TinyDecoderConfig(), torch.Generator().manual_seed(0))
    assert abs(model.embed.weight.std().item() - 0.02) < 0.003
    assert abs(model.blocks[0].W_O.weight.std().item() - 0.02 / np.sqrt(8)) < 0.004
    assert (model.blocks[0].fc.bias == 0).all() and (model.ln_f.gain == 1).all()


def test_tiny_decoder_training_is_deterministic_and_resumes(tmp_path):
    from attention_geometry.checkpoint import CheckpointStore

    cfg = td.TinyDecoderConfig(max_len=64)
    model, losses = td.train_tiny_decoder(cfg, TEXT, TINY, seed=3)
    assert losses.shape == (12,) and losses[-3:].mean() < losses[:3].mean()
    _, again = td.train_tiny_decoder(cfg, TEXT, TINY, seed=3)
    np.testing.assert_array_equal(losses, again)
    store = CheckpointStore(tmp_path)
    first = td.TinyTraining(**{**TINY.__dict__, "steps": 7})
    td.train_tiny_decoder(cfg, TEXT, first, seed=3, store=store)  # stops at 7, saved at 5 and 7
    resumed, rest = td.train_tiny_decoder(cfg, TEXT, TINY, seed=3, store=store)
    np.testing.assert_allclose(rest, losses, rtol=1e-6)
    for a, b in zip(resumed.parameters(), model.parameters()):
        torch.testing.assert_close(a, b)


def test_text_helpers_and_sequence_losses():
    train, held = td.split_texts(TEXT, every=4)
    assert len(train) == 9 and len(held) == 3 and held[0] == TEXT[0]
    windows = td.byte_windows(TEXT, 5, 10, 20, seed=0)
    assert len(windows) == 5 and all(10 <= len(w) <= 20 for w in windows)
    assert all(torch.equal(a, b) for a, b in zip(windows, td.byte_windows(TEXT, 5, 10, 20, seed=0)))
    model = td.TinyDecoder(td.TinyDecoderConfig(max_len=64), torch.Generator().manual_seed(0))
    loss = td.sequence_losses(model, windows)
    assert loss.shape == (5,) and np.allclose(loss, np.log(256), atol=0.1)  # untrained: near uniform


def test_training_shortfall_names_what_is_missing():
    assert training_shortfall(td.TinyTraining()) == ""
    assert training_shortfall(td.TinyTraining(steps=1000)) == "the tiny decoders trained 1,000 of the original's 50,000 steps"
    short = training_shortfall(td.TinyTraining(steps=450, schedule_steps=450, seq_len=128, lr=0.01))
    assert "450 of the original's 50,000 steps" in short and "128 of the original's 1,024 tokens" in short
    assert "learning rate 0.01 decaying to 0 at step 450" in short


def test_tiny_decoder_bad_arguments():
    with pytest.raises(ValueError, match="norm"):
        td.TinyDecoderConfig(norm="rms")
    with pytest.raises(ValueError, match="multiple"):
        td.TinyDecoderConfig(d=6, n_heads=4)
    with pytest.raises(ValueError, match="steps"):
        td.TinyTraining(steps=0)
    with pytest.raises(ValueError, match="seq_len"):
        td.train_tiny_decoder(td.TinyDecoderConfig(max_len=8), TEXT, TINY, seed=0)
    with pytest.raises(ValueError, match="max_len"):
        td.byte_windows(["short"], 1, 2, 100, seed=0)


def test_layer_selectability_is_checkpointed_window_by_window(tmp_path):
    from attention_geometry.checkpoint import CheckpointStore

    model = td.TinyDecoder(td.TinyDecoderConfig(max_len=64), torch.Generator().manual_seed(0))
    windows = td.byte_windows(TEXT, 4, 20, 40, seed=1)
    store = CheckpointStore(tmp_path)
    first = td.layer_selectability(model, windows, ("residual",), store=store, name="t", key={"m": 1})
    assert len(list(tmp_path.iterdir())) == 1
    again = td.layer_selectability(model, windows, ("residual",), store=store, name="t", key={"m": 1})
    np.testing.assert_array_equal(first["residual"], again["residual"])
    plain = td.layer_selectability(model, windows, ("residual",))
    np.testing.assert_array_equal(first["residual"], plain["residual"])


# --------------------------------------------------- training to a plateau


def test_learning_rate_schedules():
    lin = td.TinyTraining(steps=100, schedule_steps=100, lr=1.0)
    assert [td.learning_rate(lin, s) for s in (0, 50, 100, 150)] == pytest.approx([1.0, 0.5, 0.0, 0.0])
    cos = td.TinyTraining(steps=110, schedule_steps=110, lr=2.0, warmup=10, decay="cosine")
    assert td.learning_rate(cos, 0) == 0.0 and td.learning_rate(cos, 5) == pytest.approx(1.0)
    assert td.learning_rate(cos, 10) == pytest.approx(2.0)  # the peak, then half a cosine to 0
    assert td.learning_rate(cos, 60) == pytest.approx(1.0) and td.learning_rate(cos, 110) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="warmup"):
        td.TinyTraining(steps=10, schedule_steps=10, warmup=10)
    with pytest.raises(ValueError, match="decay"):
        td.TinyTraining(decay="step")


def test_plateau_rule_and_snapshot_grid():
    assert not td.plateau_reached([3.0, 2.0], 2, 0.01)  # too few measurements
    assert not td.plateau_reached([3.0, 2.5, 2.0], 2, 0.01)  # 20 % better than 2.5 steps before
    assert td.plateau_reached([3.0, 2.0, 1.999, 1.998], 2, 0.01)  # 0.1 % better
    assert td.plateau_reached([2.0, 2.1, 2.2], 2, 0.0)  # worse: a plateau at any tolerance
    assert td.snapshot_grid(0) == [0]
    assert td.snapshot_grid(450) == [0, 10, 30, 100, 300, 450]
    assert td.snapshot_grid(3000) == [0, 10, 30, 100, 300, 1000, 3000]


def test_train_to_plateau_is_train_tiny_decoder_and_resumes(tmp_path):
    from attention_geometry.checkpoint import CheckpointStore

    cfg = td.TinyDecoderConfig(max_len=64)
    held = td.byte_windows(TEXT, 3, 33, 33, seed=1)
    never = td.Plateau(eval_every=4, evals=100, tol=0.0)  # too few measurements for a plateau: up to the cap
    run = td.train_to_plateau(cfg, TEXT, held, TINY, never, seed=3)
    _, losses = td.train_tiny_decoder(cfg, TEXT, TINY, seed=3)
    np.testing.assert_array_equal(run.losses, losses)  # the same steps, bit for bit
    assert not run.plateau and run.steps == 12 and sorted(run.snapshots) == [0, 10, 12]
    assert list(run.held_steps) == [0, 4, 8, 10, 12] and run.held.shape == (5, 3)
    np.testing.assert_allclose(run.held_at(12), td.sequence_losses(run.model, held), rtol=1e-6)
    start = td.snapshot_model(run, 0)
    for a, b in zip(start.parameters(), td.TinyDecoder(cfg, 3).parameters()):
        torch.testing.assert_close(a, b)
    store = CheckpointStore(tmp_path)  # interrupted at step 7, resumed to 12
    td.train_to_plateau(cfg, TEXT, held, td.TinyTraining(**{**TINY.__dict__, "steps": 7}), never, 3, store=store)
    resumed = td.train_to_plateau(cfg, TEXT, held, TINY, never, 3, store=store)
    np.testing.assert_allclose(resumed.losses, losses, rtol=1e-6)
    for a, b in zip(resumed.model.parameters(), run.model.parameters()):
        torch.testing.assert_close(a, b)
    always = td.Plateau(eval_every=4, evals=1, tol=1.0)  # any measurement after the first is a plateau
    stopped = td.train_to_plateau(cfg, TEXT, held, TINY, always, seed=3)
    assert stopped.plateau and stopped.steps == 4 and 4 in stopped.snapshots
    along = td.snapshot_selectability(stopped, held[:2], ("normed", "keys"))
    assert sorted(along) == [0, 4] and along[4]["keys"].shape == (2, 4)


def test_centring_in_float32_lifts_keys_off_the_hyperplane_and_makes_them_selectable():
    """Points centred in float32 are about 1e-7 off H: at the test's tolerance that is one more
    dimension, so fewer keys are unselectable than when the same points are centred exactly, whose
    fraction is that of Gaussian sets in d - 1 dimensions; without the rounding nothing changes."""
    out = sel.centring_rounding_percent([300] * 6, 8, np.random.default_rng(0))
    assert out.shape == (6, 2) and np.all(out[:, 0] >= out[:, 1]) and (out[:, 0] - out[:, 1]).mean() > 3
    in_h = sel.gaussian_percent([300] * 6, 7, np.random.default_rng(1))  # the exact column's reference
    assert abs(out[:, 0].mean() - in_h.mean()) < 4 * np.hypot(out[:, 0].std(ddof=1), in_h.std(ddof=1)) / np.sqrt(6)
    x = np.random.default_rng(2).standard_normal((300, 8))
    centred = x - x.mean(1, keepdims=True)
    from attention_geometry import hyperplane_basis
    basis = hyperplane_basis(8)
    assert sel.percent_unselectable(centred)[0] == sel.percent_unselectable(centred @ basis)[0]  # exact: d - 1 dims
