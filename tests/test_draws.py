"""Estimates over weight draws (attention_geometry.draws) and the rule that a verdict about a
randomly initialised model decides only on enough draws with a stable sign (verdicts.draws_verdict)."""

import math

import numpy as np
import pytest

import attention_geometry as ag
from attention_geometry.draws import DrawEstimate, draw_difference, draw_slices, over_draws, sign_stability
from attention_geometry.verdicts import MIN_DRAWS, draws_verdict

DECISIVE = ("reproduced", "refuted", "differs")


def _draws(rng, k, m, *, mean=0.0, between=1.0, within=1.0, effects=None):
    """``k`` draws of ``m`` sequences: a draw effect of sd ``between`` (or the given ``effects``) plus noise."""
    b = mean + between * rng.standard_normal(k) if effects is None else np.asarray(effects, float)
    return [bi + within * rng.standard_normal(m) for bi in b]


def test_over_draws_is_the_t_interval_of_the_draw_means():
    per_draw = [np.array([1.0, 3.0]), np.array([2.0, 2.0, 5.0]), np.array([0.0])]
    est = over_draws(per_draw)
    means = np.array([2.0, 3.0, 0.0])
    assert isinstance(est, DrawEstimate) and isinstance(est, ag.Estimate)
    assert est.value == pytest.approx(means.mean()) and est.df == 2 and est.n_draws == 3
    assert est.se == pytest.approx(means.std(ddof=1) / math.sqrt(3))
    assert est.draw_means == pytest.approx(tuple(means))


def test_one_draw_gives_the_within_draw_estimate_and_draws_of_one_value_are_a_plain_mean():
    x = np.array([0.5, 1.5, 2.0, 4.0])
    one = over_draws([x])
    assert (one.value, one.se, one.df, one.n_draws) == pytest.approx((x.mean(), x.std(ddof=1) / 2, 3, 1))
    many = over_draws(x)  # four draws of one sequence each
    plain = ag.mean_estimate(x)
    assert (many.value, many.se, many.df, many.n_draws) == pytest.approx((plain.value, plain.se, plain.df, 4))
    for bad in ([], [np.array([1.0])], [np.array([]), np.array([1.0])]):
        with pytest.raises(ValueError, match="per_draw"):
            over_draws(bad)


def test_the_interval_over_draws_covers_with_draw_effects_where_one_over_sequences_does_not():
    """With a between-draw spread, pooling the sequences of all draws as if independent undercovers;
    the t interval over the draw means covers at its nominal rate (the within-draw error included)."""
    rng = np.random.default_rng(0)
    hit_draws = hit_pooled = 0
    n_sets = 400
    for _ in range(n_sets):
        per_draw = _draws(rng, 8, 16, between=1.0, within=1.0)
        lo, hi = over_draws(per_draw).interval()
        hit_draws += lo <= 0.0 <= hi
        lo, hi = ag.mean_estimate(np.concatenate(per_draw)).interval()
        hit_pooled += lo <= 0.0 <= hi
    assert 0.92 <= hit_draws / n_sets <= 0.98
    assert hit_pooled / n_sets < 0.7


def test_draw_difference_pairs_by_draw():
    rng = np.random.default_rng(1)
    shared = rng.standard_normal(8) * 5  # a large draw effect, common to both quantities
    a = over_draws([s + 1.0 + 0.01 * rng.standard_normal(4) for s in shared])
    b = over_draws([s + 0.01 * rng.standard_normal(4) for s in shared])
    d = draw_difference(a, b)
    assert d.value == pytest.approx(a.value - b.value) and d.n_draws == 8 and d.se < 0.05 < a.se
    one = draw_difference(over_draws([[1.0, 2.0]]), over_draws([[0.0, 0.5]]))
    assert one.n_draws == 1 and one.value == pytest.approx(1.25) and one.se == pytest.approx(math.hypot(0.5, 0.25))
    with pytest.raises(ValueError, match="b"):
        draw_difference(a, over_draws([[1.0, 2.0]]))


def test_sign_stability_counts_the_draws_on_the_estimates_side():
    est = over_draws([[1.0], [2.0], [-0.5], [3.0]])
    assert sign_stability(est) == (3, 4)
    assert sign_stability([[1.0], [2.0], [-0.5], [3.0]], reference=1.5) == (2, 4)  # mean 1.375: below 1.5
    assert sign_stability(est, reference=(-1.0, 2.5)) == (3, 4)  # within the band: all but 3.0
    assert sign_stability(over_draws([[0.0], [0.0], [0.0]])) == (3, 3)  # every draw at the reference
    with pytest.raises(ValueError, match="reference"):
        sign_stability(est, reference=(1.0, 0.0))
    with pytest.raises(ValueError, match="draws"):
        sign_stability(DrawEstimate(1.0, 0.1))


def test_draw_slices_spread_every_sequence_over_the_draws():
    for n, k in [(64, 8), (8, 8), (10, 3), (5, 1)]:
        parts = draw_slices(n, k)
        sizes = [s.stop - s.start for s in parts]
        assert len(parts) == k and sum(sizes) == n and min(sizes) >= 1 and max(sizes) - min(sizes) <= 1
        assert parts[0].start == 0 and all(a.stop == b.start for a, b in zip(parts, parts[1:]))
    with pytest.raises(ValueError, match="n_draws"):
        draw_slices(4, 5)


# ------------------------------------------------------------------------- the rule


def test_a_real_effect_shared_by_every_draw_is_decisive():
    rng = np.random.default_rng(2)
    est = over_draws(_draws(rng, MIN_DRAWS, 8, mean=3.0, between=0.3, within=0.5))
    v = draws_verdict(ag.sign_verdict(est, +1), est)
    assert v.label == "reproduced" and f"over {MIN_DRAWS} weight draws" in v.reason
    assert draws_verdict(ag.sign_verdict(est, -1), est).label == "refuted"
    assert draws_verdict(ag.bound_verdict(est, 1.0, at_most=False), est, reference=1.0).label == "reproduced"


def test_an_effect_whose_sign_flips_between_draws_is_not_decisive_though_the_sequences_say_so():
    """Tiny within-draw noise: every sequence-only interval is sharp, and pooled over the sequences of
    all draws (or over the draw means: 7 of 8 draws positive) the sign looks decided; the sign flips
    between draws, so the rule does not decide."""
    rng = np.random.default_rng(3)
    per_draw = _draws(rng, 8, 64, effects=[1, 1, 1, 1, 1, 1, 1, -1], within=0.01)
    pooled = ag.mean_estimate(np.concatenate(per_draw))
    assert ag.sign_verdict(pooled, +1).label == "reproduced"  # what sequences alone would say
    est = over_draws(per_draw)
    assert ag.sign_verdict(est, +1).label == "reproduced"  # the t interval over draws excludes 0 too
    v = draws_verdict(ag.sign_verdict(est, +1), est)
    assert v.label == "not decided" and "not stable" in v.reason and "7 of 8" in v.reason
    half = over_draws(_draws(rng, 8, 64, effects=[1, -1] * 4, within=0.01))
    assert draws_verdict(ag.sign_verdict(half, +1), half).label == "not decided"


def test_one_draw_never_decides_and_says_what_would():
    rng = np.random.default_rng(4)
    one = over_draws(_draws(rng, 1, 256, mean=5.0, within=0.1))
    assert ag.sign_verdict(one, +1).label == "reproduced"
    v = draws_verdict(ag.sign_verdict(one, +1), one)
    assert v.label == "not decided" and "on 1 weight draw" in v.reason and f"at least {MIN_DRAWS} draws" in v.reason
    few = over_draws(_draws(rng, 6, 8, mean=5.0, between=0.1, within=0.1))
    assert draws_verdict(ag.sign_verdict(few, +1), few).label == "not decided"
    assert draws_verdict(ag.sign_verdict(few, +1), few, min_draws=6).label == "reproduced"
    three = over_draws(_draws(rng, 3, 8, mean=5.0, between=0.1, within=0.1))  # 3 of 3 is no majority beyond chance
    assert "no share of 3 draws" in draws_verdict(ag.sign_verdict(three, +1), three, min_draws=3).reason
    assert draws_verdict(ag.value_verdict(few, 5.0, atol=1.0), 6).label == "not decided"  # only a count
    assert draws_verdict(ag.value_verdict(few, 5.0, atol=1.0), 8).label == "reproduced"


def test_every_part_of_an_all_verdict_must_be_stable_and_undecided_verdicts_pass():
    rng = np.random.default_rng(5)
    good = over_draws(_draws(rng, 8, 8, mean=2.0, between=0.2, within=0.2))
    flips = over_draws(_draws(rng, 8, 8, effects=[2, 2, 2, 2, 2, 2, 2, -1], within=0.01))
    both = ag.all_verdict([ag.sign_verdict(good, +1), ag.sign_verdict(flips, +1)])
    assert both.label == "reproduced"
    assert draws_verdict(both, [good, flips]).label == "not decided"
    assert draws_verdict(both, [good, good]).label == "reproduced"
    undecided = ag.Verdict("not decided", "the interval contains 0")
    assert draws_verdict(undecided, good) is undecided
    with pytest.raises(TypeError):
        draws_verdict("reproduced", good)
    with pytest.raises(ValueError, match="draws"):
        draws_verdict(both, 0)


def test_many_draws_with_a_clear_majority_stay_decisive():
    """Not "every draw agrees", which more draws would break ever more often: a majority beyond chance."""
    rng = np.random.default_rng(6)
    est = over_draws(_draws(rng, 64, 4, mean=1.0, between=0.8, within=0.5))
    same, k = sign_stability(est)
    assert same < k  # some draws land on the other side by noise
    assert draws_verdict(ag.sign_verdict(est, +1), est).label == "reproduced"


@pytest.mark.parametrize("k, m, between, within", [(8, 8, 1.0, 1.0), (8, 64, 1.0, 0.01), (16, 4, 0.1, 1.0)])
def test_on_pure_noise_the_rule_decides_no_more_often_than_its_nominal_rate(k, m, between, within):
    """Null simulation: 400 data sets with no effect at all (draw effects and sequence noise centred
    on 0); a decisive verdict, either way, in at most the 5 % of a 95 % interval (plus binomial slack)."""
    rng = np.random.default_rng(7)
    n_sets, decisive = 400, 0
    for _ in range(n_sets):
        est = over_draws(_draws(rng, k, m, between=between, within=within))
        decisive += draws_verdict(ag.sign_verdict(est, +1), est).label in DECISIVE
    assert decisive / n_sets <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / n_sets)


def test_on_pure_noise_sequences_alone_decide_far_too_often():
    """The same null with a between-draw spread: an interval over the sequences of one draw decides
    most of the time, which is why the rule does not let one draw decide."""
    rng = np.random.default_rng(8)
    n_sets, decisive = 200, 0
    for _ in range(n_sets):
        one = over_draws(_draws(rng, 1, 64, between=1.0, within=0.1))
        decisive += ag.sign_verdict(one, +1).label in DECISIVE
        assert draws_verdict(ag.sign_verdict(one, +1), one).label not in DECISIVE
    assert decisive / n_sets > 0.5


def test_the_jackknife_over_draws_of_the_mean_is_over_draws():
    rng = np.random.default_rng(9)
    per_draw = [rng.standard_normal(rng.integers(1, 6)) for _ in range(7)]
    jk = ag.jackknife_over_draws(lambda parts: np.mean([p.mean() for p in parts]), per_draw)
    plain = over_draws(per_draw)
    assert (jk.value, jk.se, jk.df, jk.n_draws) == pytest.approx((plain.value, plain.se, plain.df, plain.n_draws))
    assert jk.draw_means == pytest.approx(plain.draw_means)  # the pseudo-values are the draw means


def test_the_jackknife_of_a_ratio_covers_over_draws_and_one_draw_leaves_out_sequences():
    """A statistic that is not a mean (a ratio of pooled means), with draw effects: the interval over
    draws covers at about its nominal rate."""
    rng = np.random.default_rng(10)
    hits, n_sets = 0, 300
    for _ in range(n_sets):
        per_draw = [np.column_stack([2.0 + b + 0.3 * rng.standard_normal(6), 1.0 + 0.1 * rng.standard_normal(6)])
                    for b in 0.5 * rng.standard_normal(8)]
        def ratio(parts):
            both = np.concatenate(parts)
            return both[:, 0].mean() / both[:, 1].mean()

        est = ag.jackknife_over_draws(ratio, per_draw)
        lo, hi = est.interval()
        hits += lo <= 2.0 <= hi
    assert 0.9 <= hits / n_sets <= 0.99
    one = ag.jackknife_over_draws(lambda parts: np.concatenate(parts).mean(), [np.arange(5.0)])
    assert one.n_draws == 1 and one.df == 4 and one.se == pytest.approx(ag.mean_estimate(np.arange(5.0)).se)
    with pytest.raises(ValueError, match="per_draw"):
        ag.jackknife_over_draws(np.mean, [np.array([1.0])])


def test_replicates_are_the_draws_or_the_sequences_of_one_draw_and_each_draw_has_its_seed():
    x = np.array([1.0, 2.0, 4.0])
    assert ag.over_replicates(x, 3).n_draws == 3 and ag.over_replicates(x, 1).n_draws == 1
    assert ag.over_replicates(x, 3).se == pytest.approx(ag.over_replicates(x, 1).se)
    with pytest.raises(ValueError, match="values"):
        ag.over_replicates(x, 2)
    seeds = [ag.draw_seed(5, k) for k in range(20)]
    assert seeds[0] == 5 and len(set(seeds)) == 20 and seeds == [ag.draw_seed(5, k) for k in range(20)]


def test_a_stored_run_on_one_draw_is_checked_only_by_draws_that_agree_with_each_other():
    rng = np.random.default_rng(11)
    est = over_draws(_draws(rng, MIN_DRAWS, 4, mean=3.0, between=0.2, within=0.2))
    agree = draws_verdict(ag.sign_verdict(est, +1), est)
    fields = ag.draws_assumption(1, agree)
    assert fields["assumption"] == "a single draw of the weights standing for all of them at the paper's scale"
    assert "agree with each other, on reproduced" in fields["assumption_checked"]
    flips = over_draws(_draws(rng, 8, 64, effects=[1, 1, 1, 1, 1, 1, 1, -1], within=0.01))
    unstable = draws_verdict(ag.sign_verdict(flips, +1), flips)
    few = draws_verdict(ag.sign_verdict(est, +1), 3)
    assert ag.draws_assumption(1, unstable)["assumption_checked"] == ""
    assert ag.draws_assumption(1, few)["assumption_checked"] == ""
    assert ag.draws_assumption(None, agree) == {} and ag.draws_assumption(MIN_DRAWS, agree) == {}
    stored = ag.Verdict("reproduced", "the effect = 2.9 ± 0.1")
    assert ag.settle(agree, stored, **fields).label == "reproduced"
    assert ag.settle(agree, stored, **ag.draws_assumption(1, unstable)).label == "not decided"
    assert ag.settle(agree, ag.Verdict("not decided", "straddles"), **ag.draws_assumption(1, unstable)).label \
        == "not decided"
    # draws that agree with each other on the opposite verdict do not check a stored verdict
    opposite = ag.settle(agree, ag.Verdict("refuted", "the effect = -2.9 ± 0.1"), **fields)
    assert opposite.label == "not decided" and "points the other way, reproduced" in opposite.reason
    assert ag.settle(agree, ag.Verdict("reproduced in a stand-in", "r"), **fields).label == "reproduced in a stand-in"


def test_nested_variance_recovers_known_components():
    """Synthetic data with draw, sequence and probe effects of known variances (4, 1, 0.25),
    many independent replicates along a trailing axis: the method-of-moments components are
    unbiased, so their mean over the replicates is each variance within 4 Monte Carlo
    standard errors; their shares sum to 1."""
    from attention_geometry.draws import nested_variance

    rng = np.random.default_rng(0)
    k, m, p, reps = 8, 5, 2, 4000
    sa, sb, se = 2.0, 1.0, 0.5
    y = (3.0 + sa * rng.standard_normal((k, 1, 1, reps)) + sb * rng.standard_normal((k, m, 1, reps))
         + se * rng.standard_normal((k, m, p, reps)))
    nv = nested_variance(y)
    for est, true in [(nv.draws, sa**2), (nv.sequences, sb**2), (nv.probes, se**2)]:
        assert est.shape == (reps,)
        assert abs(est.mean() - true) < 4 * est.std(ddof=1) / np.sqrt(reps)
    np.testing.assert_allclose(nv.shares().sum(0), 1.0)
    one = nested_variance(y[..., 0])  # no trailing axis: numbers
    assert np.ndim(one.draws) == 0
    with pytest.raises(ValueError, match="k, m, p >= 2"):
        nested_variance(y[:, :, :1])


def test_nested_variance_of_a_constant_within_sequences_has_no_probe_part():
    """Identical probes: the probe component is exactly 0 and the sequence component is the
    variance of the sequence means within a draw (one-way ANOVA's estimator)."""
    from attention_geometry.draws import nested_variance

    rng = np.random.default_rng(1)
    seq = rng.standard_normal((3, 4))
    y = np.repeat(seq[:, :, None], 3, axis=2)
    nv = nested_variance(y)
    assert nv.probes == pytest.approx(0.0, abs=1e-30)
    within = ((seq - seq.mean(1, keepdims=True)) ** 2).sum() / (3 * 3)
    between = 4 * ((seq.mean(1) - seq.mean()) ** 2).sum() / 2
    assert nv.sequences == pytest.approx(within)
    assert nv.draws == pytest.approx((between - within) / 4)


def test_a_side_is_shared_beyond_chance_by_9_of_10_or_all_of_8_and_draws_verdict_agrees():
    assert ag.side_shared(9, 10) and not ag.side_shared(8, 10)
    assert ag.side_shared(8, 8) and not ag.side_shared(7, 8) and not ag.side_shared(0, 10)
    for same in (8, 9):  # the verdict over 10 draws with `same` on the estimate's side decides only when shared
        est = ag.over_draws([0.3] * same + [-0.1] * (10 - same))
        label = ag.draws_verdict(ag.sign_verdict(est, 1, what="x"), est).label
        assert (label == "reproduced") == ag.side_shared(same, 10)
