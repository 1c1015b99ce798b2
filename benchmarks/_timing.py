"""Shared by the benchmark scripts: best-of-n wall-clock timing."""

import math
import time


def timed(f, repeat: int = 1):
    """``(best seconds over `repeat` calls, result of the last call)``."""
    best, out = math.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return best, out
