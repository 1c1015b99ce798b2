"""Where and how a stored result was computed: commit, machine, versions, time.

Stored paper-scale runs (:mod:`.paper`), sweeps (:mod:`.sweep`), device checks
and run reports record a :class:`Provenance`, built by :func:`computed_by` and
stored as ``provenance.json`` (:meth:`Provenance.to_json`), so that a reader of
a committed result knows what produced it. :meth:`Provenance.from_json` is the
one reader: it also reads the names older files used (:data:`LEGACY_KEYS`).
"""

import dataclasses
import importlib.metadata
import os
import platform
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .project import Project

__all__ = ["Provenance", "LEGACY_KEYS", "git", "tree_state", "git_state", "cpu_model", "device_name", "now", "machine",
           "computed_by"]

#: Names older writers gave a field -> its name now.
LEGACY_KEYS = {"wall_time_s": "wall_seconds", "seconds": "wall_seconds"}


@dataclass(frozen=True)
class Provenance(Mapping):
    """How a stored result was made. Every field may be unknown (``None``); a
    sweep names no device (its points each name their own).

    It reads as the mapping it is stored as (``p["wall_seconds"]``,
    ``p.get("commit")``: the keys of :meth:`to_json`), so that code written
    against the stored JSON keeps working; new code reads the attributes.
    """

    command: str | None = None
    commit: str | None = None  # of the code as the computation started
    dirty: bool | None = None  # uncommitted changes (stored results do not count)
    date: str | None = None  # when it finished (ISO 8601, UTC)
    device: str | None = None  # "cpu" or "cuda"
    device_name: str | None = None  # the GPU's name, or the CPU model
    cpu_model: str | None = None
    cpu_cores: int | None = None
    python: str | None = None
    torch: str | None = None
    numpy: str | None = None
    wall_seconds: float | None = None  # of every part of a run killed and resumed
    # a paper-scale run of a chapter (:mod:`.paper`)
    chapter: str | None = None
    started: str | None = None  # when its first part started
    part_started: list | None = None  # when each part started (None: not recorded)
    parts: int | None = None
    last_part_seconds: float | None = None
    part_commits: list | None = None  # the commit each part ran at (None: not recorded)
    resumed: bool | None = None
    note: str | None = None  # the chapter's own words on the run
    amendments: list | None = None  # fields its stored claims gained later (:func:`.paper.amend_stored_claims`)
    extra: dict = field(default_factory=dict)  # what else the writer records (a sweep's counts)

    #: Written even when unknown (``null``): a reader sees that they were asked for.
    ALWAYS = ("commit", "dirty")

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> "Provenance":
        """The one reader of a stored provenance: ``provenance.json``, a device
        check's, a run report's. Older names are read as their field
        (:data:`LEGACY_KEYS`); a device given only by name (``"device"``
        without ``"device_name"``) names the device too; a run in parts that did
        not record ``parts`` has one per recorded commit; other keys go to
        ``extra``."""
        if isinstance(data, Provenance):
            return data
        items = dict(data or {})
        for old, new in LEGACY_KEYS.items():
            if old in items:
                value = items.pop(old)
                items.setdefault(new, value)
        if items.get("device_name") is None and items.get("device") is not None:
            items["device_name"] = items["device"]
        if items.get("parts") is None and items.get("part_commits"):
            items["parts"] = len(items["part_commits"])
        return cls._of(items)

    @classmethod
    def _of(cls, items: Mapping[str, Any]) -> "Provenance":
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        extra = {**items.get("extra", {}), **{k: v for k, v in items.items() if k not in names and k != "extra"}}
        return cls(**{k: v for k, v in items.items() if k in names}, extra=extra)

    def to_json(self) -> dict[str, Any]:
        """The stored form: every known field (and :attr:`ALWAYS`), then ``extra``."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"}
        return {**{k: v for k, v in out.items() if v is not None or k in self.ALWAYS}, **self.extra}

    def replace(self, **changes) -> "Provenance":
        """A copy with ``changes`` (fields, or keys of ``extra``)."""
        return Provenance._of({**self.to_json(), **changes})

    # the Mapping view: the keys of the stored form
    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def __iter__(self):
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())


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


def computed_by(project: Project, *, command: str, device: str | None, git: dict | None = None,
                **more: Any) -> Provenance:
    """What every stored result records about its making: the command, the commit
    and dirty flag (``git``, as :func:`git_state` gave it when the computation
    started; measured now if not given), the date, the device and its name, and
    the machine; ``more``: the writer's own fields (of :class:`Provenance`, or
    kept in its ``extra``). ``device=None`` (a sweep, whose points each name
    their own device) leaves the device out."""
    on = {} if device is None else {"device": device, "device_name": device_name(device)}
    return Provenance._of({"command": command, **(git if git is not None else git_state(project)), "date": now(),
                           **on, **machine(), **more})
