"""Benchmark: mu over depth of random attention networks, batched vs a per-sample loop.

128 layers x 64 inputs x N = 128 tokens, d = 64, causal mask, float32, CPU.
The reference is `mu_over_depth_loop` (same weights, one sample at a time),
run in the same process; the two results are compared before timing is trusted.
"""

import time

import numpy as np
import torch

from attention_geometry.collapse import mu_over_depth, mu_over_depth_loop, standardise_tokens
from attention_geometry.attention import causal_mask

N_LAYERS, N_INPUTS, N, D, N_INITS = 128, 64, 128, 64, 1


def timed(f, *a, **kw):
    t = time.perf_counter()
    out = f(*a, **kw)
    return out, time.perf_counter() - t


def main():
    X0 = standardise_tokens(torch.randn(N_INPUTS, N, D, generator=torch.Generator().manual_seed(0)))
    mask = causal_mask(N)
    batched, tb = timed(mu_over_depth, X0, mask, N_LAYERS, N_INITS, 0)
    loop, tl = timed(mu_over_depth_loop, X0, mask, N_LAYERS, N_INITS, 0)
    err = float(np.max(np.abs(batched["mu"] - loop["mu"]) / np.maximum(loop["mu"], 1e-30)))
    size = f"{N_LAYERS} layers x {N_INPUTS} inputs x N={N}, d={D}"
    print(f"{'operation':<34} {'size':<40} {'time (s)':>9} {'ratio vs loop':>14}")
    print(f"{'mu over depth, per-sample loop':<34} {size:<40} {tl:>9.2f} {1.0:>14.2f}")
    print(f"{'mu over depth, batched':<34} {size:<40} {tb:>9.2f} {tl / tb:>14.2f}")
    print(f"max relative difference of mu (float32): {err:.2e}")


if __name__ == "__main__":
    main()
