"""The majority task as the original code builds it, the proposition on uniform attention,
the norm variants, the model (token and count forms), training, checkpoints and the
confound statistics."""

import math

import numpy as np
import pytest
import torch

from attention_geometry import majority as M
from attention_geometry.checkpoint import CheckpointStore
from attention_geometry.majority import training as MT
from attention_geometry.verdicts import angle_verdict
from attention_geometry.words import share_words
from attention_geometry.majority import (
    NORM_VARIANTS,
    MajoritySetup,
    angle_to_ones,
    attention_norm,
    confound_share,
    counts_to_tokens,
    effective_queries,
    init_majority_params,
    majority_counts,
    majority_forward,
    majority_forward_counts,
    majority_labels,
    majority_loss,
    majority_lr,
    majority_margin,
    partition_majority_data,
    possible_smallest_parts,
    steps_to_reach,
    stratified_split,
    train_majority,
    train_majority_per_seed,
)

SMALL = MajoritySetup(n_classes=5, length=12, d=6, min_margin=2, n_sequences=300, batch=32, steps=10,
                      lr=1e-2, eval_every=5, checkpoint_every=4)


def _counts_loss(params, counts, labels, norm):
    """The loss from the full count-form forward pass (every class of every sequence)."""
    out = majority_forward_counts(params, counts, norm)
    S, N, C, _ = out.logits.shape
    ce = torch.nn.functional.cross_entropy(out.logits.reshape(-1, C), labels[:, :, None].expand(S, N, C).reshape(-1),
                                           reduction="none").view(S, N, C)
    return (ce * counts).sum((1, 2)) / counts.sum((1, 2))


# --------------------------------------------------------------------- data


def test_majority_labels_by_hand():
    tokens = torch.tensor([[0, 1, 1, 2, 1], [3, 3, 0, 0, 0], [2, 2, 2, 2, 2]])
    assert majority_labels(tokens, 4).tolist() == [1, 0, 2]
    assert majority_margin(majority_counts(tokens, 4)).tolist() == [2, 1, 5]


def _original_partition(n, smallest, slices, rng=None):
    """The original's nested generators (majority_exp.py's ``partition``), each level's
    choices shuffled by ``rng``; ``rng=None``: unshuffled, in increasing order."""
    if n == 0:
        yield []
        return
    if slices == 1:
        yield [n]
        return
    firsts = np.arange(smallest, n + 1)
    if rng is not None:
        rng.shuffle(firsts)
    for i in firsts.tolist():
        for rest in _original_partition(n - i, i, slices - 1, rng):
            yield [i, *rest]


def _partition_reference(n, smallest, slices):
    """All partitions the original's generator can produce (unshuffled)."""
    return list(_original_partition(n, smallest, slices))


@pytest.mark.parametrize("length, classes, margin", [(16, 6, 3), (12, 5, 2), (10, 10, 1)])
def test_partition_data_is_the_original_construction(length, classes, margin):
    counts, labels = partition_majority_data(length, classes, 2000, margin, np.random.default_rng(0))
    assert counts.shape[1] == classes and (counts.sum(1) == length).all()
    assert torch.equal(labels, counts.argmax(1))
    assert (majority_margin(counts) >= margin).all()
    valid = {tuple(p) for p in _partition_reference(length, 1, min(length, classes))
             if len(p) > 1 and p[-1] - p[-2] >= margin}
    n_expected = 10 * min(2000 // 10 + 1, len(valid))  # stops once the sequences number more than 2000
    assert len(counts) == n_expected
    # every sequence's sorted non-zero counts is a kept partition, ten sequences per partition
    parts = [tuple(sorted(c[c > 0].tolist())) for c in counts]
    assert all(p in {tuple(sorted(v)) for v in valid} for p in parts)
    assert all(parts[10 * i] == parts[10 * i + j] for i in range(len(parts) // 10) for j in range(10))
    again, _ = partition_majority_data(length, classes, 2000, margin, np.random.default_rng(0))
    assert torch.equal(counts, again)


def _original_gen_data(length, classes, n_sequences, margin, rng, per_partition=10):
    """The original's ``gen_X`` + ``gen_data`` as counts, one partition at a time."""
    rows, labels = [], []
    for part in _original_partition(length, 1, min(length, classes), rng):
        if len(part) == 1 or part[-1] - part[-2] < margin:
            continue
        perms = rng.permuted(np.tile(np.arange(classes), (per_partition, 1)), axis=1)[:, : len(part)]
        counts = np.zeros((per_partition, classes), dtype=np.int64)
        np.put_along_axis(counts, perms, np.asarray(part)[None], axis=1)
        rows.append(counts)
        labels.append(perms[:, -1])
        if len(rows) * per_partition > n_sequences:
            break
    return torch.from_numpy(np.concatenate(rows)), torch.from_numpy(np.concatenate(labels))


@pytest.mark.parametrize("length, classes, n_sequences, margin", [(50, 20, 100_000, 6), (30, 10, 100_000, 6),
                                                                  (12, 5, 50, 2), (9, 5, 30, 1), (20, 20, 5000, 3)])
def test_partition_data_draws_what_the_originals_nested_generators_draw(length, classes, n_sequences, margin):
    for seed in (0, 7):
        counts, labels = partition_majority_data(length, classes, n_sequences, margin, np.random.default_rng(seed))
        ref_counts, ref_labels = _original_gen_data(length, classes, n_sequences, margin, np.random.default_rng(seed))
        assert torch.equal(counts, ref_counts) and torch.equal(labels, ref_labels)


@pytest.mark.parametrize("length, classes, margin", [(16, 6, 3), (12, 5, 2), (10, 10, 1), (11, 2, 4), (9, 3, 9)])
def test_possible_smallest_parts_counts_what_a_full_enumeration_visits(length, classes, margin):
    kept = [p for p in _partition_reference(length, 1, min(length, classes)) if len(p) > 1 and p[-1] - p[-2] >= margin]
    assert possible_smallest_parts(length, classes, margin) == len({p[0] for p in kept})


def test_partition_data_sizes_of_the_paper():
    counts, labels = partition_majority_data(50, 20, 100_000, 6, np.random.default_rng(1))
    assert counts.shape == (100_010, 20) and (counts.sum(1) == 50).all()
    assert (majority_margin(counts) >= 6).all() and torch.equal(labels, counts.argmax(1))


def test_counts_to_tokens_inverts_counts():
    counts, _ = partition_majority_data(12, 5, 50, 2, np.random.default_rng(2))
    tokens = counts_to_tokens(counts)
    assert tokens.shape == (len(counts), 12)
    assert torch.equal(majority_counts(tokens, 5), counts)


@pytest.mark.parametrize("n, fraction", [(100_010, 0.8), (97, 0.8), (50, 0.5)])
def test_stratified_split(n, fraction):
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 7, n)
    train, test = stratified_split(labels, fraction, rng)
    assert len(train) == math.floor(fraction * n) and len(train) + len(test) == n
    assert len(np.intersect1d(train, test)) == 0 and len(np.union1d(train, test)) == n
    for c in range(7):  # each label's share in the test set: its share overall, to within one item
        assert abs((labels[test] == c).sum() - (labels == c).sum() * len(test) / n) <= 1


# ----------------------------------------------------------- the proposition


def test_layernorm_keys_make_a_query_along_one_attend_uniformly():
    """Keys after LN are orthogonal to 1: q = c 1 scores all keys equally, and adding
    c 1 to any query leaves its scores unchanged."""
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
    raw = attention_norm(torch.randn(40, 16, generator=g, dtype=torch.float64), "rmsnorm")
    assert (raw @ ones).std() > 0.1  # without projection a query along 1 does not score them equally


def test_only_multiples_of_one_give_equal_scores_when_differences_span_h():
    """Part 3: if the key differences span H, the queries with equal scores are the multiples of 1."""
    g = torch.Generator().manual_seed(2)
    d = 6
    keys = attention_norm(torch.randn(10, d, generator=g, dtype=torch.float64), "layernorm")
    diffs = keys[1:] - keys[0]
    assert torch.linalg.matrix_rank(diffs) == d - 1  # they span H
    null = torch.linalg.svd(diffs).Vh[-1]  # the queries orthogonal to every difference
    assert torch.allclose(null.abs(), torch.full((d,), 1 / math.sqrt(d), dtype=torch.float64), atol=1e-12)
    raw = attention_norm(torch.randn(10, d, generator=g, dtype=torch.float64), "rmsnorm")
    assert torch.linalg.matrix_rank(raw[1:] - raw[0]) == d  # spans R^d: only u = 0


@pytest.mark.parametrize("d", [3, 8, 64])
def test_norm_variants(d):
    x = torch.randn(500, d, generator=torch.Generator().manual_seed(d), dtype=torch.float64) * 3 + 1
    ln, sc, pc = (attention_norm(x, v) for v in NORM_VARIANTS)
    ones = torch.ones(d, dtype=torch.float64)
    assert torch.allclose(ln @ ones, torch.zeros(500, dtype=torch.float64), atol=1e-9)
    assert torch.allclose(ln.norm(dim=-1), torch.full((500,), math.sqrt(d), dtype=torch.float64), rtol=1e-10)
    assert torch.allclose(sc.norm(dim=-1), torch.full((500,), math.sqrt(d), dtype=torch.float64), rtol=1e-10)
    assert (sc @ ones).abs().max() > 0.1  # not projected
    # the original code's variant: normalize(x) / sqrt(d), d times shorter than the fair control
    expected = torch.nn.functional.normalize(x, dim=-1) / math.sqrt(d)
    assert torch.allclose(pc, expected, atol=1e-14)
    assert torch.allclose(pc * d, sc)


def test_angle_to_ones():
    d = 4
    assert angle_to_ones(torch.ones(d)).item() == pytest.approx(0.0, abs=1e-3)
    assert angle_to_ones(-torch.ones(d)).item() == pytest.approx(0.0, abs=1e-3)
    assert angle_to_ones(torch.tensor([1.0, -1.0, 0.0, 0.0])).item() == pytest.approx(90.0)
    u = torch.tensor([1.0, 2.0, 0.0, -0.5])  # the original's 90 - |angle(u, 1) - 90|
    cos = torch.nn.functional.cosine_similarity(u, torch.ones(d), dim=0)
    original = 90 - torch.abs(torch.rad2deg(torch.acos(cos)) - 90)
    assert angle_to_ones(u).item() == pytest.approx(original.item(), abs=1e-4)


# -------------------------------------------------------------------- model


def test_init_follows_pytorch_defaults():
    params = init_majority_params(20, 8, [torch.Generator().manual_seed(s) for s in range(3)])
    assert params["E"].shape == (3, 20, 8) and params["W_Q"].shape == (3, 8, 8)
    bound = math.sqrt(6 / (4 * 8))  # Xavier-uniform on the (3d, d) in_proj_weight
    for k in ("W_Q", "W_K", "W_V"):
        assert params[k].abs().max() <= bound
    for k in ("W_O", "W_1", "W_2", "b_1", "b_2"):
        assert params[k].abs().max() <= 1 / math.sqrt(8)
    assert (params["b_O"] == 0).all() and (params["gamma"] == 1).all() and (params["beta"] == 0).all()
    assert abs(params["E"].std().item() - 1) < 0.15
    assert not torch.equal(params["E"][0], params["E"][1])  # one generator per seed


def test_forward_shapes_and_attention_rows():
    gens = [torch.Generator().manual_seed(s) for s in (0, 1)]
    params = init_majority_params(5, 6, gens)
    counts, _ = partition_majority_data(9, 5, 30, 1, np.random.default_rng(0))
    tokens = counts_to_tokens(counts[:4]).expand(2, -1, -1)
    out = majority_forward(params, tokens, "layernorm")
    assert out.logits.shape == (2, 4, 9, 5) and out.attention.shape == (2, 4, 9, 9)
    assert torch.allclose(out.attention.sum(-1), torch.ones(2, 4, 9), atol=1e-6)
    u = effective_queries(params, out.normed)
    scores = u @ out.normed.transpose(-1, -2) / math.sqrt(6)  # eq-ua-effective-query
    assert torch.allclose(torch.softmax(scores, -1), out.attention, atol=1e-5)


def test_layernorm_freezes_the_ones_component_of_the_keys():
    """Keys see only inputs orthogonal to 1, so the gradient of W_K annihilates 1."""
    params = init_majority_params(5, 6, [torch.Generator().manual_seed(3)])
    counts, labels = partition_majority_data(9, 5, 30, 1, np.random.default_rng(3))
    out = majority_forward(params, counts_to_tokens(counts)[None], "layernorm")
    torch.nn.functional.cross_entropy(out.logits.reshape(-1, 5), labels.repeat_interleave(9)).backward()
    assert torch.allclose(params["W_K"].grad[0] @ torch.ones(6), torch.zeros(6), atol=1e-6)


@pytest.mark.parametrize("norm", NORM_VARIANTS)
def test_counts_forward_and_loss_equal_the_token_model(norm):
    """Permutation equivariance: the count-vector model is the token model, and the
    training loss on the occurring (sequence, class) pairs is the full loss."""
    gens = [torch.Generator().manual_seed(s) for s in (7, 8)]
    params = init_majority_params(6, 5, gens)
    data = [partition_majority_data(11, 6, 40, 2, np.random.default_rng(s)) for s in (7, 8)]
    counts = torch.stack([c[:8] for c, _ in data])  # (S, N, C)
    labels = torch.stack([y[:8] for _, y in data])
    tokens = torch.stack([counts_to_tokens(c) for c in counts])  # (S, N, n)
    ref = majority_forward(params, tokens, norm)
    out = majority_forward_counts(params, counts, norm)
    idx = tokens[..., None].expand(-1, -1, -1, 6)  # position i holds class t_i
    assert torch.allclose(out.logits.gather(2, idx), ref.logits, atol=1e-5)
    ce = torch.nn.functional.cross_entropy(ref.logits.reshape(-1, 6), labels[:, :, None].expand(2, 8, 11).reshape(-1),
                                           reduction="none").view(2, -1).mean(1)
    assert torch.allclose(majority_loss(params, counts.float(), labels, norm), ce, atol=1e-5)
    assert torch.allclose(_counts_loss(params, counts.float(), labels, norm), ce, atol=1e-5)


def test_learning_rate_schedule_is_the_originals():
    setup = MajoritySetup(lr=1e-3, lr_decay_epochs=10_000)
    assert majority_lr(0, setup, 14) == pytest.approx(1e-3)
    assert majority_lr(14_000, setup, 14) == pytest.approx(0.9e-3)  # 10 % of the way after 1000 epochs
    assert majority_lr(140_000, setup, 14) == 0.0
    assert majority_lr(5, MajoritySetup(lr=0.5, lr_decay_epochs=0), 14) == 0.5


# ----------------------------------------------------------------- training


def test_short_training_decreases_the_loss_and_is_deterministic():
    run = train_majority("layernorm", [0, 1], SMALL)
    assert run.loss.shape == (2, len(run.steps)) and run.steps[0] == 0 and run.steps[-1] == SMALL.steps
    assert np.isnan(run.loss[:, 0]).all() and np.isfinite(run.loss[:, 1:]).all()
    assert (run.test_loss[:, -1] < run.test_loss[:, 0]).all()
    assert ((0 <= run.test_accuracy) & (run.test_accuracy <= 1)).all()
    assert ((0 <= run.angle) & (run.angle <= 90)).all()
    assert ((0 <= run.entropy) & (run.entropy <= 1 + 1e-6)).all()
    assert run.keys.shape == run.queries.shape == (2, 5, 6)
    assert run.n_train + run.n_test == 290 and run.n_train == 232  # the 29 partitions of 12 with a lead of 2
    np.testing.assert_allclose(run.final["test_accuracy"], run.test_accuracy[:, -1], atol=1e-6)
    again = train_majority("layernorm", [0, 1], SMALL)
    np.testing.assert_array_equal(run.test_loss, again.test_loss)


def test_epochs_visit_every_training_sequence_once():
    setup = MajoritySetup(**{**SMALL.__dict__, "batch": 100})  # 232 training sequences: 100, 100, 32
    tr = MT._Trainer("rmsnorm", [0], setup, CheckpointStore(None), False)
    tr._fresh()
    seen = []
    for _ in range(3):
        counts, _ = tr._batch()
        seen.append(counts.shape[1])
        tr.step += 1
    assert seen == [100, 100, 32] and tr.per_epoch == 3
    assert sorted(tr.perm[0].tolist()) == list(range(232))


@pytest.mark.parametrize("norm", NORM_VARIANTS)
def test_seeds_in_parallel_equal_seeds_one_by_one(norm):
    batched = train_majority(norm, [4, 5, 6], SMALL)
    loop = train_majority_per_seed(norm, [4, 5, 6], SMALL)
    np.testing.assert_allclose(batched.test_loss, loop.test_loss, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(batched.test_accuracy, loop.test_accuracy, atol=1e-5)


def test_seed_groups_equal_one_call_per_variant(tmp_path):
    grouped = M.train_majority_groups(["layernorm", "original_code"], [0, 1, 2], SMALL, group_size=2,
                                      store=CheckpointStore(tmp_path))
    assert len(list(tmp_path.iterdir())) == 4  # two groups x two variants
    for norm, run in grouped.items():
        whole = train_majority(norm, [0, 1, 2], SMALL)
        assert run.seeds == (0, 1, 2)
        np.testing.assert_allclose(run.test_loss, whole.test_loss, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(run.final["test_accuracy"], whole.final["test_accuracy"], atol=1e-5)
        assert run.keys.shape == (3, 5, 6)


def test_a_seed_stops_when_its_test_accuracy_is_reached():
    setup = MajoritySetup(**{**SMALL.__dict__, "stop_at_accuracy": 0.01, "steps": 6, "eval_every": 2})
    run = train_majority("layernorm", [0, 1], setup)
    assert (run.stopped == 0).all()  # reached at the first evaluation: never trained
    fresh = init_majority_params(5, 6, [torch.Generator().manual_seed(s) for s in (0, 1)])
    with torch.no_grad():
        keys = attention_norm(fresh["E"], "layernorm")
    np.testing.assert_allclose(run.keys, keys.numpy(), atol=1e-6)
    np.testing.assert_allclose(run.test_loss[:, -1], run.test_loss[:, 0], atol=1e-6)


def test_checkpointed_training_resumes_to_the_same_result(tmp_path):
    store = CheckpointStore(tmp_path)
    whole = train_majority("rmsnorm", [0, 1], MajoritySetup(**{**SMALL.__dict__, "steps": 20}))
    first = train_majority("rmsnorm", [0, 1], SMALL, store=store)  # 10 steps, saved
    assert first.steps[-1] == 10 and any(tmp_path.iterdir())
    resumed = train_majority("rmsnorm", [0, 1], MajoritySetup(**{**SMALL.__dict__, "steps": 20}), store=store)
    np.testing.assert_array_equal(resumed.steps, whole.steps)
    np.testing.assert_allclose(resumed.test_loss, whole.test_loss, rtol=1e-6)
    np.testing.assert_allclose(resumed.queries, whole.queries, rtol=1e-5, atol=1e-7)
    # a shorter run does not overwrite the longer checkpoint
    train_majority("rmsnorm", [0, 1], MajoritySetup(**{**SMALL.__dict__, "steps": 4}), store=store)
    again = train_majority("rmsnorm", [0, 1], MajoritySetup(**{**SMALL.__dict__, "steps": 20}), store=store)
    np.testing.assert_array_equal(again.test_loss, resumed.test_loss)


def test_a_continued_run_starts_from_the_shorter_run_and_leaves_its_checkpoint(tmp_path, monkeypatch):
    """``continued``: 10 steps, then 20 continued from them, give the curves of one 20-step run; the
    10-step run still finds its own state (no retraining), and a continued run resumes its own."""
    store = CheckpointStore(tmp_path)
    longer = MajoritySetup(**{**SMALL.__dict__, "steps": 20})
    whole = train_majority("rmsnorm", [0, 1], longer)
    first = train_majority("rmsnorm", [0, 1], SMALL, store=store)
    continued = train_majority("rmsnorm", [0, 1], longer, store=store, continued=True)
    np.testing.assert_array_equal(continued.steps, whole.steps)
    np.testing.assert_allclose(continued.test_loss, whole.test_loss, rtol=1e-6)
    steps = []
    monkeypatch.setattr(MT._Trainer, "_train_step", lambda self: steps.append(1) or (_ for _ in ()).throw(
        AssertionError("trained again")))
    again = train_majority("rmsnorm", [0, 1], SMALL, store=store)  # the shorter run's own state, untouched
    np.testing.assert_array_equal(again.queries, first.queries)
    resumed = train_majority("rmsnorm", [0, 1], longer, store=store, continued=True)  # its own checkpoint
    np.testing.assert_array_equal(resumed.test_loss, continued.test_loss)
    assert steps == []
    groups = MT.train_majority_groups(["rmsnorm"], [0, 1], longer, store=store, continued=True)
    np.testing.assert_array_equal(groups["rmsnorm"].test_loss, continued.test_loss)


def test_a_checkpoint_keeps_the_epoch_order_in_int32_and_resumes_from_an_int64_one(tmp_path):
    import torch

    setup20 = MajoritySetup(**{**SMALL.__dict__, "steps": 20})
    whole = train_majority("layernorm", [0, 1], setup20)
    store = CheckpointStore(tmp_path)
    train_majority("layernorm", [0, 1], SMALL, store=store)  # 10 steps: mid-epoch (300 sequences, batch 32)
    (path,) = [p for p in tmp_path.iterdir() if p.suffix == ".pt"]
    record = torch.load(path, weights_only=False)
    assert record["state"]["perm"].dtype == torch.int32
    record["state"]["perm"] = record["state"]["perm"].long()  # as older checkpoints hold it
    torch.save(record, path)
    resumed = train_majority("layernorm", [0, 1], setup20, store=store)
    np.testing.assert_allclose(resumed.test_loss, whole.test_loss, rtol=1e-6)


def test_interrupted_training_resumes(tmp_path, monkeypatch):
    store = CheckpointStore(tmp_path)
    setup = MajoritySetup(**{**SMALL.__dict__, "steps": 12})
    whole = train_majority("layernorm", [3], setup)
    real_step, calls = MT._Trainer._train_step, {"n": 0}

    def dying_step(self):
        calls["n"] += 1
        if calls["n"] == 10:
            raise KeyboardInterrupt
        real_step(self)

    monkeypatch.setattr(MT._Trainer, "_train_step", dying_step)
    with pytest.raises(KeyboardInterrupt):
        train_majority("layernorm", [3], setup, store=store)  # killed after step 9 (checkpoint at 8)
    monkeypatch.setattr(MT._Trainer, "_train_step", real_step)
    resumed = train_majority("layernorm", [3], setup, store=store)
    np.testing.assert_allclose(resumed.test_loss, whole.test_loss, rtol=1e-6)
    np.testing.assert_allclose(resumed.loss[:, 1:], whole.loss[:, 1:], rtol=1e-6)


def test_steps_to_reach():
    steps = np.array([0, 10, 20])
    curve = np.array([[3.0, 0.4, 0.1], [3.0, 2.0, 1.0]])
    out = steps_to_reach(steps, curve, 0.5)
    assert out[0] == 10 and np.isnan(out[1])


# ------------------------------------------------------------- the confound


def test_confound_share_exact_and_interval():
    rng = np.random.default_rng(0)
    ln = np.array([0.90, 0.92, 0.91, 0.93])
    original = ln - 0.10
    share, lo, hi = confound_share(ln, ln - 0.02, original, rng)
    assert share == pytest.approx(0.8) and lo <= 0.8 <= hi
    share, lo, hi = confound_share(ln, ln, original, rng)  # fair control as good as LayerNorm
    assert share == pytest.approx(1.0) and lo == pytest.approx(1.0) and hi == pytest.approx(1.0)


@pytest.mark.parametrize(
    "low, high, words",
    [(1.05, 1.9, "more than entirely"), (0.85, 1.1, "almost entirely"), (0.6, 0.95, "mostly"), (0.3, 0.6, "partly"), (0.05, 0.5, "partly"),
     (-0.2, 0.1, "not at all"), (0.1, 0.9, "to an undetermined extent"), (np.nan, 0.5, "to an undetermined extent")],
)
def test_share_words_can_say_each_thing(low, high, words):
    assert share_words(low, high) == words


def test_more_than_entirely_needs_the_paired_evidence_too():
    assert share_words(1.05, 2.07, fair_beats_layernorm=True) == "more than entirely"
    assert share_words(1.05, 2.07, fair_beats_layernorm=False) == "entirely"
    assert share_words(0.85, 1.1, fair_beats_layernorm=False) == "almost entirely"
    assert share_words(1.05, 2.07, fair_beats_layernorm=np.bool_(False)) == "entirely"  # numpy's bools too


def test_run_differences_name_the_seeds_only_when_they_differ():
    from attention_geometry.majority import ORIGINAL_SEEDS, MajoritySetup, run_differences

    assert run_differences(MajoritySetup(), ORIGINAL_SEEDS) == []
    assert run_differences(MajoritySetup(), 5) == [("n_seeds", 5, 10)]
    assert run_differences(MajoritySetup(steps=800), 5)[0][0] == "steps"


def test_a_preset_as_a_setup_and_its_differences_in_words():
    from attention_geometry.majority import MajoritySetup, majority_setup, run_differences
    from attention_geometry.words import differences_in_words

    setup = majority_setup({"steps": 1500, "batch": 6000, "n_seeds": 5, "seed": 0, "geo_steps": 3})
    assert setup == MajoritySetup(steps=1500)  # names that are not fields are ignored
    assert differences_in_words(run_differences(setup, 5)) == "steps 1,500 (the original: 14,000), n_seeds 5 (the original: 10)"
    assert differences_in_words([]) == "none: the original's settings"


# ---------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    "change, fragment",
    [(dict(lr=-1.0), "lr = -1.0"), (dict(d=1), "d = 1"), (dict(n_classes=1), "n_classes = 1"),
     (dict(length=2.5), "length = 2.5"), (dict(min_margin=13), "min_margin = 13"), (dict(steps=0), "steps = 0"),
     (dict(train_fraction=1.0), "train_fraction = 1.0"), (dict(stop_at_accuracy=0.0), "stop_at_accuracy")],
)
def test_bad_setup_raises(change, fragment):
    with pytest.raises(ValueError, match=fragment):
        MajoritySetup(**{**SMALL.__dict__, **change})


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="norm = 'batchnorm'"):
        train_majority("batchnorm", [0], SMALL)
    with pytest.raises(ValueError, match="seeds"):
        train_majority("layernorm", [], SMALL)
    with pytest.raises(ValueError, match="threads = 0"):
        train_majority("layernorm", [0], SMALL, threads=0)
    with pytest.raises(ValueError, match="norm = 'rms'"):
        attention_norm(torch.zeros(2, 3), "rms")
    with pytest.raises(ValueError, match="min_margin = 12"):
        partition_majority_data(12, 5, 10, 12, np.random.default_rng(0))
    params = init_majority_params(5, 6, [torch.Generator().manual_seed(0)])
    with pytest.raises(ValueError, match=r"^tokens = a tensor of shape \(2, 4, 9\) has the wrong shape; allowed: \(S=1, N, n\)$"):
        majority_forward(params, torch.zeros(2, 4, 9, dtype=torch.long), "layernorm")


@pytest.mark.parametrize("d", [2, 3, 8])
def test_random_angle_to_ones_matches_monte_carlo(d):
    z = torch.randn(200_000, d, generator=torch.Generator().manual_seed(d), dtype=torch.float64)
    angles = angle_to_ones(z).numpy()
    assert M.random_angle_to_ones(d) == pytest.approx(angles.mean(), abs=4 * angles.std() / math.sqrt(len(angles)))
    if d == 2:
        assert M.random_angle_to_ones(2) == pytest.approx(45.0, abs=1e-6)  # uniform angle on [0, 90]


def test_angle_verdict_compares_only_similar_step_counts():
    run = train_majority("layernorm", [0, 1, 2, 3], SMALL)
    assert angle_verdict(run.final["angle"], run.steps[-1], 12, 16_000).label == "not tested"
    short = angle_verdict(run.final["angle"], run.steps[-1], float(run.final["angle"].mean()), 12, atol=90)
    assert short.label == "reproduced"
    far = angle_verdict(run.final["angle"], run.steps[-1], 500.0, 12, atol=1)
    assert far.label == "differs"


def test_units_trained_in_parallel_processes_give_the_same_runs(tmp_path):
    one = M.train_majority_groups(["layernorm", "original_code"], [0, 1, 2], SMALL, group_size=2)
    two = M.train_majority_groups(["layernorm", "original_code"], [0, 1, 2], SMALL, group_size=2,
                                  store=CheckpointStore(tmp_path), workers=2)
    assert len(list(tmp_path.iterdir())) == 4  # each worker checkpoints its own unit
    for norm in one:
        assert two[norm].seeds == (0, 1, 2)
        for curve in ("test_loss", "test_accuracy", "keys", "queries", "stopped"):
            np.testing.assert_array_equal(getattr(two[norm], curve), getattr(one[norm], curve))


def test_workers_must_be_a_positive_integer():
    with pytest.raises(ValueError, match="workers"):
        M.train_majority_groups(["layernorm"], [0], SMALL, workers=0)


def test_the_d3_runs_name_each_setting_that_differs_from_the_original():
    from attention_geometry.majority import ORIGINAL_GEOMETRY, geometry_differences

    assert geometry_differences(ORIGINAL_GEOMETRY) == []
    assert geometry_differences({**ORIGINAL_GEOMETRY, "geo_steps": 500, "geo_lr": 0.01, "steps": 3}) == [
        ("geo_steps", 500, 10_000), ("geo_lr", 0.01, 0.001)]


def test_a_unit_that_fails_in_a_worker_raises_its_error(tmp_path):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    with pytest.raises(OSError):  # every unit's first checkpoint fails: the folder is a file
        M.train_majority_groups(["layernorm", "original_code"], [0, 1, 2], SMALL, group_size=2,
                                store=CheckpointStore(not_a_folder), workers=2)


def test_first_crossing_interpolates_and_says_never():
    from attention_geometry.majority import first_crossing
    steps = np.array([0.0, 10.0, 20.0, 30.0])
    curve = np.array([[np.nan, 1.0, 0.5, 0.25], [np.nan, 1.0, 0.9, 0.8]])
    out = first_crossing(steps, curve, [0.75, 0.5])
    assert out[0] == pytest.approx(15.0)  # halfway between 1.0 at 10 and 0.5 at 20
    assert np.isnan(out[1])


def test_step_ratio_on_curves_of_known_speed():
    from attention_geometry.majority import step_ratio
    steps = np.arange(0, 101, 10.0)
    ref = np.exp(-steps / 10.0)[None, :].repeat(2, 0)  # the other is 3 times slower, exactly
    other = np.exp(-steps / 30.0)[None, :].repeat(2, 0)
    ratio, censored, bound = step_ratio(steps, ref, other, at=2)
    assert not censored.any() and bound == pytest.approx(5.0)
    assert ratio == pytest.approx(3.0, rel=0.02)  # interpolation between records, exp is convex
    ratio, censored, bound = step_ratio(steps, ref, np.exp(-steps / 300.0)[None, :].repeat(2, 0), at=2)
    assert censored.all() and ratio == pytest.approx([bound, bound])
    acc_ref, acc_other = 1 - ref, 1 - other  # rising curves: the same ratio
    ratio, _, _ = step_ratio(steps, acc_ref, acc_other, at=2, rising=True)
    assert ratio == pytest.approx(3.0, rel=0.02)


def test_step_ratio_to_a_fixed_level():
    """A figure's own level (the dashed line of the paper's Fig. 2a): the same ratio as the reference's
    level where they coincide; a censored seed gets its own lower bound; a reference that never gets
    there gives no ratio and is not counted as censored; exactly one of ``at`` and ``level``."""
    from attention_geometry.majority import step_ratio
    steps = np.arange(0, 101, 10.0)
    ref = np.exp(-steps / 10.0)[None, :].repeat(3, 0)
    other = np.exp(-steps / 30.0)[None, :].repeat(3, 0)
    ref[2] = 0.5  # never falls to the level
    other[1] = np.exp(-steps / 300.0)  # never gets there within the run
    ratio, censored, bound = step_ratio(steps, ref, other, level=np.exp(-2.0))
    assert ratio[0] == pytest.approx(3.0, rel=0.02) and np.isnan(ratio[2])
    assert censored.tolist() == [False, True, False]
    assert ratio[1] == pytest.approx(bound) and bound == pytest.approx(100 / 20, rel=0.05)
    assert step_ratio(steps, ref, other, level=np.exp(-2.0))[0][0] == pytest.approx(
        step_ratio(steps, ref, other, at=2)[0][0])
    ratio, _, _ = step_ratio(steps, 1 - ref, 1 - other, level=1 - np.exp(-2.0), rising=True)
    assert ratio[0] == pytest.approx(3.0, rel=0.02)
    with pytest.raises(ValueError):
        step_ratio(steps, ref, other)
    with pytest.raises(ValueError):
        step_ratio(steps, ref, other, at=2, level=0.2)


def test_query_components_split_along_ones_and_across():
    from attention_geometry.majority import query_components
    d = 4
    ones = np.ones(d)
    across_dir = np.array([1.0, -1.0, 0.0, 0.0]) / math.sqrt(2)
    q = (3.0 * ones / math.sqrt(d) + 0.5 * across_dir)[None, None, :]  # along 1: 3, across: 0.5
    along, across = query_components(q)
    assert along == pytest.approx([3.0]) and across == pytest.approx([0.5])
    angle = M.angle_to_ones(torch.as_tensor(q)).item()
    assert angle == pytest.approx(math.degrees(math.atan2(0.5, 3.0)))  # tan(angle) = across / along


def test_initial_queries_are_the_runs_first_weights():
    from attention_geometry.majority import initial_queries
    setup = M.MajoritySetup(n_classes=4, length=8, d=4, min_margin=2, n_sequences=80, batch=16, steps=1,
                            lr=1e-10, eval_every=1)  # one step of Adam moves each weight by about lr
    run = M.train_majority("layernorm", [3, 4], setup)
    np.testing.assert_allclose(initial_queries("layernorm", [3, 4], 4, 4), run.queries, rtol=1e-5, atol=1e-6)


def test_the_key_matrix_gradient_leaves_w_k_times_ones_alone_under_layernorm():
    """The component of the effective query along 1 changes no score under LayerNorm, and the loss's
    gradient of W_K has its rows in H (the keys' span): W_K 1 gets no gradient. Not so without the
    projection (the fair control), whose keys leave H."""
    import torch

    from attention_geometry import majority as M
    setup = M.MajoritySetup(n_classes=6, length=12, d=4, min_margin=2, n_sequences=300)
    counts, labels = M.majority_dataset(0, setup)[:2]
    ones = torch.ones(setup.d, dtype=torch.float64)
    for norm, vanishes in (("layernorm", True), ("rmsnorm", False)):
        params = {k: v.detach().double().requires_grad_(True) for k, v in M.init_majority_params(6, 4, [0, 1]).items()}
        M.majority_loss(params, counts[None].expand(2, -1, -1).double(), labels[None].expand(2, -1), norm).sum().backward()
        along = (params["W_K"].grad @ ones).abs().max().item()
        scale = params["W_K"].grad.abs().max().item()
        assert (along < 1e-12 * scale) == vanishes, (norm, along, scale)
