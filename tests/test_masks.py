"""Masks as graphs: constructors, connectivity, centres, radius, and bad input."""

import numpy as np
import pytest

from attention_geometry.attention import (
    causal_mask,
    check_mask,
    complete_mask,
    distances,
    make_mask,
    mask_graph,
    one_sided_window_mask,
    one_sided_window_radius,
    sliding_window_mask,
    sliding_window_radius,
)


def test_constructors_by_hand():
    assert causal_mask(3).tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert sliding_window_mask(4, 1).astype(int).tolist() == [
        [1, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1], [0, 0, 1, 1]]
    assert one_sided_window_mask(4, 1).astype(int).tolist() == [
        [1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
    assert complete_mask(2).all()
    assert (make_mask("window", 5, 2) == sliding_window_mask(5, 2)).all()


def test_direction_convention():
    # mask[i, j]: i reads j, edge j -> i; D[c, i] = dist from c to i
    D = distances(causal_mask(4))
    assert D[0].tolist() == [0, 1, 1, 1]  # token 0 reaches everyone in one step
    assert D[3].tolist() == [-1, -1, -1, 0]  # the last token is read by nobody
    assert distances(one_sided_window_mask(5, 1))[0].tolist() == [0, 1, 2, 3, 4]


def test_causal_and_complete_graphs():
    g = mask_graph(causal_mask(7))
    assert g.quasi_strongly_connected and not g.strongly_connected
    assert g.centres == (0,) and g.radius == 1
    g = mask_graph(complete_mask(5))
    assert g.strongly_connected and g.radius == 1 and g.central == tuple(range(5))


@pytest.mark.parametrize("n", [1, 2, 5, 8, 17, 128])
@pytest.mark.parametrize("w", [1, 2, 3, 7, 64, 200])
def test_window_radius_formulas(n, w):
    g = mask_graph(sliding_window_mask(n, w))
    assert g.strongly_connected and g.radius == sliding_window_radius(n, w)
    assert g.radius == -(-(n // 2) // w)
    g = mask_graph(one_sided_window_mask(n, w))
    assert g.centres == (0,) and g.radius == one_sided_window_radius(n, w)
    assert g.radius == max(0, -(-(n - 1) // w))


def test_centre_of_odd_and_even_windows():
    assert mask_graph(sliding_window_mask(7, 1)).central == (3,)
    assert mask_graph(sliding_window_mask(6, 1)).central == (2, 3)


@pytest.mark.parametrize(
    "mask, fragment",
    [
        (np.ones((3, 4), dtype=bool), "shape"),
        (np.ones((3, 3)), "boolean"),
        (np.ones((3,), dtype=bool), "shape"),
        (~np.eye(3, dtype=bool), "self-loop"),
        (np.eye(3, dtype=bool), "not quasi-strongly connected"),
        (np.eye(2, dtype=bool) | np.array([[0, 0], [0, 0]], dtype=bool), "not quasi-strongly"),
    ],
)
def test_bad_masks(mask, fragment):
    with pytest.raises(ValueError, match=fragment):
        check_mask(mask)


def test_user_mask_and_two_roots():
    # two tokens that nobody else reaches: no centre
    m = np.eye(3, dtype=bool)
    m[2, 0] = m[2, 1] = True
    assert not mask_graph(m).quasi_strongly_connected
    m[1, 0] = True  # now 0 -> 1 -> ... and 0 -> 2
    assert mask_graph(m).centres == (0,) and check_mask(m) is not None


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bad_sizes(bad):
    with pytest.raises(ValueError, match="N ="):
        causal_mask(bad)
    with pytest.raises(ValueError, match="w ="):
        sliding_window_mask(4, bad)
    with pytest.raises(ValueError, match="kind = 'diagonal' is not one of the choices"):
        make_mask("diagonal", 4)


def test_block_causal_mask_is_not_quasi_strongly_connected():
    from attention_geometry.attention import block_causal_mask

    m = block_causal_mask(7, 2)
    assert m[:4, :4].tolist() == causal_mask(4).tolist() and m[4:, 4:].tolist() == causal_mask(3).tolist()
    assert not m[4:, :4].any() and not m[:4, 4:].any()
    g = mask_graph(m)
    assert g.self_loops and not g.quasi_strongly_connected and g.radius is None
    assert (block_causal_mask(5, 1) == causal_mask(5)).all()
    with pytest.raises(ValueError, match="not quasi-strongly connected"):
        check_mask(m)
    with pytest.raises(ValueError, match="n_blocks"):
        block_causal_mask(3, 4)
