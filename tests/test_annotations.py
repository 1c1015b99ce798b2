"""Every public function of the annotated maths modules says what it takes and returns:
a type on every parameter and on the return (shapes are in the docstrings, ``x: (n, d)``)."""

import importlib
import inspect

import pytest

ANNOTATED = ["attention", "layernorm", "cesaro", "collapse", "ln_dynamics", "selectability", "stats", "majority",
             "layernorm_checks", "synthesis", "recency", "jacobians", "verdicts", "words", "selection", "power",
             "ratios", "evidence", "checkpoint", "models.corpus", "models.pretrained", "models.tiny_decoder", "draws",
             "factorial"]


def unannotated(module_name: str) -> list[str]:
    module = importlib.import_module(f"attention_geometry.{module_name}")
    missing = []
    for name in module.__all__:
        fn = getattr(module, name)
        if not inspect.isfunction(fn):
            continue
        sig = inspect.signature(fn)
        missing += [f"{name}({p.name})" for p in sig.parameters.values()
                    if p.annotation is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if sig.return_annotation is sig.empty:
            missing.append(f"{name} -> ?")
    return missing


@pytest.mark.parametrize("module_name", ANNOTATED)
def test_every_public_function_is_annotated(module_name):
    assert unannotated(module_name) == []


def test_the_finder_finds_a_missing_annotation(monkeypatch):
    import attention_geometry.stats as stats

    def bare(x, y: int):
        return x

    monkeypatch.setattr(stats, "bare", bare, raising=False)
    monkeypatch.setattr(stats, "__all__", [*stats.__all__, "bare"])
    assert unannotated("stats") == ["bare(x)", "bare -> ?"]
