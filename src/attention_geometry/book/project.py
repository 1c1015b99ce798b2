"""The project a command works on: the folder that holds ``_toc.yml``.

Nothing in the tooling has a fixed path. A :class:`Project` is found from the
working directory (walking up to the first folder with a ``_toc.yml``; the
environment variable ``AG_ROOT`` overrides the search), never from where the
package is installed: a copied or moved clone works on itself even if its
virtual environment still points at the original. Tests build a toy project in
a temporary folder and pass it explicitly.
"""

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .registry import CHAPTERS, Chapter, find_chapter

__all__ = ["ROOT_ENV", "Project", "ProjectNotFound"]

ROOT_ENV = "AG_ROOT"


class ProjectNotFound(FileNotFoundError):
    """No folder with a ``_toc.yml`` at or above the working directory."""


@dataclass(frozen=True, eq=False)
class Project:
    """A book project: its root folder and its chapters' specifications."""

    root: Path
    chapters: Mapping[str, Chapter] = field(default_factory=lambda: CHAPTERS)

    def __post_init__(self):
        object.__setattr__(self, "root", Path(self.root).resolve())

    @classmethod
    def find(cls, start: str | os.PathLike | None = None, *,
             chapters: Mapping[str, Chapter] | None = None) -> "Project":
        """The project holding ``start`` (default: the working directory), or ``$AG_ROOT``."""
        extra = {} if chapters is None else {"chapters": chapters}
        override = os.environ.get(ROOT_ENV)
        if override and start is None:
            root = Path(override)
            if not (root / "_toc.yml").is_file():
                raise ProjectNotFound(f"{ROOT_ENV}={override}: no _toc.yml in that folder")
            return cls(root, **extra)
        here = Path(start if start is not None else os.getcwd()).resolve()
        for folder in (here, *here.parents):
            if (folder / "_toc.yml").is_file():
                return cls(folder, **extra)
        raise ProjectNotFound(
            f"no _toc.yml in {here} or any folder above it: run this inside the book's "
            f"repository (or set {ROOT_ENV} to its root)"
        )

    @classmethod
    def of(cls, project: "Project | str | os.PathLike | None") -> "Project":
        """``project`` itself, the project rooted at a folder, or (``None``) the one found from
        the working directory, else the clone holding this package (``ProjectNotFound`` if
        neither)."""
        if isinstance(project, Project):
            return project
        if project is not None:
            return cls(project)
        try:
            return cls.find()
        except ProjectNotFound:
            # a chapter's notebook run outside the repository (downloaded from the book):
            # the clone the library is installed from, if it is one
            return cls.find(Path(__file__).parent)

    def chapter(self, name: str) -> Chapter:
        """The chapter called ``name`` (or whose source stem is ``name``); ``KeyError`` lists them."""
        return find_chapter(self.chapters, name)

    @property
    def toc(self) -> Path:
        return self.root / "_toc.yml"

    @property
    def src(self) -> Path:
        """The library's source folder (kernels import the library from here)."""
        return self.root / "src"

    def pythonpath(self) -> str:
        """``PYTHONPATH`` for a process that imports the library (a chapter's kernel, Jupyter
        Book): :attr:`src` first, so a moved clone runs its own library, then the caller's."""
        return os.pathsep.join(filter(None, [str(self.src), os.environ.get("PYTHONPATH")]))

    @property
    def build(self) -> Path:
        return self.root / "_build"

    @property
    def executed(self) -> Path:
        """Executed chapter notebooks, one per chapter: the book's cache."""
        return self.build / "executed"

    @property
    def stage(self) -> Path:
        """The book laid out for Jupyter Book."""
        return self.build / "stage"

    @property
    def html(self) -> Path:
        return self.build / "html"

    @property
    def runs(self) -> Path:
        """Parameterised runs and sweeps (``make run``, ``make sweep``)."""
        return self.root / "runs"

    @property
    def results(self) -> Path:
        """Stored paper-scale runs, committed: ``results/<chapter>/paper/``."""
        return self.root / "results"

    def paper_folder(self, chapter: Chapter) -> Path:
        return self.results / chapter.name / "paper"
