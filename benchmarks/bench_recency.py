"""Benchmark: the paper's simulation, four models x four layers, 100,000 x 10 x 64.

The four models of the paper's first figure (no LayerNorm; LayerNorm;
LayerNorm with alpha = 0.5; LayerNorm + residual with alpha = 0.5), each
simulated over four layers on 100,000 sequences of 10 tokens in d = 64, with
the mean scores, their standard errors and the recency probability per layer.

Reference: a straightforward float64 implementation in token space (draw the
tokens, normalise, score, softmax, mix, accumulate), chunked only so that its
memory stays near 1 GB, using torch's intra-op threads (at most 2). Against
it: the library's Gram-space simulation (float32, one thread), and the
library's token-space path in float32 for comparison. All in one process; the
table gives each one's time and its time ratio to the reference, and checks
that the Gram-space statistics agree with the reference within their standard
errors (they use different random draws of the same law).

    python benchmarks/bench_recency.py [--threads N]
"""

import argparse
import math
import os

import numpy as np
import torch

from _timing import timed  # noqa: E402 (benchmarks/ is on sys.path when run as a script)
from attention_geometry import recency as rec

N, n, d, LAYERS, SEED = 100_000, 10, 64, 4, 0
ROWS = [("no LN", "none", 0.0, 0.0), ("LN", "layernorm", 0.0, 0.0),
        ("LN, alpha=0.5", "layernorm", 0.5, 0.0), ("LN + res, alpha=0.5", "layernorm", 0.5, 1.0)]


def reference(norm, alpha, gamma, chunk=25_000):
    """float64, token space, the obvious way: returns mean (L, n, n), se (L, n, n), rp (L,), rp_se (L,)."""
    g = torch.Generator().manual_seed(SEED)
    c = math.sqrt(alpha / (1 - alpha))
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    trip = [(i, k, j) for i in range(n) for k in range(i) for j in range(k)]
    s1 = torch.zeros(LAYERS, n, n, dtype=torch.float64)
    s2, f1, f2 = torch.zeros_like(s1), torch.zeros(LAYERS, dtype=torch.float64), torch.zeros(LAYERS, dtype=torch.float64)
    for start in range(0, N, chunk):
        b = min(chunk, N - start)
        X = (torch.randn(b, n, d, generator=g, dtype=torch.float64)
             + c * torch.randn(b, 1, d, generator=g, dtype=torch.float64)) / math.sqrt(d)
        for layer in range(LAYERS):
            if norm == "layernorm":
                Y = X - X.mean(-1, keepdim=True)
                Y = math.sqrt(d) * Y / Y.norm(dim=-1, keepdim=True)
            else:
                Y = X
            S = Y @ Y.transpose(1, 2) / math.sqrt(d)
            A = torch.softmax(S.masked_fill(future, -math.inf), dim=-1)
            X = A @ Y + gamma * X
            s1[layer] += S.sum(0)
            s2[layer] += (S * S).sum(0)
            F = sum((S[:, i, k] > S[:, i, j]).double() for i, k, j in trip) / len(trip)
            f1[layer] += F.sum()
            f2[layer] += (F * F).sum()
    mean, fm = s1 / N, f1 / N
    se = ((s2 / N - mean**2) / (N - 1)).clamp_min(0).sqrt()
    return mean.numpy(), se.numpy(), fm.numpy(), ((f2 / N - fm**2) / (N - 1)).clamp_min(0).sqrt().numpy()



def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1),
                        help="torch intra-op threads of the float64 reference (default: min(2, cores))")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    t_ref, ref = timed(lambda: [reference(norm, a, g) for _, norm, a, g in ROWS])
    t_gram, gram = timed(lambda: [rec.simulate_recency(d, n, a, g, norm, LAYERS, N, SEED)
                                  for _, norm, a, g in ROWS], repeat=3)
    t_tok, _ = timed(lambda: [rec.simulate_recency(d, n, a, g, norm, LAYERS, N, SEED, method="tokens")
                              for _, norm, a, g in ROWS])
    size = f"4 x {N:,} x {n} x {d}, {LAYERS} layers"
    print(f"recency simulation, {size}; reference on {args.threads} thread(s), library on 1")
    print(f"{'operation':<44} {'size':>34} {'time [s]':>9} {'ratio vs reference':>19}")
    for name, t in [("reference: token space, float64", t_ref),
                    ("library: token space, float32", t_tok),
                    ("library: Gram space (Wishart), float32", t_gram)]:
        print(f"{name:<44} {size:>34} {t:>9.2f} {t_ref / t:>18.1f}x")
    z_scores, z_rp = [], []
    for (mean, se, rp, rp_se), st in zip(ref, gram):
        lower = np.tril_indices(n, -1)
        for layer in range(LAYERS):
            diff = mean[layer][lower] - st.scores[layer][lower]
            z_scores.append(np.max(np.abs(diff) / np.hypot(se[layer][lower], st.scores_se[layer][lower])))
            if rp_se[layer] > 0:
                z_rp.append(abs(rp[layer] - st.rp[layer]) / math.hypot(rp_se[layer], st.rp_se[layer]))
    print(f"agreement, Gram space vs reference: largest |difference| / SE over "
          f"{4 * LAYERS * len(lower[0])} mean scores {max(z_scores):.2f}, over {len(z_rp)} recency "
          f"probabilities {max(z_rp):.2f} (independent draws: values up to about 4 are expected)")


if __name__ == "__main__":
    main()
