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
:mod:`.verdicts`          the rules that turn a measurement into a verdict
:mod:`.words`             the words a sentence takes from the numbers
:mod:`.checkpoint`        atomic checkpoints for long loops
:mod:`.models`            the tiny decoder, SmolLM2 (offline), the text corpus
========================  =====================================================
"""

import importlib

#: The modules whose ``__all__`` make up the package's public names, in the
#: order their names are bound (a later module's name would win, as with star
#: imports; no two modules export one name: see tests/test_layers.py).
MODULE_NAMES = ("layernorm", "layernorm_checks", "attention", "majority", "selectability", "collapse",
                "ln_dynamics", "recency", "cesaro", "jacobians", "synthesis", "stats", "verdicts", "words",
                "checkpoint", "models.corpus", "models.pretrained", "models.tiny_decoder")
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


def __getattr__(name: str):
    if name in _SUBMODULES:  # ag.selectability, ``from attention_geometry import selectability``
        return importlib.import_module(f".{_SUBMODULES[name]}", __name__)
    if name.startswith("__") and name != "__all__":
        raise AttributeError(name)
    _load_all()
    if name in globals():
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    _load_all()
    return sorted(globals())
