"""Packages whose modules load on first use.

The package and its subpackages (:mod:`.recency`, :mod:`.jacobians`) re-export
their modules' public names flat, each module's ``__all__``. Importing a package
imports none of its modules: ``package.<name>`` imports the module that exports
``name`` (and what that module imports). So the library modules a chapter's kernel
has loaded are those it used, and the book's cache re-executes a chapter only when
one of them changes (:mod:`.book.cache`). Which module exports which name is read
from the sources, each module's ``__all__``, without importing them.
"""

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["lazy_exports", "read_all", "source"]


def source(folder: Path, module: str) -> Path:
    """The source of ``module`` (dotted, under the package folder ``folder``): its
    ``.py`` file, or a subpackage's ``__init__.py``."""
    base = Path(folder).joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _module_names(node: ast.expr, assigned: dict[str, ast.expr]) -> list[str] | None:
    """The tuple of module names ``node`` is, or names (a variable assigned before)."""
    if isinstance(node, ast.Name):
        node = assigned.get(node.id)
    if isinstance(node, (ast.Tuple, ast.List)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]
    return None


def _targets(node: ast.Assign) -> list[str | None]:
    names = []
    for target in node.targets:
        names += [getattr(t, "id", None) for t in (target.elts if isinstance(target, ast.Tuple) else [target])]
    return names


def read_all(folder: Path, module: str) -> list[str] | None:
    """The ``__all__`` of ``module`` (dotted, under the package folder ``folder``), read
    from its source without importing it: assigned, then extended (``+=``), with
    lists of strings or of ``*submodule.__all__``; or, in a package made by
    :func:`lazy_exports`, its modules' in turn. ``None`` when written otherwise
    (tests/test_layers.py checks that every module's is read)."""
    try:
        tree = ast.parse(source(folder, module).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    names, assigned = None, {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and "__all__" in _targets(node):
            if (isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "lazy_exports"
                    and len(node.value.args) == 2):
                modules = _module_names(node.value.args[1], assigned)
                parts = None if modules is None else [read_all(folder, f"{module}.{m}") for m in modules]
                if parts is None or None in parts:
                    return None
                names = [n for part in parts for n in part]
                continue
            names = []
        elif isinstance(node, ast.Assign):
            assigned.update({t: node.value for t in _targets(node) if t})
            continue
        elif not (isinstance(node, ast.AugAssign) and getattr(node.target, "id", None) == "__all__"
                  and isinstance(node.op, ast.Add) and names is not None):
            continue
        if not isinstance(node.value, (ast.List, ast.Tuple)):
            return None
        for item in node.value.elts:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                names.append(item.value)
            elif (isinstance(item, ast.Starred) and isinstance(item.value, ast.Attribute)
                  and item.value.attr == "__all__" and isinstance(item.value.value, ast.Name)
                  and (more := read_all(folder, f"{module}.{item.value.value.id}")) is not None):
                names.extend(more)
            else:
                return None
    return names


def lazy_exports(package: str, modules: tuple[str, ...]) -> tuple[list[str], Callable, Callable]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for the package ``package`` (its
    ``__name__``, while it is being imported) whose public names are those of its
    ``modules``, in that order; a package's ``__init__`` ends with::

        MODULE_NAMES = ("simulation", "theory", "extensions")
        __all__, __getattr__, __dir__ = lazy_exports(__name__, MODULE_NAMES)

    ``package.<name>`` imports the module that exports ``name`` and binds the name in
    the package; ``package.<module>`` imports that module. ``__all__`` is read from the
    modules' sources; where one cannot be read so, every module is imported for it."""
    namespace = vars(sys.modules[package])
    folder = Path(namespace["__file__"]).parent
    table: dict[str, str] = {}
    for module in modules:
        names = read_all(folder, module)
        if names is None:  # written in a way the reader does not follow: import them all
            loaded = [importlib.import_module(f".{m}", package) for m in modules]
            table = {n: m.__name__.rsplit(".", 1)[1] for m in loaded for n in m.__all__}
            break
        table.update({n: module for n in names if n not in table})

    def __getattr__(name: str):
        if name in modules:
            return importlib.import_module(f".{name}", package)
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{table[name]}", package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *table, *modules})

    return list(table), __getattr__, __dir__
