"""The chapters' one glue helper: plain numbers, mappings, estimates, no display."""

import numpy as np
import pytest

from attention_geometry.book.glue import glue, glue_json
from attention_geometry.stats import Estimate


@pytest.fixture
def glued(monkeypatch):
    calls = []
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: calls.append((name, value, display)))
    return calls


def test_scalars_are_plain_and_not_displayed(glued):
    assert glue("x", np.float64(0.5)) == 0.5
    assert glued == [("x", 0.5, False)] and type(glued[0][1]) is float


def test_mapping_with_prefix(glued):
    out = glue({"a": np.int64(3), "b": "words"}, prefix="ch-")
    assert out == {"a": 3, "b": "words"} and glued == [("ch-a", 3, False), ("ch-b", "words", False)]


def test_an_estimate_glues_its_value_and_standard_error(glued):
    out = glue({"sp": Estimate(np.float64(0.8), 0.05), "n": 4}, prefix="j-")
    assert out == {"sp": 0.8, "sp-se": 0.05, "n": 4}
    assert [(k, v) for k, v, _ in glued] == [("j-sp", 0.8), ("j-sp-se", 0.05), ("j-n", 4)]
    assert glue("e", Estimate(1.0, 0.1)) == {"e": 1.0, "e-se": 0.1}


def test_a_name_glued_twice_is_refused_before_anything_is_glued(glued):
    with pytest.raises(ValueError, match="'sp-se' is glued twice"):
        glue({"sp": Estimate(0.8, 0.05), "sp-se": 0.1})
    assert glued == []


def test_glue_json_displays_plain_json_under_a_structured_mime_type(monkeypatch):
    """A structure is glued as itself: one undisplayed output (myst-nb's glue prefix and
    scrapbook name) whose data is plain JSON: enums as words, NaN as null."""
    import IPython.display

    from attention_geometry.verdicts import Label

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda data, raw, metadata: shown.append((data, raw, metadata)))
    mime = "application/vnd.attention-geometry.rows+json"
    stored = glue_json("rows", [{"label": Label.REFUTED, "x": np.float32(0.5), "y": float("nan"), "n": 3}], mime=mime)
    assert stored == [{"label": "refuted", "x": "0.5", "y": None, "n": 3}] and type(stored[0]["label"]) is str
    prefix = "application/papermill.record/"
    assert shown == [({prefix + mime: stored}, True, {"scrapbook": {"name": "rows", "mime_prefix": prefix}})]
    with pytest.raises(ValueError, match="mime = 'text/plain' is not allowed"):
        glue_json("rows", [], mime="text/plain")


def test_a_verdict_label_glues_as_its_word(glued):
    from attention_geometry.verdicts import Label

    glue("v", Label.REPRODUCED)
    assert glued == [("v", "reproduced", False)] and type(glued[0][1]) is str
