"""The factorial estimator against synthetic designs with known effects (both signs), on pure noise
(no term decisive at the family-wise level), and the line slopes."""

import numpy as np
import pytest

import attention_geometry as ag
from attention_geometry.factorial import factorial_effects, familywise_level, line_slopes

FACTORS = [("norm", ["none", "layernorm", "rmsnorm"]), ("residual", [0.5, 1.0]), ("mask", ["causal", "window"])]


def _name(term):
    return " × ".join(f"{f}: {lev} - {ref}" for f, lev, ref in term.contrasts)


def _synthetic(main, inter, k=8, noise=0.05, seed=0):
    """Y = mean + main effects + the norm x mask interaction + a draw effect shared by every cell + noise."""
    rng = np.random.default_rng(seed)
    n = np.array([0.0, main[0], main[1]])[:, None, None]
    r = np.array([0.0, main[2]])[None, :, None]
    m = np.array([0.0, main[3]])[None, None, :]
    nm = np.zeros((3, 1, 2))
    nm[1, 0, 1], nm[2, 0, 1] = inter
    block = rng.normal(0, 1.0, (k, 1, 1, 1))  # the draw's effect: large, removed by pairing
    return 2.0 + n + r + m + nm + block + rng.normal(0, noise, (k, 3, 2, 2))


def _decisive(term, level):
    verdict = ag.draws_verdict(ag.sign_verdict(term.estimate, 1 if term.estimate.value > 0 else -1, level=level),
                               term.estimate)
    return verdict.label == "reproduced"


@pytest.mark.parametrize("sign", [+1, -1])
def test_known_main_effects_and_interaction_are_recovered_in_both_directions(sign):
    main = [sign * 0.5, -sign * 0.3, sign * 0.8, -sign * 0.4]
    inter = (sign * 0.6, -sign * 0.4)
    terms = {_name(t): t for t in factorial_effects(_synthetic(main, inter), FACTORS)}
    # a main effect averages over the other factors: the mask's includes half the norm x mask interaction terms
    truth = {"norm: layernorm - none": main[0] + inter[0] / 2, "norm: rmsnorm - none": main[1] + inter[1] / 2,
             "residual: 1.0 - 0.5": main[2], "mask: window - causal": main[3] + (inter[0] + inter[1]) / 3,
             "norm: layernorm - none × mask: window - causal": inter[0],
             "norm: rmsnorm - none × mask: window - causal": inter[1],
             "residual: 1.0 - 0.5 × mask: window - causal": 0.0, "norm: layernorm - none × residual: 1.0 - 0.5": 0.0}
    level = familywise_level(len(terms))
    for name, value in truth.items():
        est = terms[name].estimate
        lo, hi = est.interval(level)
        assert lo <= value <= hi, name
        if abs(value) > 0:
            assert np.sign(est.value) == np.sign(value) and _decisive(terms[name], level), name
    assert len(terms) == 2 + 1 + 1 + 2 + 2 + 1 + 2  # mains, two-way, three-way
    assert {t.order for t in terms.values()} == {1, 2, 3}


def test_the_draw_effect_shared_by_all_cells_is_removed_by_pairing():
    Y = _synthetic([0.0, 0.0, 0.3, 0.0], (0.0, 0.0), noise=0.01)
    est = next(t for t in factorial_effects(Y, FACTORS) if _name(t) == "residual: 1.0 - 0.5").estimate
    assert est.se < 0.01  # the draws' own spread (sd 1) would give about 0.35


def test_pure_noise_gives_no_decisive_term_at_the_familywise_level():
    hits = 0
    for seed in range(40):
        Y = np.random.default_rng(seed).normal(0, 1, (8, 3, 2, 2))
        terms = factorial_effects(Y, FACTORS)
        level = familywise_level(len(terms))
        hits += any(_decisive(t, level) for t in terms)
    assert hits <= 2  # at most 5 % of designs in expectation; 40 designs


def test_reference_level_and_max_order():
    Y = _synthetic([0.5, 0.0, 0.0, 0.0], (0.0, 0.0))
    terms = factorial_effects(Y, FACTORS, max_order=1, reference={"norm": "layernorm"})
    assert {t.order for t in terms} == {1}
    first = terms[0]
    assert _name(first) == "norm: none - layernorm" and first.estimate.value < 0
    with pytest.raises(ValueError, match="reference"):
        factorial_effects(Y, FACTORS, reference={"norm": "batchnorm"})
    with pytest.raises(ValueError, match="Y"):
        factorial_effects(Y[:, :2], FACTORS)


def test_two_by_two_interaction_is_the_difference_of_differences():
    Y = np.array([[[1.0, 2.0], [3.0, 7.0]], [[1.0, 2.0], [3.0, 9.0]]])  # (draws, a, b)
    terms = {_name(t): t.estimate for t in factorial_effects(Y, [("a", [0, 1]), ("b", [0, 1])])}
    assert terms["a: 1 - 0 × b: 1 - 0"].value == pytest.approx(((7 - 3) - (2 - 1) + (9 - 3) - (2 - 1)) / 2)
    assert terms["a: 1 - 0"].value == pytest.approx(np.mean([(3 + 7 - 1 - 2) / 2, (3 + 9 - 1 - 2) / 2]))


@pytest.mark.parametrize("slope", [0.7, -0.7, 0.0])
def test_line_slopes_recover_a_known_slope_per_line(slope):
    rng = np.random.default_rng(1)
    x = np.log2([2, 4, 8])
    widths = np.array([0.0, 1.0])[None, None, :]  # the second line's level is higher, same slope
    Y = slope * x[None, :, None] + widths + rng.normal(0, 1, (8, 1, 1)) + rng.normal(0, 0.05, (8, 3, 2))
    lines = line_slopes(Y, x, axis=0)
    assert lines.shape == (2,)
    level = familywise_level(2)
    for est in lines:
        lo, hi = est.interval(level)
        assert lo <= slope <= hi
        verdict = ag.sign_verdict(est, 1 if est.value > 0 else -1, level=level)
        assert (verdict.label == "reproduced") == (slope != 0.0)
    with pytest.raises(ValueError, match="x"):
        line_slopes(Y, [1.0, 1.0, 1.0], axis=0)
