"""Where and how a stored result was computed: commit, machine, versions, time.

Stored paper-scale runs (:mod:`.paper`) and sweeps (:mod:`.sweep`) keep a
``provenance.json`` built from these pieces, so that a reader of a committed
result knows what produced it.
"""

import importlib.metadata
import os
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from .project import Project

__all__ = ["git", "tree_state", "git_state", "cpu_model", "device_name", "now", "machine", "computed_by"]


def git(folder: Path, *args: str) -> str | None:
    """The output of ``git args`` run in ``folder``, stripped; ``None`` if git is missing or fails."""
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def tree_state(folder: Path) -> dict:
    """``{"commit": sha or None, "dirty": bool or None}`` of the tree under ``folder``;
    stored results (``results/``) do not count as changes."""
    status = git(folder, "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results")
    return {"commit": git(folder, "rev-parse", "HEAD"), "dirty": None if status is None else bool(status)}


def git_state(project: Project) -> dict:
    """:func:`tree_state` of the project's root."""
    return tree_state(project.root)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_name(device: str) -> str:
    """The GPU's name for ``"cuda"``, else the CPU model."""
    if device == "cuda":
        import torch

        return torch.cuda.get_device_name()
    return cpu_model()


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def machine() -> dict:
    """The machine and the versions that matter for the numbers."""
    return {"cpu_model": cpu_model(), "cpu_cores": os.cpu_count(), "python": platform.python_version(),
            "torch": _version("torch"), "numpy": _version("numpy")}


def computed_by(project: Project, *, command: str, device: str | None, git: dict | None = None) -> dict:
    """What every stored result records about its making: the command, the commit
    and dirty flag (``git``, as :func:`git_state` gave it when the computation
    started; measured now if not given), the date, the device and its name, and
    the machine. ``device=None`` (a sweep, whose points each name their own
    device) leaves the device out."""
    on = {} if device is None else {"device": device, "device_name": device_name(device)}
    return {"command": command, **(git if git is not None else git_state(project)), "date": now(), **on,
            **machine()}
