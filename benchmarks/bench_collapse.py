"""Benchmark: mu over depth of random attention networks, batched vs a per-sample loop.

64 layers x 16 inputs x N = 128 tokens, d = 128 (the chapter's defaults), four
variants (masks with and without LayerNorm), float32, CPU, one thread. The
reference is `collapse_runs_loop` (the same networks, one input and one
variant at a time), run in the same process; the two results are compared
before the timing is trusted.
"""

import time

import numpy as np
import torch

from attention_geometry.attention import causal_mask, complete_mask, sliding_window_mask
from attention_geometry.collapse import Variant, collapse_runs, collapse_runs_loop, standardise_tokens

N_LAYERS, N_INPUTS, N, D = 64, 16, 128, 128
VARIANTS = [Variant("complete", complete_mask(N)), Variant("causal", causal_mask(N)),
            Variant("window", sliding_window_mask(N, 8)), Variant("causal + LN", causal_mask(N), layernorm=True)]


def timed(f, *a, **kw):
    t = time.perf_counter()
    out = f(*a, **kw)
    return out, time.perf_counter() - t


def main():
    torch.set_num_threads(1)
    X0 = standardise_tokens(torch.randn(N_INPUTS, N, D, generator=torch.Generator().manual_seed(0)))
    batched, tb = timed(collapse_runs, X0, VARIANTS, N_LAYERS, 0)
    loop, tl = timed(collapse_runs_loop, X0, VARIANTS, N_LAYERS, 0)
    # compare above the float32 rounding floor: below it mu is rounding noise in both
    above = loop.mu / loop.norm > 1e-4
    err = float(np.max(np.abs(batched.mu - loop.mu)[above] / loop.mu[above]))
    size = f"{N_LAYERS} layers x {N_INPUTS} inputs x {len(VARIANTS)} variants, N={N}, d={D}"
    print(f"{'operation':<34} {'size':<52} {'time (s)':>9} {'ratio vs loop':>14}")
    print(f"{'mu over depth, per-sample loop':<34} {size:<52} {tl:>9.2f} {1.0:>14.2f}")
    print(f"{'mu over depth, batched':<34} {size:<52} {tb:>9.2f} {tl / tb:>14.2f}")
    print(f"max relative difference of mu (float32, where mu / ||X|| > 1e-4): {err:.2e}")


if __name__ == "__main__":
    main()
