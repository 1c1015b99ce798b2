"""Parameter validation: every bad value stops with a message naming it."""

import re
import types
from typing import Annotated, Literal

import numpy as np
import pytest
from pydantic import Field

from attention_geometry.book import CHAPTERS, ParameterError, validate_parameters
from attention_geometry.book.cost import CostModel
from attention_geometry.book.params import ChapterParams, TextFolder, check_value, parameters_of
from attention_geometry.book.toc import parameters_cell


class Knobs(ChapterParams):
    """One parameter of each kind."""

    n: int = Field(3, ge=1, le=10, description="count")
    x: float = Field(0.5, gt=0.0, le=1.0, description="real")
    flag: bool = Field(False, description="switch")
    mode: Literal["a", "b"] = Field("a", description="mode")
    ds: list[Annotated[int, Field(ge=2, le=8)]] = Field([2], min_length=1, max_length=3, description="dims")
    xs: list[Annotated[float, Field(ge=0.0)]] = Field([0.0], min_length=1, description="reals")


SPEC = parameters_of(Knobs)


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
    assert type(check_value(SPEC, "n", np.int64(4))) is int and check_value(SPEC, "ds", [np.int32(2)]) == [2]


def test_unknown_name_lists_known_ones():
    with pytest.raises(ParameterError, match=r"unknown parameter 'nn' = 3; known parameters: .*n"):
        check_value(SPEC, "nn", 3)


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_parameters_cell_matches_the_model(chapter):
    """The chapter's parameters cell and its model name the same knobs with the same
    defaults, and the defaults, the smoke set and every preset are allowed values."""
    c = CHAPTERS[chapter]
    defaults = parameters_cell(c)
    assert set(defaults) == set(c.params), f"{c.source}: cell {sorted(defaults)} vs model {sorted(c.params)}"
    assert list(defaults) == list(c.params), "the model lists its fields in the cell's order"
    changed = {k: (defaults[k], c.model.defaults()[k]) for k in defaults if defaults[k] != c.model.defaults()[k]}
    assert not changed, f"{c.source}: (cell, model) defaults differ: {changed}"
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
        schema = param.schema.get("items", param.schema)
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        if high is not None:
            bad = high * 10 + 1
            if "items" not in param.schema:
                value = bad
            else:
                value = [bad] * max(param.schema.get("minItems", 1), 1)
            with pytest.raises(ParameterError, match=rf"'{name}.*out of range"):
                validate_parameters(chapter, {**defaults, name: value})


def test_text_folder_parameter(tmp_path):
    class Text(ChapterParams):
        corpus_dir: TextFolder = Field(None, description="text")

    spec = parameters_of(Text)
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
    chapter = Chapter(name="a", source="a.md")
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


@pytest.mark.parametrize("chapter, values, message", [
    ("synthesis", {"d": 10, "n_heads": 2},
     "parameter 'd' = 10 is not a multiple of 2 n_heads = 4; allowed: a multiple of 2 n_heads"),
    ("rank_collapse", {"n_heads": 3}, "parameter 'n_heads' = 3 does not divide d_model = 128; allowed: a divisor of d_model"),
    ("selectability", {"table_n_min": 200, "table_n_max": 100},
     "parameter 'table_n_min' = 200 is above table_n_max = 100; allowed: at most table_n_max"),
    ("jacobians", {"width": 20}, "parameter 'width' = 20 is not a multiple of 2 n_heads = 8; allowed: a multiple of 2 n_heads"),
    ("jacobians", {"n_kv_heads": 3}, "parameter 'n_heads' = 4 is not a multiple of n_kv_heads = 3; allowed: a multiple "
                                     "of n_kv_heads"),
    ("jacobians", {"heads_list": [1, 3]}, "parameter 'heads_list' = [1, 3] holds a head count that does not divide "
                                          "heads_width = 32; allowed: head counts that divide heads_width"),
    ("synthesis", {"n_draws": 9}, "parameter 'n_draws' = 9 is more than jac_batch = 8; allowed: at most jac_batch"),
    ("jacobians", {"n_draws": 6, "pretrained_sequences": 4}, "parameter 'n_draws' = 6 is more than n_sequences, "
     "gpt2_sequences or pretrained_sequences; allowed: at most min(n_sequences, gpt2_sequences, pretrained_sequences)"),
    ("jacobians", {"n_draws": 2, "n_sequences": 6}, "parameter 'n_draws' = 2 leaves fewer than 4 of n_sequences = 6 "
     "when one draw is left out; allowed: a number of draws that leaves 4 sequences when one is left out"),
])
def test_rules_joining_parameters_are_one_line_errors(chapter, values, message):
    """A rule that involves several parameters is the model's: the values given meet the
    others at their defaults, in a chapter's cell as in ``make run``."""
    with pytest.raises(ParameterError) as err:
        validate_parameters(chapter, {**parameters_cell(CHAPTERS[chapter]), **values})
    assert str(err.value) == message
    from attention_geometry.book.run import resolve_parameters
    with pytest.raises(ParameterError, match="^" + re.escape(message) + "$"):
        resolve_parameters(CHAPTERS[chapter], values, None)


def test_a_preset_meets_the_values_given_before_a_joint_rule():
    from attention_geometry.book.run import resolve_parameters
    from attention_geometry.book.sweep import SweepError, load_grid

    jac = CHAPTERS["jacobians"]
    parameters, name = resolve_parameters(jac, {"n_heads": 28}, "paper")  # 896 = 2 * 28 * 16
    assert parameters["n_heads"] == 28 and parameters["width"] == 896 and name == "paper_n_heads-28"
    with pytest.raises(ParameterError, match="'width' = 64 is not a multiple of 2 n_heads = 56"):
        resolve_parameters(jac, {"n_heads": 28}, None)
    with pytest.raises(SweepError, match=r"point 1 .*'width' = 64 is not a multiple of 2 n_heads = 56"):
        load_grid({"grid": {"n_heads": [4, 28]}}, jac)
    assert len(load_grid({"fixed": {"width": 896}, "grid": {"n_heads": [14, 28]}}, jac).points) == 2


def test_the_model_checks_its_class_data_when_defined():
    """A smoke set, preset or cost term that names no parameter fails at import, not in a run."""
    def define(**class_data):
        namespace = {"__annotations__": {"n": int, "xs": list[int]}, "n": Field(1, ge=0), "xs": Field([1]),
                     **class_data}
        return type("Bad", (ChapterParams,), namespace)

    assert define(smoke={"n": 2}, cost=CostModel(1.0, ((1.0, {"n": 1, "len:xs": 1}),))).cost.seconds == 1.0
    with pytest.raises(TypeError, match=r"Bad.smoke names m, which are not its fields"):
        define(smoke={"m": 2})
    with pytest.raises(TypeError, match=r"Bad.presets\['paper'\] names m"):
        define(presets={"paper": {"m": 2}})
    with pytest.raises(TypeError, match="Bad.cost term 'len:n': 'n' is not a list field"):
        define(cost=CostModel(1.0, ((1.0, {"len:n": 1}),)))
    with pytest.raises(TypeError, match="Bad.cost term 'm': 'm' is not a field"):
        define(cost=CostModel(1.0, ((1.0, {"m": 1}),)))


def test_model_data_is_class_data_not_parameters():
    for chapter in CHAPTERS.values():
        assert not {"smoke", "presets", "cost"} & set(chapter.params)
        assert isinstance(chapter.model.__dict__.get("smoke", {}), dict)
