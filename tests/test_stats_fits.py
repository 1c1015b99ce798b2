"""The estimators added for the Jacobian chapters: Welch's difference, the weighted
slope, and the degenerate label of a fitted parameter; and the ceiling rule."""

import math

import numpy as np
import pytest

from attention_geometry.stats import Estimate, linear_slope, welch_difference
from attention_geometry.verdicts import ceiling_verdict


def test_welch_difference_covers_at_the_stated_rate():
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(1000):
        est = welch_difference(rng.normal(1.0, 1.0, 6), rng.normal(0.0, 3.0, 9))
        lo, hi = est.interval(0.9)
        hits += lo <= 1.0 <= hi
    assert abs(hits / 1000 - 0.9) < 3 * math.sqrt(0.09 / 1000)


def test_linear_slope_recovers_the_slope_and_inflates_for_scatter():
    x = np.log([1, 2, 4, 8])
    exact = linear_slope(x, [Estimate(0.3 - 0.5 * xi, 0.01) for xi in x])
    assert exact.value == pytest.approx(-0.5) and exact.df is None
    scattered = linear_slope(x, [Estimate(v, 0.01) for v in (0.0, 0.3, -0.2, 0.1)])
    assert scattered.df == 2 and scattered.se > 0.05  # the points scatter 10x their errors
    with pytest.raises(ValueError, match="x = "):
        linear_slope([1.0, 2.0], [Estimate(0, 1), Estimate(1, 1)])


@pytest.mark.parametrize("measured, ceiling, label", [
    (Estimate(0.995, 0.002), Estimate(0.999, 0.001), "reproduced"),   # at the claim
    (Estimate(0.80, 0.02), Estimate(0.99, 0.003), "differs"),         # below, and the noise allows more
    (Estimate(0.80, 0.02), Estimate(0.70, 0.05), "not decided"),      # below, but so is the ceiling
    (Estimate(0.975, 0.01), Estimate(0.99, 0.003), "not decided"),    # straddles
])
def test_ceiling_verdict_returns_each_label(measured, ceiling, label):
    v = ceiling_verdict(measured, 0.99, ceiling)
    assert v.label == label and "ceiling" in v.reason


def test_claim_list_fills_in_the_paper():
    from attention_geometry.verdicts import ClaimList, property_verdict

    claims = ClaimList("chowdhury2026lost")
    c = claims.add("x", "§1", "a claim", "1", "here", property_verdict(True, "ok"), source="abstract")
    assert claims == [c] and c.paper == "chowdhury2026lost" and c.source == "abstract"
    with pytest.raises(ValueError, match="source"):
        claims.add("y", "§1", "a claim", "1", "here", property_verdict(True, "ok"), source="blog")


@pytest.mark.parametrize("est, word", [(Estimate(1.0, 0.1), "grows"), (Estimate(-1.0, 0.1), "falls"),
                                       (Estimate(0.1, 0.1), "stays"), (Estimate(0.2, 0.0), "grows")])
def test_trend_word_follows_the_interval(est, word):
    from attention_geometry.words import trend_word

    assert trend_word(est, above="grows", below="falls", neither="stays") == word
    assert trend_word(est, above="a", below="b", neither="c", reference=5.0) == "b"


def test_band_position_names_each_side_of_the_band():
    from attention_geometry.stats import Estimate, band_position

    band = [Estimate(10.0, 1.0), Estimate(12.0, 1.0)]  # 95 % ends: 8.04 .. 13.96
    assert band_position([5.0, 8.5, 13.5, 20.0], band) == ["below", "within", "within", "above"]
    with pytest.raises(ValueError, match="band"):
        band_position([1.0], [])


def test_interior_peak_needs_a_drop_beyond_the_noise():
    from attention_geometry.stats import Estimate, interior_peak

    rising = [Estimate(1.0, 0.1), Estimate(2.0, 0.1), Estimate(3.0, 0.1)]
    assert interior_peak([0.1, 0.5, 0.9], rising) is None  # largest at the end
    peaked = [Estimate(1.0, 0.1), Estimate(3.0, 0.1), Estimate(2.0, 0.1)]
    assert interior_peak([0.1, 0.5, 0.9], peaked) == 0.5
    noisy = [Estimate(1.0, 0.1), Estimate(3.0, 1.0), Estimate(2.0, 1.0)]
    assert interior_peak([0.1, 0.5, 0.9], noisy) is None  # the drop 1 +- 1.4 is noise
    assert interior_peak([0.9, 0.1, 0.5], [peaked[2], peaked[0], peaked[1]]) == 0.5  # order of xs
    assert interior_peak([0.5], rising[:1]) is None
    with pytest.raises(ValueError, match="estimates"):
        interior_peak([0.1, 0.5], rising)


def test_difference_estimate_adds_independent_errors_in_quadrature():
    from attention_geometry.stats import Estimate, difference_estimate

    d = difference_estimate(Estimate(5.0, 3.0), Estimate(2.0, 4.0))
    assert d.value == 3.0 and d.se == pytest.approx(5.0)
