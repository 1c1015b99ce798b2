"""The ``attention-geometry`` command's entry point (``[project.scripts]`` in pyproject.toml).

Ctrl-C prints ``interrupted`` and nothing else, from the first line of the project
that runs. Importing the command line (:mod:`.cli`: pandas, papermill, pydantic,
nbformat) takes about a second, and a Ctrl-C in that second used to print the
traceback of whichever import it hit. So the command starts here: this module
imports the standard library only (``attention_geometry`` and its ``book``
package import nothing more, see their ``__getattr__``), installs a handler for
SIGINT and SIGTERM, and only then imports :mod:`.cli`, whose
:func:`~.cli.entry` replaces the handler with one that unwinds a running command.
Before that nothing has started, so nothing needs undoing: the handler here
prints ``interrupted`` and leaves at once, with the exit status 130.

What is left is the start-up before this handler: Python's own (``site``) and
the import of this module with the two packages' ``__init__`` (2-3 hundredths of
a second; 0.1-0.2 s on two busy cores). A Ctrl-C in the first part of it ends
the process silently (Python has no handler yet), one later prints Python's
``KeyboardInterrupt`` traceback: no code of the project can run earlier.
"""

import os
import signal

__all__ = ["entry"]


def _interrupted_while_starting(signum, frame):
    os.write(2, b"interrupted\n")
    os._exit(130)


def entry(argv: list[str] | None = None, project=None) -> None:
    """The ``attention-geometry`` command: :func:`.cli.entry`, quiet on Ctrl-C from the start."""
    signal.signal(signal.SIGINT, _interrupted_while_starting)
    signal.signal(signal.SIGTERM, _interrupted_while_starting)
    from .cli import entry as run

    run(argv, project)
