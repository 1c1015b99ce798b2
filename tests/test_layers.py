"""The package's three layers: the maths imports neither the figures nor the tooling
nor their libraries, the figures do not import the tooling, and no modules of the
package import each other in a circle. import-linter checks them (every import
statement, function-level ones included) against the contracts in pyproject.toml's
``[tool.importlinter]``; the tests here run it, and check that it catches a bad import."""

import ast
import os
import shutil
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = SRC.parent
PACKAGE = "attention_geometry"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}


def layer(name: str) -> str:
    if name.startswith(f"{PACKAGE}.book"):
        return "book"
    if name.startswith(f"{PACKAGE}.figures"):
        return "figures"
    return "maths"


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the package under ``root/src`` with ``root/pyproject.toml``'s contracts."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root / "src"),
                                                                      os.environ.get("PYTHONPATH")]))}
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run([sys.executable, "-c", code, "--no-cache", "--config", str(root / "pyproject.toml")],
                          cwd=root, env=env, capture_output=True, text=True)


def test_the_import_contracts_are_kept():
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 kept, 0 broken" in done.stdout


def test_every_maths_module_is_under_the_maths_contract():
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    listed = next(c for c in contracts if c["type"] == "forbidden")["source_modules"]
    maths = {n for n in MODULES if layer(n) == "maths" and n != PACKAGE}
    assert maths and listed
    missing = sorted(n for n in maths if not any(n == s or n.startswith(f"{s}.") for s in listed))
    assert not missing, f"add {missing} to the maths contract's source_modules in pyproject.toml"


@pytest.mark.parametrize("module, added, broken", [
    ("stats.py", "\n\ndef _plot():\n    import matplotlib\n", "the maths imports no figures"),
    ("figures/theme.py", "\n\ndef _glue():\n    from ..book import glue\n", "the tooling sits above the figures"),
    ("_checks.py", "\n\ndef _stats():\n    from . import stats\n", "no import cycles"),
], ids=["maths-imports-matplotlib", "figures-import-the-tooling", "cycle"])
def test_the_contracts_catch_a_bad_import(tmp_path, module, added, broken):
    shutil.copytree(SRC / PACKAGE, tmp_path / "src" / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with open(tmp_path / "src" / PACKAGE / module, "a") as fh:
        fh.write(added)
    done = lint_imports(tmp_path)
    assert done.returncode != 0 and "Broken contracts" in done.stdout
    assert broken in done.stdout.split("Broken contracts", 1)[1]


def test_importing_the_maths_loads_no_tooling_no_plotting():
    # ag.__all__ loads every mathematics module (import attention_geometry alone loads none)
    code = ("import sys, attention_geometry as ag; ag.__all__; print(sorted(m for m in sys.modules "
            "if m.startswith('attention_geometry.book') or m.startswith('attention_geometry.figures') "
            "or m.split('.')[0] in ('matplotlib', 'seaborn', 'yaml', 'papermill', 'dask')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_tooling_loads_no_torch_and_no_scipy():
    """A chapter kernel that only glues (``from attention_geometry.book import glue``)
    must not pay for torch: the package loads its mathematics on first use."""
    code = ("import sys, attention_geometry.book; print(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('torch', 'scipy', 'transformers', 'matplotlib')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_importing_nbformat_builds_no_rfc3987_grammar():
    """Every kernel (myst_nb's glue), worker and command imports nbformat, and with it
    jsonschema; from 4.25 on jsonschema imports rfc3987-syntax, which builds an Earley
    grammar on import (2.7 CPU-s each time). requirements.txt pins a jsonschema without it."""
    code = "import sys, nbformat, myst_nb.ext.glue; print('rfc3987_syntax' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_every_public_name_comes_from_one_module_and_shadows_no_module():
    import attention_geometry as ag

    owners = {}
    for module in ag.MODULES:
        for name in module.__all__:
            owners.setdefault(name, []).append(module.__name__)
    assert not {n: m for n, m in owners.items() if len(m) > 1}
    assert not set(owners) & {name.rsplit(".", 1)[-1] for name in ag.MODULE_NAMES}
    assert ag.layer_norm.__module__ == "attention_geometry.layernorm" and ag.selectability.__name__.endswith("selectability")


def test_a_public_name_loads_only_the_module_that_exports_it():
    """``ag.last_row`` imports cesaro (and what cesaro imports), not the rest of the
    mathematics: the modules a chapter's kernel loaded are those it used, which is what
    the book's cache keys a chapter on (issue 32 item 9)."""
    code = ("import sys, attention_geometry as ag; ag.last_row; from attention_geometry import layer_norm; "
            "print(sorted(m.split('.', 1)[1] for m in sys.modules if m.startswith('attention_geometry.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(["_checks", "_lazy", "cesaro", "layernorm"])


def test_a_subpackage_loads_only_the_module_that_exports_a_name():
    """The subpackages (recency, jacobians) load their modules lazily too: a chapter that
    uses the simulation of chapter 6 has not loaded its closed forms, so editing those
    re-executes it not (tests/test_cache.py). A name no module exports loads nothing."""
    code = ("import sys, attention_geometry as ag; hasattr(ag, '_repr_html_'); ag.RecencyModel; "
            "from attention_geometry.jacobians import layer_gains; print(sorted(m.split('.', 1)[1] "
            "for m in sys.modules if m.startswith(('attention_geometry.recency', 'attention_geometry.jacobians'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(["jacobians", "jacobians.theory", "recency", "recency.simulation"])


@pytest.mark.parametrize("package", ["recency", "jacobians"])
def test_a_lazy_subpackage_keeps_its_public_names(package):
    import importlib

    imported = importlib.import_module(f"{PACKAGE}.{package}")
    modules = [importlib.import_module(f"{PACKAGE}.{package}.{m}") for m in imported.MODULE_NAMES]
    assert imported.__all__ == [n for m in modules for n in m.__all__]
    assert all(getattr(imported, n) is getattr(m, n) for m in modules for n in m.__all__)
    assert set(imported.__all__) | set(imported.MODULE_NAMES) <= set(dir(imported))
    assert imported.theory is modules[imported.MODULE_NAMES.index("theory")]  # a module by its name
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        imported.nothing


def test_the_public_names_read_from_the_sources_are_the_modules_all():
    """The lazy ``ag.<name>`` finds a name's module by reading every ``__all__`` from the
    sources; each must be read, and read as the imported module has it."""
    import attention_geometry as ag

    for module in ag.MODULES:
        assert ag._exports(module.__name__.split(".", 1)[1]) == list(module.__all__), module.__name__
    assert None not in ag._exporter()


# errors of the maths that are not about an argument (a failed root bracket, a failed solver, an overflow)
NOT_ARGUMENT_ERRORS = {("attention_geometry.cesaro", "_bisect")}


def argument_errors_raised_by_hand(name: str) -> list[str]:
    """``raise ValueError(...)`` / ``raise TypeError(...)`` in module ``name``, by enclosing function:
    the argument errors that bypass ``_checks.fail`` (its one message format)."""
    tree = ast.parse(MODULES[name].read_text(), str(MODULES[name]))
    found = []
    for fn in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        for node in ast.walk(fn):
            if (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
                    and isinstance(node.exc.func, ast.Name) and node.exc.func.id in ("ValueError", "TypeError")
                    and (name, fn.name) not in NOT_ARGUMENT_ERRORS):
                found.append(f"{fn.name}:{node.lineno}")
    return sorted(set(found))


@pytest.mark.parametrize("name", [n for n in MODULES if layer(n) == "maths" and not n.endswith("._checks")])
def test_maths_argument_errors_go_through_the_one_helper(name):
    assert argument_errors_raised_by_hand(name) == []


def test_the_hand_raised_error_finder_finds_them(tmp_path, monkeypatch):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x):\n    if x:\n        raise ValueError(f'x = {x}')\n    raise fail('x', x, 'no')\n")
    monkeypatch.setitem(MODULES, "attention_geometry.bad", bad)
    assert argument_errors_raised_by_hand("attention_geometry.bad") == ["f:3"]


def redefined_top_level_names(path: Path) -> list[str]:
    """Functions and classes defined twice at the top of one file: the second silently replaces
    the first (two ``pytest_collection_modifyitems`` in conftest.py made the first one dead)."""
    seen, twice = set(), []
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name in seen:
                twice.append(f"{node.name}:{node.lineno}")
            seen.add(node.name)
    return twice



SOURCES = sorted([*(SRC / PACKAGE).rglob("*.py"), *(ROOT / "tests").glob("*.py"), *(ROOT / "benchmarks").glob("*.py")])


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_file_defines_a_top_level_name_twice(path):
    assert redefined_top_level_names(path) == []




@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_every_source_compiles_without_a_warning(path):
    """An invalid escape such as ``"\\mathbf"`` in a docstring is a warning today and an error in a
    later Python: a docstring with LaTeX is a raw string."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile(path.read_text(), str(path), "exec")


def test_the_compile_check_sees_an_invalid_escape():
    with warnings.catch_warnings(), pytest.raises(SyntaxError, match="invalid escape sequence"):
        warnings.simplefilter("error")
        compile('def f():\n    """:math:`\\mathbf 1`"""\n', "bad.py", "exec")


def test_the_redefinition_finder_finds_them(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def hook(items):\n    pass\n\n\nclass A:\n    pass\n\n\ndef hook(items):\n    pass\n")
    assert redefined_top_level_names(bad) == ["hook:9"]


# ----------------------------------------------------------------------------------------------
# No maths module returns English: sentences come from attention_geometry.words, verdicts and the
# claims they stand in from attention_geometry.verdicts; the mathematics returns numbers.

NOT_MATHS_PROSE = {f"{PACKAGE}.words", f"{PACKAGE}.verdicts"}  # the two layers whose job is words
# Strings a maths function may return, each not prose for a reader:
PROSE_ALLOWED = {
    # argument-error messages (raised, never shown in a chapter): the one message format
    (f"{PACKAGE}._checks", "*"),
    # a number's notation, "0.866 ± 0.028" / "0.27 [0.25, 0.30]", and its str(); the degenerate
    # form names the search range that binds instead of a value that is not one
    (f"{PACKAGE}.stats", "Estimate.format"), (f"{PACKAGE}.stats", "Estimate.__str__"),
    (f"{PACKAGE}.stats", "FittedParameter.format"), (f"{PACKAGE}.stats", "FittedParameter.__str__"),
    (f"{PACKAGE}.ratios", "ExactProportion.format"),  # "2/2,000 = 0.001": the count, as its exact interval is read
    # a name from a fixed set that code compares ("degenerate" / "interior"; "U-shape", "monotone", ...)
    (f"{PACKAGE}.stats", "FittedParameter.label"), (f"{PACKAGE}.cesaro", "classify_profile"),
    (f"{PACKAGE}.stats", "band_position"),  # "below" / "within" / "above", one per value
    (f"{PACKAGE}.recency.simulation", "control_names"),  # of the fixed CONTROLS, ("score", "weight", "U", "T")
    (f"{PACKAGE}.evidence", "core_rule"),  # a rule's name from the fixed set of rules, not a phrase
    (PACKAGE, "_exports"), (PACKAGE, "_exporter"),  # the package's public names, read from the sources
    (f"{PACKAGE}._lazy", "*"),  # the same, for the subpackages: names of code, not prose
    (f"{PACKAGE}._parallel", "_recording"),  # a unit's result, and the files of the modules its worker imported
    # the text corpus: data the models read, not words about a result
    (f"{PACKAGE}.models.corpus", "_stdlib_corpus"), (f"{PACKAGE}.models.corpus", "_extract_stdlib_corpus"),
    (f"{PACKAGE}.models.corpus", "_folder_corpus"), (f"{PACKAGE}.models.corpus", "load_corpus"),
    (f"{PACKAGE}.models.tiny_decoder", "split_texts"),  # the corpus's paragraphs, training and held out
    # a checkpoint's file-name digest (hex) and a debugging repr
    (f"{PACKAGE}.checkpoint", "key_digest"), (f"{PACKAGE}.checkpoint", "CheckpointStore.__repr__"),
    (f"{PACKAGE}.checkpoint", "code_digest"), (f"{PACKAGE}.jacobians.profiles", "profile_code_digest"),  # hex, of code
    (f"{PACKAGE}.evidence", "_estimate_name"),  # a class's name in stored evidence ("draws.DrawEstimate")
}
MAKES_A_VERDICT = {"Verdict", "Claim", "not_tested"}  # and every *_verdict rule


def _is_text(node) -> bool:
    """Whether the expression ``node`` builds a string with a space in it: a phrase, not a token."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and " " in node.value
    if isinstance(node, ast.JoinedStr):
        return " " in "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.IfExp):
        return _is_text(node.body) or _is_text(node.orelse)
    if isinstance(node, ast.BoolOp):
        return any(_is_text(v) for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _is_text(node.left) or _is_text(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("join", "format"):
        inner = [node.func.value, *node.args]
        return any(_is_text(n) or any(_is_text(e) for e in getattr(n, "elts", [getattr(n, "elt", None)]) if e)
                   for n in inner)
    return False


def english_returned(name: str) -> list[str]:
    """The functions of module ``name`` (methods as ``Class.method``) that return English: a ``str``
    return annotation, a returned phrase (a string or f-string with a space), or a verdict or
    claim built in their body."""
    tree = ast.parse(MODULES[name].read_text(), str(MODULES[name]))
    found = []

    def visit(body, prefix=""):
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{prefix}{node.name}"
                if (name, "*") in PROSE_ALLOWED or (name, qual) in PROSE_ALLOWED:
                    continue
                why = []
                ann = ast.unparse(node.returns) if node.returns is not None else ""
                strings = ann.split("[")[0] in ("list", "tuple", "Sequence") and ann.split("[")[-1].startswith("str")
                if ann == "str" or "str |" in ann or "| str" in ann or strings:
                    why.append(f"returns {ann}")
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Return) and sub.value is not None and _is_text(sub.value):
                        why.append(f"a phrase at line {sub.lineno}")
                    if isinstance(sub, ast.Call):
                        called = getattr(sub.func, "id", None) or getattr(sub.func, "attr", "")
                        if called in MAKES_A_VERDICT or called.endswith("_verdict"):
                            why.append(f"{called} at line {sub.lineno}")
                if why:
                    found.append(f"{qual}: {why[0]}")
                visit(node.body, f"{qual}.")  # nested helpers

    visit(tree.body)
    return found


@pytest.mark.parametrize("name", [n for n in MODULES if layer(n) == "maths" and n not in NOT_MATHS_PROSE])
def test_no_maths_module_returns_english(name):
    assert english_returned(name) == [], f"{name} returns words: move them to words.py / verdicts.py"


def test_the_english_finder_finds_sentences_and_verdicts(tmp_path, monkeypatch):
    bad = tmp_path / "bad.py"
    bad.write_text("def share_words(low, high):\n    return 'almost entirely' if low > 0.8 else 'partly'\n\n\n"
                   "def steps_words(n):\n    return f'{n:,} steps in all'\n\n\n"
                   "def label(x) -> str:\n    return x\n\n\n"
                   "def rule(est):\n    return not_tested('no run')\n\n\n"
                   "def joined(rows):\n    return ', '.join(f'{k} (the original: {v})' for k, v in rows)\n\n\n"
                   "def numbers(x):\n    return {'mean': x.mean(), 'name': 'x'}\n")
    monkeypatch.setitem(MODULES, "attention_geometry.bad", bad)
    assert [f.split(":")[0] for f in english_returned("attention_geometry.bad")] == [
        "share_words", "steps_words", "label", "rule", "joined"]


def test_the_tooling_docstring_names_every_module_of_the_tooling():
    """A newcomer finds each module of ``book`` in its package docstring's table."""
    table = ast.get_docstring(ast.parse((SRC / PACKAGE / "book" / "__init__.py").read_text()))
    names = {p.stem for p in (SRC / PACKAGE / "book").glob("*.py") if p.stem != "__init__"}
    missing = sorted(n for n in names if f"``{n}``" not in table)
    assert not missing, f"not in attention_geometry.book's module table: {missing}"
