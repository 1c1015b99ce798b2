"""Parameter validation: every bad value stops with a message naming it."""

import types

import pytest

from attention_geometry.book import CHAPTERS, ParameterError, validate_parameters
from attention_geometry.book.toc import parameters_cell
from attention_geometry.book.params import Bool, Choice, Float, FloatList, Int, IntList, check_value


SPEC = {
    "n": Int("count", low=1, high=10),
    "x": Float("real", low=0.0, high=1.0, low_open=True),
    "flag": Bool("switch"),
    "mode": Choice("mode", choices=("a", "b")),
    "ds": IntList("dims", low=2, high=8, max_len=3),
    "xs": FloatList("reals", low=0.0),
}


@pytest.mark.parametrize(
    "name, value, fragment",
    [
        ("n", 0, "out of range"),
        ("n", 11, "out of range"),
        ("n", 2.5, "wrong type float"),
        ("n", True, "wrong type bool"),
        ("n", "3", "wrong type str"),
        ("x", 0.0, "out of range"),
        ("x", float("nan"), "not finite"),
        ("x", "0.5", "wrong type str"),
        ("flag", 1, "wrong type int"),
        ("mode", "c", "not a known choice"),
        ("ds", [2, 9], "out of range"),
        ("ds", [2, 3, 4, 5], "has 4 items"),
        ("ds", 4, "wrong type int"),
        ("xs", [], "has 0 items"),
        ("xs", [-1.0], "out of range"),
    ],
)
def test_bad_values_name_parameter_value_and_allowed(name, value, fragment):
    with pytest.raises(ParameterError) as err:
        check_value(SPEC, name, value)
    msg = str(err.value)
    assert repr(name) in msg and fragment in msg and "allowed:" in msg
    assert repr(value) in msg


def test_good_values_are_normalised():
    assert check_value(SPEC, "x", 1) == 1.0 and isinstance(check_value(SPEC, "x", 1), float)
    assert check_value(SPEC, "ds", (2, 3)) == [2, 3]
    assert check_value(SPEC, "mode", "b") == "b"


def test_unknown_name_lists_known_ones():
    with pytest.raises(ParameterError, match=r"unknown parameter 'nn' = 3; known parameters: .*n"):
        check_value(SPEC, "nn", 3)


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_parameters_cell_matches_specification(chapter):
    """The chapter's parameters cell and its registry entry name the same knobs,
    and the defaults, the smoke set and every preset are allowed values."""
    c = CHAPTERS[chapter]
    defaults = parameters_cell(c)
    assert set(defaults) == set(c.params), f"{c.source}: cell {sorted(defaults)} vs spec {sorted(c.params)}"
    assert "seed" in c.params
    for values in [defaults, {**defaults, **c.smoke}, *({**defaults, **p} for p in c.presets.values())]:
        ns = validate_parameters(chapter, values)
        assert isinstance(ns, types.SimpleNamespace)


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_namespace_validation_rejects_unknown_and_missing(chapter):
    defaults = parameters_cell(CHAPTERS[chapter])
    with pytest.raises(ParameterError, match="unknown parameter 'not_a_knob'"):
        validate_parameters(chapter, {**defaults, "not_a_knob": 1})
    missing = dict(defaults)
    missing.pop("seed")
    with pytest.raises(ParameterError, match="does not define seed"):
        validate_parameters(chapter, missing)
    # modules, functions and private names in the namespace are not parameters
    validate_parameters(chapter, {**defaults, "np": types, "f": print, "_x": 1})


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_every_parameter_rejects_a_wrong_type_and_out_of_range(chapter):
    """Each knob of each chapter: a wrong type and (where bounded) an out-of-range
    value stop validation with a message naming the parameter and the value."""
    c = CHAPTERS[chapter]
    defaults = parameters_cell(c)
    for name, param in c.params.items():
        wrong = object() if isinstance(defaults[name], str) else "not-a-value"
        with pytest.raises(ParameterError, match=rf"parameter '{name}' = .*allowed"):
            validate_parameters(chapter, {**defaults, name: wrong})
        high = getattr(param, "high", None) or getattr(getattr(param, "item", None), "high", None)
        if high is not None:
            bad = high * 10 + 1
            if isinstance(param, (Int, Float)):
                value = bad
            else:
                value = [bad] * max(param.min_len, 1)
            with pytest.raises(ParameterError, match=rf"'{name}.*out of range"):
                validate_parameters(chapter, {**defaults, name: value})


def test_text_folder_parameter(tmp_path):
    from attention_geometry.book.params import TextFolder

    spec = {"corpus_dir": TextFolder("text")}
    assert check_value(spec, "corpus_dir", None) is None
    with pytest.raises(ParameterError, match="is not an existing folder"):
        check_value(spec, "corpus_dir", str(tmp_path / "missing"))
    with pytest.raises(ParameterError, match="holds no .txt file"):
        check_value(spec, "corpus_dir", str(tmp_path))
    with pytest.raises(ParameterError, match="wrong type int"):
        check_value(spec, "corpus_dir", 3)
    (tmp_path / "a.txt").write_text("Some prose.")
    assert check_value(spec, "corpus_dir", str(tmp_path)) == str(tmp_path)


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_parameters_cell_reads_what_jupytext_reads(chapter):
    import jupytext

    c = CHAPTERS[chapter]
    nb = jupytext.read(c.source)
    (cell,) = [x for x in nb.cells if "parameters" in x.metadata.get("tags", [])]
    namespace = {}
    exec(cell.source, {}, namespace)
    assert parameters_cell(c) == namespace


def test_parameters_cell_option_forms(tmp_path):
    from attention_geometry.book.project import Project
    from attention_geometry.book.registry import Chapter

    (tmp_path / "_toc.yml").write_text("root: a\n")
    body = ("# T\n\n```{code-cell} ipython3\nx = 0\n```\n\n"
            "```{code-cell} ipython3\n---\ntags: [hide-input, parameters]\n---\nn = 3\nxs = [1, 2]\n```\n")
    (tmp_path / "a.md").write_text(body)
    chapter = Chapter(name="a", source="a.md", params={}, smoke={})
    assert parameters_cell(chapter, Project(tmp_path)) == {"n": 3, "xs": [1, 2]}
    (tmp_path / "a.md").write_text(body.replace("---\ntags: [hide-input, parameters]\n---\n",
                                                ":tags: [parameters]\n\n"))
    assert parameters_cell(chapter, Project(tmp_path)) == {"n": 3, "xs": [1, 2]}
    (tmp_path / "a.md").write_text("# T\n")
    with pytest.raises(ValueError, match="expected one 'parameters' cell, found 0"):
        parameters_cell(chapter, Project(tmp_path))


@pytest.mark.parametrize("name", sorted(CHAPTERS))
def test_cost_model_terms_are_parameters(name):
    chapter = CHAPTERS[name]
    terms = [t.rpartition(":")[2] for _, part in chapter.cost.parts for t in part]
    assert set(terms) <= set(chapter.params), set(terms) - set(chapter.params)
