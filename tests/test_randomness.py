"""One randomness convention: every stochastic function takes a generator or a seed,
normalised by ``_checks.as_generator`` (numpy) or ``_checks.as_torch_generator``."""

import numpy as np
import pytest
import torch

from attention_geometry._checks import ArgumentError, ArgumentTypeError, as_generator, as_torch_generator
from attention_geometry.layernorm import random_inputs
from attention_geometry.ln_dynamics import random_orthogonal


@pytest.mark.parametrize("seed", [0, 1, np.int64(7), 2**70])
def test_a_seed_gives_the_stream_of_default_rng(seed):
    assert np.array_equal(as_generator("rng", seed).random(5), np.random.default_rng(int(seed)).random(5))


@pytest.mark.parametrize("seed", [0, 1, np.int64(7), 2**64 - 1])
def test_a_seed_gives_the_stream_of_a_seeded_torch_generator(seed):
    got = torch.rand(5, generator=as_torch_generator("generator", seed))
    assert torch.equal(got, torch.rand(5, generator=torch.Generator().manual_seed(int(seed))))


def test_a_generator_is_passed_through_and_its_stream_continues():
    rng, g = np.random.default_rng(3), torch.Generator().manual_seed(3)
    assert as_generator("rng", rng) is rng and as_torch_generator("generator", g) is g
    # a function handed a generator advances it; handed the seed, it starts the stream afresh
    first = random_inputs(rng, 4, 3)
    assert np.array_equal(first, random_inputs(3, 4, 3)) and not np.array_equal(first, random_inputs(rng, 4, 3))
    assert torch.equal(random_orthogonal(4, 5), random_orthogonal(4, torch.Generator().manual_seed(5)))


@pytest.mark.parametrize("helper, name, bad, message", [
    (as_generator, "rng", "0", "rng = '0' has the wrong type str; allowed: a numpy.random.Generator or a seed"),
    (as_generator, "rng", None, "rng = None has the wrong type NoneType; allowed: a numpy.random.Generator or a seed"),
    (as_generator, "rng", True, "rng = True has the wrong type bool"),
    (as_generator, "rng", 1.0, "rng = 1.0 has the wrong type float"),
    (as_generator, "rng", torch.Generator(), "has the wrong type Generator; allowed: a numpy.random.Generator"),
    (as_torch_generator, "generator", np.random.default_rng(0), "generator = Generator(PCG64) at 0x"),
    (as_torch_generator, "seed", "x", "seed = 'x' has the wrong type str; allowed: a torch.Generator or a seed"),
])
def test_a_wrong_type_is_one_line_naming_the_argument(helper, name, bad, message):
    with pytest.raises(ArgumentTypeError) as err:
        helper(name, bad)
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("helper, bad, allowed", [
    (as_generator, -1, "a numpy.random.Generator or a seed (an integer >= 0)"),
    (as_torch_generator, -1, "a torch.Generator or a seed (an integer in [0, 18446744073709551615])"),
    (as_torch_generator, 2**64, "a torch.Generator or a seed (an integer in [0, 18446744073709551615])"),
])
def test_a_seed_out_of_range_is_one_line(helper, bad, allowed):
    with pytest.raises(ArgumentError, match=None) as err:
        helper("seed", bad)
    assert str(err.value) == f"seed = {bad} is out of range; allowed: {allowed}"
