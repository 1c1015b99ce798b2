"""Where a glued number comes from: the chapter, the code cell and the library functions.

Every number in the book's prose is glued by a chapter's code cell under a key
(``{glue:text}`cesaro-floor:.2f```). Each chapter writes each key as a string
literal in one ``glue(...)`` call, so ``grep -rn '"cesaro-floor"' book/`` finds it;
:func:`find_key` does the same from the key alone and adds what the cell calls in
the library::

    $ attention-geometry where cesaro-floor
    cesaro-floor: book/07_cesaro.md:815 (code cell 24 of the cesaro chapter)
      computed with attention_geometry.cesaro.peak_to_trough_floor, ...

A key ``x-se`` that no cell writes is the standard error glued with the estimate
``x`` (:func:`~attention_geometry.book.glue.glue`), and is found as ``x``. A key
that a cell glues through a function of the chapter's module
(``glue(chapter.affine_glue(...))``, the module
``attention_geometry/book/chapters/<chapter>.py`` keeping the bookkeeping out of
the reader's sight) is a literal key of a dict in that module, and is found there,
with the function that writes it.

The chapters' sources are read as text and parsed (:mod:`ast`); nothing is executed.
"""

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from .project import Project
from .toc import book_chapters

__all__ = ["GlueSite", "referenced_keys", "glue_sites", "glued_keys", "module_keys", "book_glue_sites", "find_key",
           "describe"]

_KEY = re.compile(r"^[a-z0-9]+(?:-[a-z0-9._]+)+$")  # the shape of a glue key: "rec-nope-words"
_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
# {glue:text}`key:fmt`, {glue}`key`, {glue:md}`key`; ```{glue:figure} key and ```{glue:md} key
_ROLE = re.compile(r"\{glue(?::[a-z]+)?\}`([^`:]+)(?::[^`]*)?`")
_DIRECTIVE = re.compile(r"^```\{glue(?::[a-z]+)?\}\s+(\S+)", re.M)
#: the aliases under which the chapters import the library and its figure modules
_LIBRARY_ALIASES = ("ag",)


@dataclass(frozen=True)
class GlueSite:
    """Where one key is glued: the chapter (its name and file), the line of the key's
    literal in the file, the code cell (counted from 1), the library functions
    (``module.function``) that compute its value or the names it reads, and those
    further back that made their inputs."""

    key: str
    chapter: str
    path: Path
    line: int
    cell: int
    functions: tuple[str, ...]
    inputs: tuple[str, ...] = ()
    function: str = ""  # the chapter module's function that writes the key (cell 0), or ""


def referenced_keys(text: str) -> set[str]:
    """The glue keys a chapter's MyST text uses (roles and directives)."""
    return {m.group(1).strip() for m in _ROLE.finditer(text)} | {m.group(1) for m in _DIRECTIVE.finditer(text)}


def _library_name(alias: str, attr: str, imports: dict[str, str]) -> str | None:
    module = imports.get(alias)
    return None if module is None else _qualified(module, attr)


@functools.lru_cache(maxsize=None)
def _qualified(module: str, attr: str) -> str:
    """``module.attr`` named by where it is defined (the flat re-export ``ag.x`` -> its module)."""
    try:
        import importlib

        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return f"{module}.{attr}"
    owner = getattr(obj, "__module__", None) or module
    return f"{owner}.{getattr(obj, '__qualname__', attr)}"


def _imports(trees: list[ast.Module], package: str = "") -> dict[str, str]:
    """alias -> module for ``import attention_geometry as ag`` and ``from attention_geometry.x import y as z``
    (and, in the module named ``package``, the relative ``from ... import y as z``)."""
    out = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("attention_geometry"):
                        out[a.asname or a.name] = a.name
            elif isinstance(node, ast.ImportFrom) and node.level and package:
                parts = package.split(".")  # the module's own name: level 1 is its package
                base = ".".join(parts[:len(parts) - node.level] + ([node.module] if node.module else []))
                for a in node.names:
                    out[a.asname or a.name] = f"{base}.{a.name}"
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("attention_geometry"):
                for a in node.names:
                    out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _keyed_values(call: ast.Call) -> list[tuple[ast.Constant, ast.expr | None]]:
    """The string literals a ``glue(...)`` call glues under (a key, or a dict's keys,
    ``|``-merged), each with the expression of its value."""
    if not call.args:
        return []
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return [(first, call.args[1] if len(call.args) > 1 else None)]
    found = []

    def walk(e):
        if isinstance(e, ast.Dict):
            found.extend((k, v) for k, v in zip(e.keys, e.values)
                         if isinstance(k, ast.Constant) and isinstance(k.value, str))
        elif isinstance(e, ast.BinOp) and isinstance(e.op, ast.BitOr):
            walk(e.left)
            walk(e.right)

    walk(first)
    if isinstance(first, ast.DictComp):  # {k: f(m) for k, m in [("key-a", "a"), ...]}: the literal keys listed
        for gen in first.generators:
            found.extend((n, first.value) for n in ast.walk(gen.iter)
                         if isinstance(n, ast.Constant) and isinstance(n.value, str) and _KEY.match(n.value))
    return found


@dataclass
class _Uses:
    """What an expression or a statement calls in the library and which names it reads."""

    functions: list[str]
    names: set[str]


def _uses(node: ast.AST, imports: dict[str, str]) -> _Uses:
    functions, names = [], set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
            name = _library_name(n.func.value.id, n.func.attr, imports)
            if name and name not in functions:
                functions.append(name)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in imports:
            name = imports[n.func.id]
            if name not in functions:
                functions.append(name)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            names.add(n.id)
    return _Uses(functions, names)


def _behind(value: ast.AST | None, defs: dict[str, _Uses], imports: dict[str, str],
            depth: int = 6) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The library functions behind an expression: the nearest ones (those it calls, or else those
    of the nearest assignments back that call any), then those further back (``depth`` at most)."""
    if value is None:
        return (), ()
    seen, levels = set(), []
    frontier = [_uses(value, imports)]
    for _ in range(depth):
        level, nxt = [], []
        for uses in frontier:
            level.extend(uses.functions)
            for name in sorted(uses.names - seen):
                seen.add(name)
                if name in defs:
                    nxt.append(defs[name])
        levels.append(level)
        frontier = nxt
    skip = (".glue", ".validate_parameters", ".run_context")
    levels = [[f for f in level if not f.endswith(skip)] for level in levels]
    first = next((i for i, level in enumerate(levels) if level), None)
    if first is None:
        return (), ()
    near = tuple(dict.fromkeys(levels[first]))
    far = tuple(dict.fromkeys(f for level in levels[first + 1:] for f in level if f not in near))
    return near, far


def _code_cells(text: str) -> list[tuple[ast.Module, int]]:
    """The chapter's code cells that parse, each with the file line of its first code line."""
    cells = []
    for m in _CELL.finditer(text):
        body = m.group(1)
        meta = re.match(r"((?::[^\n]*\n)*)", body).group(1)  # the cell's ":tags:" lines
        try:
            cells.append((ast.parse(body[len(meta):]), text.count("\n", 0, m.start(1)) + 1 + meta.count("\n")))
        except SyntaxError:
            continue
    return cells


def glue_sites(path: Path, chapter: str | None = None) -> dict[str, GlueSite]:
    """Every key a chapter's code glues as a literal, with its site and the library
    functions behind its value."""
    path = Path(path).resolve()
    stat = path.stat()
    sites = dict(_glue_sites(path, chapter or path.stem, stat.st_mtime_ns, stat.st_size))
    module = _chapter_module(path, chapter or path.stem)
    if module.exists():
        for key, site in _module_sites(module, chapter or path.stem, module.stat().st_mtime_ns):
            sites.setdefault(key, site)
    return sites


@functools.lru_cache(maxsize=64)
def _glue_sites(path: Path, chapter: str, mtime_ns: int, size: int) -> tuple[tuple[str, GlueSite], ...]:
    cells = _code_cells(path.read_text())
    imports = _imports([t for t, _ in cells])
    defs: dict[str, _Uses] = {}  # name -> what its latest assignment calls and reads
    sites = {}
    for number, (tree, first_line) in enumerate(cells, start=1):
        for statement in tree.body:
            for n in ast.walk(statement):
                if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "glue":
                    for k, v in _keyed_values(n):
                        sites.setdefault(k.value, GlueSite(k.value, chapter, path,
                                                           first_line + k.lineno - 1, number,
                                                           *_behind(v, defs, imports)))
            stored = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
                stored.add(statement.name)
            uses = _uses(statement, imports)
            for name in stored:
                previous = defs.get(name)
                if previous is not None and name in uses.names:  # x = f(x): keep what x was made from
                    uses = _Uses(uses.functions + [f for f in previous.functions if f not in uses.functions],
                                 (uses.names | previous.names) - {name})
                defs[name] = uses
    return tuple(sites.items())


def _chapter_module(path: Path, chapter: str) -> Path:
    """The chapter's module of bookkeeping (its glue dictionaries), next to the chapter's book folder."""
    return Path(path).resolve().parents[1] / "src" / "attention_geometry" / "book" / "chapters" / f"{chapter}.py"


@functools.lru_cache(maxsize=64)
def _module_sites(module: Path, chapter: str, mtime_ns: int) -> tuple[tuple[str, GlueSite], ...]:
    """The glue keys written as literal dict keys in the chapter's module, each with the function
    that writes it and the library functions behind its value."""
    tree = ast.parse(module.read_text())
    imports = _imports([tree], package=f"attention_geometry.book.chapters.{chapter}")
    sites = {}
    for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        defs: dict[str, _Uses] = {}
        for statement in ast.walk(fn):
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                        defs[name] = _uses(statement.value, imports)
        pairs = [(k, v) for d in ast.walk(fn) if isinstance(d, ast.Dict) for k, v in zip(d.keys, d.values)]
        pairs += [(t.slice, a.value) for a in ast.walk(fn) if isinstance(a, ast.Assign)  # values["key"] = ...
                  for t in a.targets if isinstance(t, ast.Subscript)]
        for k, v in pairs:
            if isinstance(k, ast.Constant) and isinstance(k.value, str) and _KEY.match(k.value):
                name = k.value
            elif isinstance(k, ast.JoinedStr) and _fstring_pattern(k):  # f"{key}-wins": found by its pattern
                name = _fstring_pattern(k)
            else:
                continue
            sites.setdefault(name, GlueSite(name, chapter, module, k.lineno, 0, *_behind(v, defs, imports),
                                            function=fn.name))
    return tuple(sites.items())


def _fstring_pattern(node: ast.JoinedStr) -> str | None:
    """A regular expression for the keys an f-string key writes (its literal parts kept), or None
    when its literal parts are too short to name a key."""
    parts = [re.escape(v.value) if isinstance(v, ast.Constant) else ".+" for v in node.values]
    literal = sum(len(v.value) for v in node.values if isinstance(v, ast.Constant))
    return "^" + "".join(parts) + "$" if literal >= 3 else None


def module_keys(path: Path, chapter: str) -> set[str]:
    """The glue keys the chapter's module writes as literal dict keys (see :func:`glue_sites`); a key
    written by an f-string appears as its pattern (``^...$``)."""
    module = _chapter_module(path, chapter)
    return set(dict(_module_sites(module, chapter, module.stat().st_mtime_ns))) if module.exists() else set()


def glued_keys(path: Path) -> list[str]:
    """Every literal key of every ``glue(...)`` call in a chapter, in order, repeats kept."""
    return [k.value for tree, _ in _code_cells(Path(path).read_text()) for n in ast.walk(tree)
            if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "glue" for k, _ in _keyed_values(n)]


def book_glue_sites(project: Project | None = None) -> dict[str, GlueSite]:
    """The glue sites of every chapter in the book (``_toc.yml``'s order)."""
    project = Project.of(project)
    out = {}
    for chapter in book_chapters(project):
        for key, site in glue_sites(project.root / "book" / f"{chapter.stem}.md", chapter.name).items():
            out.setdefault(key, site)
    return out


def find_key(key: str, project: Project | None = None) -> GlueSite | None:
    """The site of ``key`` (an ``x-se`` without a site of its own: the estimate ``x``'s), or None."""
    sites = book_glue_sites(project)
    if key in sites:
        return sites[key]
    if key.endswith("-se") and key[:-3] in sites:
        return sites[key[:-3]]
    for name, site in sites.items():  # a key written by an f-string: its pattern
        if name.startswith("^") and re.match(name, key):
            return GlueSite(key, site.chapter, site.path, site.line, site.cell, site.functions, site.inputs,
                            site.function)
    return None


def describe(site: GlueSite, project: Project | None = None) -> str:
    """Where the key's literal is, and the library functions behind its value."""
    project = Project.of(project)
    try:
        shown = site.path.resolve().relative_to(project.root)
    except ValueError:
        shown = site.path
    where = (f"{site.function} in the {site.chapter} chapter's module" if site.function
             else f"code cell {site.cell} of the {site.chapter} chapter")
    lines = [f"{site.key}: {shown}:{site.line} ({where})"]
    lines.append("  computed with " + (", ".join(site.functions) if site.functions else
                                       "no library function (a parameter, or arithmetic on the cell's values)"))
    if site.inputs:
        more = f" and {len(site.inputs) - 4} more" if len(site.inputs) > 4 else ""
        lines.append("  from inputs made by " + ", ".join(site.inputs[:4]) + more)
    return "\n".join(lines)
