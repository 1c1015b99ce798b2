"""Run by every chapter kernel at start-up (``IPKernelApp.exec_lines``), in a
namespace of its own: nothing here reaches the chapter's variables.

With ``AG_TORCH_THREADS`` set, torch is capped at that many threads as soon as
the chapter imports it (torch is not imported here: chapters that do not use it
do not pay for it). Standard library only; this file is executed, not imported.
"""

import importlib.abc
import importlib.machinery
import os
import sys


def _cap_torch_threads(n: int) -> None:
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
        return

    class CapOnImport(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name != "torch":
                return None
            sys.meta_path.remove(self)
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None:
                return spec
            load = spec.loader.exec_module

            def exec_module(module):
                load(module)
                module.set_num_threads(n)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, CapOnImport())


if os.environ.get("AG_TORCH_THREADS"):
    _cap_torch_threads(int(os.environ["AG_TORCH_THREADS"]))
