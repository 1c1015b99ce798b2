"""Benchmark: the last row of N^H at the paper's size (L = 2048, H = 24).

Three methods, in one process: exact rational arithmetic (the reference),
the stable O(H L) recursion in float64 and in log space, and the float64
alternating closed form. Prints time, max relative error against the exact
row, and the time ratio to the exact reference.
"""

from fractions import Fraction

import numpy as np

from _timing import timed  # noqa: E402 (benchmarks/ is on sys.path when run as a script)
from attention_geometry import cesaro

L, H, ALPHA = 2048, 24, Fraction(1, 2)



def main():
    a = float(ALPHA)
    t_exact, exact = timed(lambda: cesaro.last_row_exact(L, H, ALPHA))
    ref = np.array([float(x) for x in exact])
    methods = [
        ("exact rationals (integer recursion)", t_exact, ref),
        ("stable recursion, float64", *timed(lambda: cesaro.last_row(L, H, a), repeat=5)),
        ("stable recursion, log space",
         *(lambda t, r: (t, np.exp(r)))(*timed(lambda: cesaro.log_last_row(L, H, a), repeat=5))),
        ("alternating closed form, float64", *timed(lambda: cesaro.last_row_alternating(L, H, a))),
    ]
    print(f"last row of N^H, L = {L}, H = {H}, alpha = {ALPHA}")
    print(f"{'operation':<38} {'size':>14} {'time [s]':>10} {'max rel. error':>15} {'time / exact':>13}")
    for name, t, row in methods:
        with np.errstate(all="ignore"):
            err = np.max(np.abs(row - ref) / ref)
        err_s = f"{err:.1e}" if np.isfinite(err) else "inf/nan"
        print(f"{name:<38} {f'L={L}, H={H}':>14} {t:>10.4f} {err_s:>15} {t / t_exact:>13.1e}")


if __name__ == "__main__":
    main()
