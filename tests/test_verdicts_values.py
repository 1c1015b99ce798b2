"""The rule for several claimed values at once can return each of its verdicts."""

import pytest

from attention_geometry.stats import Estimate
from attention_geometry.verdicts import values_verdict


def test_values_verdict_returns_each_label():
    tight = [Estimate(10.0, 0.1, df=20), Estimate(20.0, 0.1, df=20)]
    assert values_verdict(tight, [10.2, 19.9], atol=1.0).label == "reproduced"
    assert values_verdict(tight, [10.2, 30.0], atol=1.0).label == "differs"
    wide = [Estimate(10.0, 0.1, df=20), Estimate(20.0, 5.0, df=20)]
    assert values_verdict(wide, [10.2, 20.0], atol=1.0).label == "not decided"
    v = values_verdict(tight, [10.2, 19.9], atol=1.0, labels=["layer 1", "layer 2"])
    assert "layer 1" in v.reason and "tolerance ±1" in v.reason


def test_values_verdict_needs_one_value_per_estimate():
    with pytest.raises(ValueError, match="claimed"):
        values_verdict([Estimate(1.0, 0.1)], [1.0, 2.0])
