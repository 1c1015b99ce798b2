"""attention_geometry: the library behind the book *Attention Geometry*.

One module per mathematical object; every module's public names (its
``__all__``) are re-exported here, flat (``ag.layer_norm``, ``ag.last_row``).
This layer uses numpy, torch and scipy only (``transformers`` for the real
decoders in :mod:`.jacobians` and :mod:`.models`). Figures live in
:mod:`attention_geometry.figures` and the book tooling in
:mod:`attention_geometry.book`; both are imported explicitly, and the
mathematics imports neither.

========================  =====================================================
module                    object
========================  =====================================================
:mod:`.layernorm`         LayerNorm as projection and scaling, its variants (ch. 1)
:mod:`.layernorm_checks`  PyTorch's LayerNorm measured against the geometry (ch. 1)
:mod:`.attention`         masks as graphs, their radius, the masked softmax (ch. 4)
:mod:`.majority`          the majority task and its one-layer model (ch. 2), a subpackage
:mod:`.selectability`     unselectable keys: convex-hull test, heat maps (ch. 3)
:mod:`.collapse`          rank collapse over depth, the measure mu (ch. 4)
:mod:`.ln_dynamics`       LayerNorm dynamics on the sphere, equilibria (ch. 5)
:mod:`.recency`           recency from LayerNorm, a subpackage (ch. 6): the simulation,
                          its closed forms, real-layer additions and a NoPE decoder
:mod:`.cesaro`            the Cesàro calculus of causal averaging (ch. 7)
:mod:`.jacobians`         Jacobian profiles of decoders, a subpackage (ch. 8): the
                          random-init decoders, the profiles, their derived expectation,
                          their statistics, early training
:mod:`.synthesis`         a decoder with every component switchable (ch. 9)
:mod:`.stats`             intervals, paired differences, control variates
:mod:`.draws`             estimates over weight draws (random-init models)
:mod:`.selection`         extremes chosen on one half, measured on the other
:mod:`.power`             detectable effects, samples to decide, reliability
:mod:`.ratios`            Fieller ratios, exact binomial proportions
:mod:`.verdicts`          the rules that turn a measurement into a verdict
:mod:`.words`             the words a sentence takes from the numbers
:mod:`.checkpoint`        atomic checkpoints for long loops
:mod:`.models`            the tiny decoder, SmolLM2 (offline), the text corpus
========================  =====================================================

Signatures carry types (``npt.ArrayLike`` for anything ``numpy.asarray`` takes,
``torch.Tensor``, ``np.ndarray`` returned); shapes are in the docstrings, written
``x: (..., d)`` or ``(n, d) -> (n,)``, with one vocabulary of axes: ``d`` the
width of a token, ``n`` the keys or tokens of one set (``N`` in the modules of
chapters 4 and 5, as the book writes it there; ``L`` the positions in chapters 7
and 8), ``batch`` independent sequences (``N`` sequences of the data set in
:mod:`.majority`), ``S`` seeds, ``C`` classes, ``H`` layers
of a Cesàro product, ``T + 1`` the layers of a trajectory, ``k`` anything else,
named where it is used; ``...`` any leading axes.

Randomness is always an argument, never global state. A function that draws
takes ``rng`` (numpy: a ``numpy.random.Generator`` or a seed) or ``generator``
(torch: a ``torch.Generator`` or a seed), or a ``seed`` where it derives several
streams from one number. Each is normalised where it enters by one helper,
:func:`._checks.as_generator` / :func:`._checks.as_torch_generator`: a generator is
used as it is (its stream continues), a seed ``s`` becomes
``numpy.random.default_rng(s)`` / ``torch.Generator().manual_seed(s)``, so the same
seed gives the same numbers bit for bit on one machine. (The one exception is
dropout in :mod:`.models.tiny_decoder`, drawn by torch's global generator inside
``torch.random.fork_rng``, seeded for every step.)
"""

import functools
import importlib

#: The modules whose ``__all__`` make up the package's public names, in the
#: order their names are bound (a later module's name would win, as with star
#: imports; no two modules export one name: see tests/test_layers.py).
MODULE_NAMES = ("layernorm", "layernorm_checks", "attention", "majority", "selectability", "collapse",
                "ln_dynamics", "recency", "cesaro", "jacobians", "synthesis", "stats", "draws", "factorial",
                "selection", "power",
                "ratios", "evidence", "verdicts", "words", "checkpoint", "models.corpus", "models.pretrained",
                "models.tiny_decoder")
_SUBMODULES = {name.rsplit(".", 1)[-1]: name for name in MODULE_NAMES} | {"models": "models"}


def _load_all() -> None:
    """Import every module and bind its public names here (once, on first use:
    ``import attention_geometry`` alone, as the book tooling does, imports none
    of the mathematics, so a kernel that only glues a number never loads torch)."""
    names, modules = {}, []
    for name in MODULE_NAMES:
        module = importlib.import_module(f".{name}", __name__)
        modules.append(module)
        names.update({n: getattr(module, n) for n in module.__all__})
    names.update({short: importlib.import_module(f".{full}", __name__) for short, full in _SUBMODULES.items()})
    globals().update(names, MODULES=tuple(modules), __all__=[n for m in modules for n in m.__all__])


def _exports(module: str) -> list[str] | None:
    """The ``__all__`` of ``module`` (a name in :data:`MODULE_NAMES`, or one of its
    submodules), read from its source without importing it (:func:`._lazy.read_all`)."""
    from pathlib import Path  # here, as ast in _lazy: ``import attention_geometry`` alone imports neither

    from ._lazy import read_all

    return read_all(Path(__file__).parent, module)


@functools.cache
def _exporter() -> dict[str, str | None]:
    """``{public name: the module in MODULE_NAMES that exports it}``, from the sources;
    a module whose ``__all__`` cannot be read so is under the key ``None``."""
    table = {}
    for module in MODULE_NAMES:
        names = _exports(module)
        for name in names if names is not None else [None]:
            table.setdefault(name, module)
    return table


def _load(module: str, name: str) -> None:
    """Import one module of :data:`MODULE_NAMES` and bind its public ``name`` here (that
    name only: a subpackage's other names would import its other modules)."""
    globals()[name] = getattr(importlib.import_module(f".{module}", __name__), name)


def __getattr__(name: str):
    """``ag.<name>`` imports only the module that exports ``name`` (and what it
    imports), so the modules a chapter's kernel has loaded are the ones it used: the
    book's cache re-executes a chapter only when one of those changes
    (:mod:`.book.cache`). ``ag.__all__``, ``dir(ag)`` and ``ag.MODULES`` load all; a
    name no module exports (``hasattr(ag, "_repr_html_")``) loads none."""
    if name in _SUBMODULES:  # ag.selectability, ``from attention_geometry import selectability``
        return importlib.import_module(f".{_SUBMODULES[name]}", __name__)
    if name.startswith("__") and name != "__all__":
        raise AttributeError(name)
    exporter = _exporter()
    if name in exporter and None not in exporter:
        _load(exporter[name], name)
    elif name in ("__all__", "MODULES") or None in exporter:
        _load_all()
    if name in globals():
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    _load_all()
    return sorted(globals())
