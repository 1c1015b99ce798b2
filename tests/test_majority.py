"""The majority task, the proposition on uniform attention, the norm variants and training."""

import math

import numpy as np
import pytest
import torch

from attention_geometry.majority import (
    NORM_VARIANTS,
    angle_to_ones,
    attention_norm,
    effective_queries,
    init_majority_params,
    majority_counts,
    majority_data,
    majority_forward,
    majority_forward_counts,
    majority_labels,
    majority_margin,
    steps_to_reach,
    train_majority,
    train_majority_per_seed,
)

SMALL = dict(n_classes=5, length=9, d=6, n_train=32, batch=None, n_test=16, eval_every=5)


def test_majority_labels_by_hand():
    tokens = torch.tensor([[0, 1, 1, 2, 1], [3, 3, 0, 0, 0], [2, 2, 2, 2, 2]])
    assert majority_labels(tokens, 4).tolist() == [1, 0, 2]


@pytest.mark.parametrize("margin", [1, 6, 50])
def test_majority_data_has_the_margin_and_is_deterministic(margin):
    g = torch.Generator().manual_seed(0)
    tokens, labels = majority_data(20, 50, 300, g, min_margin=margin)
    assert tokens.shape == (300, 50) and labels.shape == (300,)
    counts = majority_counts(tokens, 20)
    assert (majority_margin(counts) >= margin).all()
    assert torch.equal(labels, majority_labels(tokens, 20))
    again, _ = majority_data(20, 50, 300, torch.Generator().manual_seed(0), min_margin=margin)
    assert torch.equal(tokens, again)


def test_layernorm_keys_make_a_query_along_one_attend_uniformly():
    """The proposition: keys after LN are orthogonal to 1, so q = c 1 scores all
    keys equally, and adding c 1 to any query leaves its scores unchanged."""
    g = torch.Generator().manual_seed(1)
    keys = attention_norm(torch.randn(40, 16, generator=g, dtype=torch.float64), "layernorm")
    ones = torch.ones(16, dtype=torch.float64)
    scores = keys @ (3.7 * ones)
    assert torch.allclose(scores, torch.zeros_like(scores), atol=1e-12)
    att = torch.softmax(scores, 0)
    assert torch.allclose(att, torch.full_like(att, 1 / 40), atol=1e-14)
    q = torch.randn(16, generator=g, dtype=torch.float64)
    for c in (-5.0, 0.3, 100.0):
        assert torch.allclose(keys @ (q + c * ones), keys @ q, atol=1e-10)
    # without projection a query along 1 does not score the keys equally
    raw = attention_norm(torch.randn(40, 16, generator=g, dtype=torch.float64), "rmsnorm")
    assert (raw @ ones).std() > 0.1


@pytest.mark.parametrize("d", [3, 8, 64])
def test_norm_variants(d):
    x = torch.randn(500, d, generator=torch.Generator().manual_seed(d), dtype=torch.float64) * 3 + 1
    ln, sc, pc = (attention_norm(x, v) for v in NORM_VARIANTS)
    ones = torch.ones(d, dtype=torch.float64)
    assert torch.allclose(ln @ ones, torch.zeros(500, dtype=torch.float64), atol=1e-9)
    assert torch.allclose(ln.norm(dim=-1), torch.full((500,), math.sqrt(d), dtype=torch.float64), rtol=1e-4)
    assert torch.allclose(sc.norm(dim=-1), torch.full((500,), math.sqrt(d), dtype=torch.float64), rtol=1e-4)
    assert (sc @ ones).abs().max() > 0.1  # not projected
    # the original code's variant: divides by sqrt(d) where rmsnorm multiplies
    assert torch.allclose(pc.norm(dim=-1), torch.full((500,), 1 / math.sqrt(d), dtype=torch.float64), rtol=1e-4)
    assert torch.allclose(pc * d, sc)  # same direction, d times shorter: logits d^2 smaller


def test_angle_to_ones():
    d = 4
    assert angle_to_ones(torch.ones(d)).item() == pytest.approx(0.0, abs=1e-3)
    assert angle_to_ones(-torch.ones(d)).item() == pytest.approx(0.0, abs=1e-3)
    assert angle_to_ones(torch.tensor([1.0, -1.0, 0.0, 0.0])).item() == pytest.approx(90.0)


def test_forward_shapes_and_attention_rows():
    gens = [torch.Generator().manual_seed(s) for s in (0, 1)]
    params = init_majority_params(5, 6, gens)
    tokens = torch.stack([majority_data(5, 9, 4, g)[0] for g in gens])
    out = majority_forward(params, tokens, "layernorm")
    assert out.logits.shape == (2, 4, 9, 5)
    assert out.attention.shape == (2, 4, 9, 9)
    assert torch.allclose(out.attention.sum(-1), torch.ones(2, 4, 9), atol=1e-6)
    u = effective_queries(params, out.normed)
    assert u.shape == (2, 4, 9, 6)
    # scores = u . n_j / sqrt(d), recomputed from the effective query
    scores = u @ out.normed.transpose(-1, -2) / math.sqrt(6)
    assert torch.allclose(torch.softmax(scores, -1), out.attention, atol=1e-5)


def test_layernorm_freezes_the_ones_component_of_the_keys():
    """Keys see only inputs orthogonal to 1, so the gradient of W_K annihilates 1."""
    gens = [torch.Generator().manual_seed(3)]
    params = init_majority_params(5, 6, gens)
    tokens, labels = majority_data(5, 9, 8, gens[0])
    out = majority_forward(params, tokens[None], "layernorm")
    torch.nn.functional.cross_entropy(out.logits.reshape(-1, 5), labels.repeat_interleave(9)).backward()
    assert torch.allclose(params["W_K"].grad[0] @ torch.ones(6), torch.zeros(6), atol=1e-6)


def test_counts_forward_equals_token_forward():
    """Permutation equivariance: the count-vector model is the token model."""
    gens = [torch.Generator().manual_seed(s) for s in (7, 8)]
    params = init_majority_params(6, 5, gens)
    tokens = torch.stack([majority_data(6, 11, 4, g, 2)[0] for g in gens])  # (S, N, n)
    for norm in NORM_VARIANTS:
        ref = majority_forward(params, tokens, norm)
        out = majority_forward_counts(params, majority_counts(tokens, 6), norm)
        idx = tokens[..., None].expand(-1, -1, -1, 6)  # position i holds class t_i
        assert torch.allclose(out.logits.gather(2, idx), ref.logits, atol=1e-5)
        # total attention of position i on class b = sum of its attention on b's positions
        per_class = torch.zeros(2, 4, 11, 6).scatter_add_(-1, tokens[:, :, None, :].expand(-1, -1, 11, -1),
                                                          ref.attention)
        assert torch.allclose(out.attention.gather(2, idx), per_class, atol=1e-6)


def test_fresh_batches_and_minibatches_train():
    for n_train in (None, 64):
        run = train_majority("rmsnorm", [0], steps=20, lr=1e-2, **{**SMALL, "n_train": n_train, "batch": 16})
        assert run.loss[0, -1] < run.loss[0, 0]


def test_steps_to_reach():
    steps = np.array([0, 10, 20])
    curve = np.array([[3.0, 0.4, 0.1], [3.0, 2.0, 1.0]])
    out = steps_to_reach(steps, curve, 0.5)
    assert out[0] == 10 and np.isnan(out[1])


def test_short_training_decreases_the_loss_and_is_deterministic():
    run = train_majority("layernorm", [0, 1], steps=30, lr=1e-2, **SMALL)
    assert run.loss.shape == (2, len(run.steps)) and run.steps[0] == 0 and run.steps[-1] == 30
    assert (run.loss[:, -1] < run.loss[:, 0] - 0.05).all()
    assert ((0 <= run.test_accuracy) & (run.test_accuracy <= 1)).all()
    assert ((0 <= run.angle) & (run.angle <= 90)).all()
    assert ((0 <= run.entropy) & (run.entropy <= 1 + 1e-6)).all()
    assert (run.score_scale >= 0).all()
    again = train_majority("layernorm", [0, 1], steps=30, lr=1e-2, **SMALL)
    np.testing.assert_array_equal(run.loss, again.loss)


@pytest.mark.parametrize("norm", NORM_VARIANTS)
def test_seeds_in_parallel_equal_seeds_one_by_one(norm):
    kwargs = {**SMALL, "batch": 8, "min_margin": 2}  # mini-batches drawn per seed
    batched = train_majority(norm, [4, 5, 6], steps=10, lr=1e-2, **kwargs)
    loop = train_majority_per_seed(norm, [4, 5, 6], steps=10, lr=1e-2, **kwargs)
    np.testing.assert_allclose(batched.loss, loop.loss, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(batched.test_accuracy, loop.test_accuracy, atol=1e-6)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(norm="batchnorm"), "norm = 'batchnorm'"),
        (dict(seeds=[]), "seeds is empty"),
        (dict(steps=0), "steps = 0"),
        (dict(lr=-1.0), "lr = -1.0"),
        (dict(d=1), "d = 1"),
        (dict(n_classes=1), "n_classes = 1"),
        (dict(length=2.5), "length = 2.5"),
        (dict(threads=0), "threads = 0"),
        (dict(min_margin=10), "min_margin = 10"),
        (dict(n_train=None, batch=None), "batch = None and n_train = None"),
    ],
)
def test_bad_arguments_raise(kwargs, fragment):
    args = dict(norm="layernorm", seeds=[0], steps=1, **SMALL)
    args.update(kwargs)
    with pytest.raises(ValueError, match=fragment):
        train_majority(args.pop("norm"), args.pop("seeds"), **args)


def test_bad_variant_and_shapes_raise():
    with pytest.raises(ValueError, match="norm = 'rms'"):
        attention_norm(torch.zeros(2, 3), "rms")
    params = init_majority_params(5, 6, [torch.Generator().manual_seed(0)])
    with pytest.raises(ValueError, match="tokens has shape"):
        majority_forward(params, torch.zeros(2, 4, 9, dtype=torch.long), "layernorm")
