"""One chapter with other parameters (``make run``), into ``runs/<chapter>/<run>/``.

The run is named by its preset and the values given (``smoke_seed-3``). Its
folder holds the executed notebook ``<stem>.ipynb`` and ``html/``, the run's
report: the chapter rendered through the book's own Jupyter Book pipeline
(:mod:`.report`). It never touches the book's cache.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from .cache import notebook_record
from .execute import Execution, execute_chapter
from .leftovers import clean_leftovers
from .params import ParameterError, check_devices, check_parameters
from .project import Project
from .provenance import git_state, now
from .registry import Chapter
from .report import Report, build_report

__all__ = ["run_name", "parse_assignments", "resolve_parameters", "estimate_seconds", "RunResult", "run_chapter",
           "run_command", "check_run_name", "device_assignment"]


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
    """``["d=128", "alphas=[0.1, 0.5]"]`` -> ``{"d": 128, "alphas": [0.1, 0.5]}`` (YAML values).
    A name given twice is an error (which value was meant is not for the tool to guess)."""
    out, texts = {}, {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ParameterError(f"expected NAME=VALUE, got {item!r}")
        if name.strip() in texts:
            raise ParameterError(f"parameter {name.strip()!r} is given twice ({texts[name.strip()]!r} and "
                                 f"{value!r}); allowed: once")
        texts[name.strip()] = value
        try:
            out[name.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError as err:
            problem = getattr(err, "problem", None) or str(err).splitlines()[0]
            raise ParameterError(
                f"parameter {name.strip()!r} = {value!r} is not a value ({problem}); write numbers as 0.5, "
                "lists as [0.1,0.5] (quote the whole PARAMS) and text as plain words") from None
    return out


def resolve_parameters(chapter: Chapter, given: dict, preset: str | None) -> tuple[dict, str]:
    """The checked parameters of a run (a preset overridden by ``given``) and its name."""
    values = {}
    if preset:
        if preset != "smoke" and preset not in chapter.presets:
            raise ParameterError(
                f"unknown preset {preset!r} for {chapter.name}; presets: " + ", ".join(["smoke", *chapter.presets]))
        values = chapter.smoke if preset == "smoke" else chapter.presets[preset]
    # through the chapter's model together: a rule joining several parameters sees what the run uses
    parameters = check_parameters(chapter.params, {**values, **given})
    given = {name: parameters[name] for name in given}
    check_devices(chapter.params, parameters)
    # named by the preset (which stands for its values) and the values given here
    name = "_".join(filter(None, [preset, run_name(given) if given or not preset else ""]))
    return parameters, name


def estimate_seconds(project: Project, chapter: Chapter, parameters: dict) -> float | None:
    """The chapter's cost model for ``parameters``, calibrated on the book's own run
    at the defaults when it has one (else on the reference time in the chapter's parameter model)."""
    if chapter.cost is None:
        return None
    measured = (notebook_record(project.executed / f"{chapter.stem}.ipynb") or {})
    seconds = measured.get("seconds") if measured.get("parameters") == {} else None
    return chapter.cost.estimate(parameters, chapter.model.defaults(), seconds)


def run_command(chapter: Chapter, given: dict, preset: str | None, name: str | None = None) -> str:
    """The ``make run`` command line of a run (``name``: the run's folder, when given)."""
    params = " ".join(f"{k}={v if isinstance(v, str) else json.dumps(v, separators=(',', ':'))}"
                      for k, v in given.items())
    return (f"make run CHAPTER={chapter.name}" + (f' PARAMS="{params}"' if params else "")
            + (f" PRESET={preset}" if preset else "") + (f" NAME={name}" if name else ""))


_RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


def check_run_name(name: str) -> str:
    """``name`` if it can name a run's folder (``runs/<chapter>/<name>/``) or a sweep's."""
    if not _RUN_NAME.fullmatch(name or ""):
        raise ParameterError(f"run name {name!r} is not allowed; allowed: letters, digits and . _ + - "
                             "(not first), as one folder name")
    return name


def device_assignment(chapter: Chapter, device: str) -> list[str]:
    """``DEVICE=`` as the chapter's ``device`` parameter (``["device=cuda"]``), checked with
    the others; a chapter without one runs on the CPU: ``cpu`` is no change there, ``cuda`` an error."""
    if "device" in chapter.params:
        return [f"device={device}"]
    if device == "cpu":
        return []
    raise ParameterError(f"DEVICE = {device!r} is not available for {chapter.name}: it has no device parameter "
                         "and runs on the CPU; allowed: cpu, or no DEVICE")


@dataclass(frozen=True)
class RunResult:
    execution: Execution
    report: Report

    @property
    def notebook(self) -> Path:
        return self.execution.output


def run_chapter(project: Project, chapter: Chapter, parameters: dict, name: str, *,
                command: str = "", progress: bool = True, reference: Path | None = None,
                estimate: float | None = None) -> RunResult:
    """Execute into ``runs/<chapter>/<name>/<stem>.ipynb`` and render its report in ``html/``.

    ``reference``: an executed notebook of the chapter whose cell times give the
    progress estimate (default: the book's, if it has been executed); ``estimate``: the
    cost model's seconds, for the time left before the first chunk has run."""
    folder = project.runs / chapter.name / name
    out = folder / f"{chapter.stem}.ipynb"
    if reference is None:
        reference = project.executed / f"{chapter.stem}.ipynb"
    command = command or f"make run CHAPTER={chapter.name}"
    git = git_state(project)  # the code as the run starts
    clean_leftovers(folder)
    ex = execute_chapter(project, chapter, out, parameters, kind="run", progress=progress,
                         reference=reference if reference.exists() else None, estimate=estimate,
                         record={"command": command})
    report = build_report(project, chapter, out, folder / "html", parameters=parameters,
                          provenance={**git, "date": now(), "seconds": ex.seconds, "command": command})
    return RunResult(execution=ex, report=report)
