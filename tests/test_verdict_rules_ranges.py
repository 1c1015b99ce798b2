"""The verdict rules for ranges, for claims about every case and for mixed effects:
each can return each of its labels, and the proportion estimate covers at its level."""

import numpy as np
import pytest

from attention_geometry.stats import Estimate, proportion_estimate
from attention_geometry.verdicts import (
    Verdict,
    all_verdict,
    heterogeneity_verdict,
    range_verdict,
    sign_verdict,
)


def est(value, se=0.1):
    return Estimate(value, se)


@pytest.mark.parametrize("value, inside, label", [
    (0.0, True, "reproduced"), (3.0, True, "refuted"), (0.95, True, "not decided"),
    (-4.7, False, "reproduced"), (0.0, False, "refuted"), (-1.05, False, "not decided"),
])
def test_range_verdict_both_sides(value, inside, label):
    v = range_verdict(est(value), -1.0, 1.0, claimed_inside=inside, what="log10 ratio")
    assert v.label == label and "log10 ratio" in v.reason


def test_range_verdict_checks_the_lower_side_too():
    # the factor-10 criterion: a fall to 1.5e-5 of the initial value is outside
    assert range_verdict(est(np.log10(1.5e-5)), -1, 1).label == "refuted"
    assert range_verdict(est(np.log10(4e5)), -1, 1).label == "refuted"
    with pytest.raises(ValueError, match="high"):
        range_verdict(est(0.0), 1.0, -1.0)


def test_all_verdict_labels():
    rep, ref, nd = Verdict("reproduced", "a"), Verdict("refuted", "b"), Verdict("not decided", "c")
    assert all_verdict({"x": rep, "y": rep}).label == "reproduced"
    assert all_verdict({"x": rep, "y": ref, "z": nd}).label == "refuted"
    assert all_verdict([rep, nd]).label == "not decided"
    assert all_verdict({"x": Verdict("differs", "d")}).label == "refuted"
    assert "x: reproduced" in all_verdict({"x": rep}).reason
    with pytest.raises(ValueError, match="verdicts"):
        all_verdict({})


def test_all_verdict_of_sign_verdicts():
    v = all_verdict({m: sign_verdict(est(x), +1) for m, x in [("a", 1.0), ("b", 2.0)]})
    assert v.label == "reproduced"


def test_heterogeneity_verdict_labels():
    assert heterogeneity_verdict({"a": est(1.0), "b": est(-1.0)}).label == "reproduced"
    assert heterogeneity_verdict({"a": est(1.0), "b": est(0.0, 0.01)}, tol=0.1).label == "reproduced"
    assert heterogeneity_verdict({"a": est(1.0), "b": est(2.0)}).label == "refuted"
    assert heterogeneity_verdict({"a": est(1.0), "b": est(0.05)}).label == "not decided"
    # without a tolerance a small effect is undecided, not null
    assert heterogeneity_verdict({"a": est(1.0), "b": est(0.0, 0.01)}).label == "not decided"
    with pytest.raises(ValueError, match="estimates"):
        heterogeneity_verdict({})


def test_an_exact_proportion_is_read_by_the_rules_inside_zero_one():
    from attention_geometry.evidence import decode, encode
    from attention_geometry.ratios import clopper_pearson, exact_proportion
    from attention_geometry.verdicts import bound_verdict, sign_verdict

    for k, n in [(0, 2000), (2, 2000), (7, 7), (0, 1)]:
        est = exact_proportion(k, n)
        lo, hi = est.interval()
        assert 0.0 <= lo <= est.value == k / n <= hi <= 1.0 and est.se > 0
        assert est.interval(0.9) == clopper_pearson(k, n, level=0.9)
        assert decode(encode(est), None) == est  # stored evidence computes the verdict again with this interval
    none = exact_proportion(0, 2000)
    assert sign_verdict(none, +1).label == "not decided" and "[0, 0.00184]" in sign_verdict(none, +1).reason
    assert bound_verdict(none, 0.1, at_most=True).label == "reproduced"
    assert "0/2,000 = 0" in bound_verdict(none, 0.1, at_most=True, what="fraction").reason
    with pytest.raises(ValueError, match="successes"):
        exact_proportion(3, 2)


def test_proportion_estimate_covers_near_zero():
    rng = np.random.default_rng(0)
    for p, n in [(0.0, 50), (0.02, 100), (0.3, 40)]:
        hits = 0
        for _ in range(400):
            k = int(rng.binomial(n, p))
            lo, hi = proportion_estimate(k, n).interval(0.95)
            hits += lo <= p <= hi
        assert hits / 400 >= 0.9
    assert proportion_estimate(0, 10).interval(0.95)[1] > 0
    with pytest.raises(ValueError, match="successes"):
        proportion_estimate(11, 10)
