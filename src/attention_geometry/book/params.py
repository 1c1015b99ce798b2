"""Chapter parameters: one pydantic model per chapter, and validation where they enter.

A chapter's parameters are the fields of one :class:`ChapterParams` subclass
(:mod:`attention_geometry.book.chapters`): each field's default (the value in
the chapter's papermill ``parameters`` cell, which a test keeps equal), its
allowed values (``ge``/``le``/``gt``, ``min_length``/``max_length``, a
``Literal``) and its meaning (``description``). The class also holds the
chapter's ``smoke`` set, its named ``presets`` and its ``cost`` model, and
rules that involve several parameters as ``model_validator``\\ s.

Every way a value enters goes through the model: the chapter's own second
cell (:func:`~attention_geometry.book.registry.validate_parameters`),
``make run ... PARAMS=``, presets and sweep grid files (:func:`check_parameters`).
A bad value stops with a one-line :class:`ParameterError` in the library's
format (:func:`attention_geometry._checks.fail`), prefixed with "parameter"::

    parameter 'd_max' = 2 is out of range; allowed: an integer in [3, 65536]

The parameters appendix and ``attention-geometry list`` are written from the
same models (:func:`parameters_of`).
"""

import numbers
import types
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Annotated, Any, ClassVar, Iterator, Mapping

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema, model_validator
from pydantic_core import PydanticCustomError

from .cost import CostModel

__all__ = [
    "ParameterError",
    "ChapterParams",
    "Seed",
    "CorpusDir",
    "TextFolder",
    "Parameter",
    "parameters_of",
    "check_value",
    "check_parameters",
    "check_devices",
    "user_data",
]


class ParameterError(ValueError):
    """A parameter has a wrong type, a value out of range, or an unknown name."""


def _text_folder(value: str | None) -> str | None:
    if value is None:
        return None
    folder = Path(value).expanduser()
    if not folder.is_dir():
        raise PydanticCustomError("text_folder", "is not an existing folder")
    if not any(folder.glob("*.txt")):
        raise PydanticCustomError("text_folder", "holds no .txt file")
    return str(folder)


# ``None`` (the chapter's default corpus) or a folder holding at least one .txt file
TextFolder = Annotated[str | None, AfterValidator(_text_folder),
                       WithJsonSchema({"type": ["string", "null"], "format": "text-folder"})]
# two parameters that several chapters share, with one meaning
Seed = Annotated[int, Field(ge=0, le=2**32 - 1, description="seed of every random draw in the chapter")]
CorpusDir = Annotated[TextFolder, Field(description=(
    "folder of .txt files to use as the text; None: English prose from the Python standard library's docstrings"))]


class ChapterParams(BaseModel):
    """Base of every chapter's parameter model.

    Fields are the chapter's parameters. Class-level data (not parameters):

    - ``smoke``: tiny sizes the tests run (seconds, not minutes);
    - ``presets``: named parameter sets, e.g. ``"paper"``, a paper's full scale;
    - ``cost``: the chapter's run time as a function of its parameters.

    Their names are checked against the fields when the class is defined (a
    typo fails at import); their values go through the model wherever they are
    used, and the tests validate every one.
    """

    # strict: 3.0 is not an integer, "0.5" not a number, 1 not a bool (as in the library's checks);
    # an integer is still accepted as a float
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False,
                              validate_default=True, defer_build=True)

    smoke: ClassVar[Mapping[str, Any]] = {}
    presets: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    cost: ClassVar[CostModel | None] = None

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        fields = set(cls.model_fields)
        for where, values in [("smoke", cls.smoke), *((f"presets[{k!r}]", v) for k, v in cls.presets.items())]:
            unknown = sorted(set(values) - fields)
            if unknown:
                raise TypeError(f"{cls.__name__}.{where} names {', '.join(unknown)}, which are not its fields")
        if cls.cost is not None:
            lists = {name for name, f in cls.model_fields.items() if getattr(f.annotation, "__origin__", None) is list}
            for _, terms in cls.cost.parts:
                for term in terms:
                    how, _, name = term.rpartition(":")
                    if name not in fields or (how and name not in lists):
                        kind = "a list field" if how else "a field"
                        raise TypeError(f"{cls.__name__}.cost term {term!r}: {name!r} is not {kind}")

    @model_validator(mode="before")
    @classmethod
    def _plain_values(cls, values: Any) -> Any:
        """Tuples as lists, numpy integers as ints: what a notebook or a caller may hand in."""
        if not isinstance(values, dict):
            return values

        def plain(v):
            if isinstance(v, (tuple, list)):
                return [plain(x) for x in v]
            if isinstance(v, numbers.Integral) and not isinstance(v, (bool, int)):
                return int(v)
            return v

        return {k: plain(v) for k, v in values.items()}

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Every parameter at its default."""
        return {name: f.get_default(call_default_factory=True) for name, f in cls.model_fields.items()}

    def reject(self, name: str, why: str, allowed: str) -> ParameterError:
        """A joint rule's error about parameter ``name`` (raise it in a model validator)."""
        return ParameterError(f"parameter {name!r} = {getattr(self, name)!r} {why}; allowed: {allowed}")


def _interval(low, high, low_open=False, high_open=False) -> str:
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    lo = "-inf" if low is None else repr(low)
    hi = "inf" if high is None else repr(high)
    return f"{left}{lo}, {hi}{right}"


def _allowed(schema: Mapping[str, Any]) -> str:
    """What a field's JSON schema allows, in words."""
    if schema.get("format") == "text-folder":
        return "None, or the path of a folder that holds .txt files"
    if "enum" in schema:
        return "one of " + ", ".join(repr(c) for c in schema["enum"])
    kind = schema.get("type")
    if kind == "boolean":
        return "True or False"
    if kind == "integer":
        return f"an integer in {_interval(schema.get('minimum'), schema.get('maximum'))}"
    if kind == "number":
        low_open, high_open = "exclusiveMinimum" in schema, "exclusiveMaximum" in schema
        low = schema.get("exclusiveMinimum", schema.get("minimum"))
        high = schema.get("exclusiveMaximum", schema.get("maximum"))
        return f"a finite number in {_interval(low, high, low_open, high_open)}"
    if kind == "array":
        lo, hi = schema.get("minItems", 0), schema.get("maxItems")
        n = f"{lo} to {hi}" if hi else f"at least {lo}"
        return f"a list of {n} items, each {_allowed(schema['items'])}"
    raise TypeError(f"no words for the parameter schema {dict(schema)!r}")


@dataclass(frozen=True)
class Parameter:
    """One field of a chapter's model, as the appendix and ``list`` show it."""

    name: str
    doc: str
    default: Any
    schema: Mapping[str, Any]

    def allowed(self) -> str:
        return _allowed(self.schema)

    def item_allowed(self) -> str:
        return _allowed(self.schema["items"])

    @property
    def choices(self) -> tuple:
        return tuple(self.schema.get("enum", ()))


class ParameterSpec(Mapping[str, Parameter]):
    """A model's parameters by name, in the order of its fields (``chapter.params``)."""

    def __init__(self, model: type[ChapterParams]):
        self.model = model

    @cached_property
    def _params(self) -> dict[str, Parameter]:
        # the JSON schema only when a parameter is looked at (an error, the appendix): a chapter's
        # kernel that validates good values never builds it
        props, defaults = self.model.model_json_schema()["properties"], self.model.defaults()
        return {name: Parameter(name, f.description or "", defaults[name], props[name])
                for name, f in self.model.model_fields.items()}

    def __getitem__(self, name: str) -> Parameter:
        return self._params[name]

    def __contains__(self, name: object) -> bool:
        return name in self.model.model_fields

    def __iter__(self) -> Iterator[str]:
        return iter(self.model.model_fields)

    def __len__(self) -> int:
        return len(self.model.model_fields)


@cache
def parameters_of(model: type[ChapterParams]) -> ParameterSpec:
    """The parameters of ``model``, each with its meaning, default and allowed values."""
    return ParameterSpec(model)


def _spec(spec) -> ParameterSpec:
    return spec if isinstance(spec, ParameterSpec) else parameters_of(spec)


def _why(error: Mapping[str, Any]) -> str:
    value, kind = error["input"], error["type"]
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        return "is out of range"
    if kind == "finite_number":
        return "is not finite"
    if kind in ("too_short", "too_long"):
        return f"has {len(value)} items"
    if kind == "literal_error" and isinstance(value, str):
        return "is not a known choice"
    if kind == "text_folder":
        return error["msg"]
    return f"has the wrong type {type(value).__name__}"


def _one_line(spec: ParameterSpec, values: Mapping[str, Any], err: ValidationError) -> ParameterError:
    """Pydantic's first error as the project's one line: the parameter, the value, what is allowed."""
    error = err.errors(include_url=False)[0]
    loc = error["loc"]
    if not loc:  # a joint rule (a model validator) words its own message
        cause = (error.get("ctx") or {}).get("error")
        return cause if isinstance(cause, ParameterError) else ParameterError(f"parameters: {error['msg']}")
    name, param = loc[0], spec[loc[0]]
    value = values.get(name, error["input"])
    if len(loc) == 1:
        return ParameterError(f"parameter {name!r} = {value!r} {_why(error)}; allowed: {param.allowed()}")
    i = loc[1]
    return ParameterError(f"parameter '{name}[{i}]' = {error['input']!r} {_why(error)}; allowed: "
                          f"{param.item_allowed()} (in parameter {name!r} = {value!r})")


def _unknown(spec: ParameterSpec, values: Mapping[str, Any]) -> None:
    for name, value in values.items():
        if name not in spec:
            raise ParameterError(f"unknown parameter {name!r} = {value!r}; known parameters: "
                                 + ", ".join(sorted(spec)))


def validated(spec, values: Mapping[str, Any]) -> ChapterParams:
    """``values`` (the others at their defaults) as an instance of the model; or a :class:`ParameterError`."""
    spec = _spec(spec)
    _unknown(spec, values)
    try:
        return spec.model.model_validate(dict(values))
    except ValidationError as err:
        raise _one_line(spec, values, err) from None


def check_parameters(spec, values: Mapping[str, Any]) -> dict:
    """Check a complete or partial set of values against a chapter's model (``spec``:
    the model or ``chapter.params``); return them normalised (``1`` for a float is ``1.0``).

    The parameters not given are at their defaults, so that a joint rule sees
    the values a run will use."""
    instance = validated(spec, values)
    return {name: getattr(instance, name) for name in values}


def check_value(spec, name: str, value: Any) -> Any:
    """Check one ``name = value`` against a chapter's model; return the normalised value."""
    return check_parameters(spec, {name: value})[name]


def check_devices(spec, values: Mapping[str, Any]) -> None:
    """Reject a device this machine does not have: a choice among devices (one that
    offers ``"cuda"``) set to ``"cuda"`` where torch sees no CUDA device. Checked
    where a run starts on this machine (``make run``), not in the model itself:
    a preset may ask for CUDA and be run elsewhere."""
    spec = _spec(spec)
    for name, value in values.items():
        param = spec.get(name)
        if param is not None and "cuda" in param.choices and value == "cuda":
            import torch

            if not torch.cuda.is_available():
                here = ", ".join(repr(c) for c in param.choices if c != "cuda")
                raise ParameterError(f"parameter {name!r} = 'cuda' is not available: torch sees no CUDA "
                                     f"device on this machine; allowed here: {here}")


# Names IPython puts into a kernel's user namespace; never parameters.
_IPYTHON_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}


def user_data(namespace: Mapping[str, Any]) -> dict:
    """The plain-data names of a notebook namespace: candidates for parameters."""
    out = {}
    for name, value in namespace.items():
        if name.startswith("_") or name in _IPYTHON_NAMES:
            continue
        if isinstance(value, (types.ModuleType, type)) or callable(value):
            continue
        out[name] = value
    return out
