"""One chapter with other parameters (``make run``), into ``runs/<chapter>/``.

The run is named by its preset and the values given (``smoke_seed-3``); it
writes the executed notebook and an HTML rendering whose math uses a local
MathJax, and never touches the book's cache.
"""

import json
import os
import re
import shutil
import warnings
from pathlib import Path

import yaml

from .execute import Execution, execute_chapter
from .files import write_text_atomic
from .params import ParameterError, check_parameters
from .project import Project
from .registry import Chapter

__all__ = ["run_name", "parse_assignments", "resolve_parameters", "run_chapter", "render_html"]


def run_name(parameters: dict) -> str:
    """A file name derived from the parameters: ``d_max-128_seed-3``."""
    if not parameters:
        return "defaults"
    parts = []
    for name in sorted(parameters):
        value = parameters[name] if isinstance(parameters[name], str) else json.dumps(parameters[name])
        parts.append(f"{name}-{re.sub(r'[^A-Za-z0-9.+-]+', '', value.replace(',', '+'))}")
    return "_".join(parts)


def parse_assignments(items: list[str]) -> dict:
    """``["d=128", "alphas=[0.1, 0.5]"]`` -> ``{"d": 128, "alphas": [0.1, 0.5]}`` (YAML values)."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ParameterError(f"expected NAME=VALUE, got {item!r}")
        out[name.strip()] = yaml.safe_load(value) if value.strip() else ""
    return out


def resolve_parameters(chapter: Chapter, given: dict, preset: str | None) -> tuple[dict, str]:
    """The checked parameters of a run (a preset overridden by ``given``) and its name."""
    given = check_parameters(chapter.params, given)
    parameters = dict(given)
    if preset:
        if preset != "smoke" and preset not in chapter.presets:
            raise ParameterError(
                f"unknown preset {preset!r} for {chapter.name}; presets: " + ", ".join(["smoke", *chapter.presets]))
        values = chapter.smoke if preset == "smoke" else chapter.presets[preset]
        parameters = check_parameters(chapter.params, {**values, **given})
    # named by the preset (which stands for its values) and the values given here
    name = "_".join(filter(None, [preset, run_name(given) if given or not preset else ""]))
    return parameters, name


def run_chapter(project: Project, chapter: Chapter, parameters: dict, name: str,
                progress: bool = True) -> tuple[Execution, Path]:
    """Execute into ``runs/<chapter>/<name>.ipynb`` and render it; return the execution and the HTML."""
    out = project.runs / chapter.name / f"{name}.ipynb"
    ex = execute_chapter(project, chapter, out, parameters, kind="run", progress=progress,
                         record={"command": f"make run CHAPTER={chapter.name}"})
    return ex, render_html(out)


def _mathjax_dir() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("sphinx-mathjax-offline") or importlib.util.find_spec("sphinx_mathjax_offline")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax"
    return path if path.exists() else None


def render_html(notebook: Path) -> Path:
    """An HTML rendering of an executed notebook whose math uses a local MathJax."""
    from nbconvert import HTMLExporter

    static = notebook.parent.parent / "_static" / "mathjax"
    mathjax = _mathjax_dir()
    url = None
    if mathjax is not None:
        if not static.exists():
            shutil.copytree(mathjax, static)
        url = os.path.relpath(static / "tex-chtml.js", notebook.parent) + "?config=TeX-AMS_CHTML"
    exporter = HTMLExporter(**({"mathjax_url": url} if url else {}))
    with warnings.catch_warnings():  # glue outputs have no HTML form of their own: expected
        warnings.simplefilter("ignore", UserWarning)
        body, _ = exporter.from_filename(str(notebook))
    return write_text_atomic(notebook.with_suffix(".html"), body)

