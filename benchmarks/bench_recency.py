"""Benchmark: the paper's simulation (four models x four layers, 100,000 x 10 x 64),
and the control-variate estimator of the second-layer contrast at d = 64.

Part 1.

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

Part 2. The mean second-layer contrast S_{n,n-1} - S_{n,1} of the last query
at d = 64, alpha = 0 (Theorem 1's effect, about 2e-5): the plain mean of a
simulation that records no controls, against the control-variate means with
the first-layer control c_1 alone and with all four (a simulation that records
them), each on the Gram path in float64 and float32. The figure of merit is
the variance reduction per unit time, (SE_plain^2 t_plain) / (SE_cv^2 t_cv)
(target: at least 100). Nothing here is asserted; the numbers are printed.

    python benchmarks/bench_recency.py [--threads N] [--cv-samples N]
"""

import argparse
import math
import os

import numpy as np
import torch

from _timing import timed  # noqa: E402 (benchmarks/ is on sys.path when run as a script)
from attention_geometry.recency import simulation as rec

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



def control_variates(n_samples, dtype):
    """Rows (name, seconds, standard error) for the plain mean and the control-variate means."""
    model = rec.RecencyModel(d, n, 0.0, n_layers=2)
    kw = dict(n_samples=n_samples, seed=SEED, dtype=dtype, recency_probability=False)
    t_plain, plain = timed(lambda: rec.simulate_recency(model, controls=False, **kw), repeat=2)
    t_cv, cv = timed(lambda: rec.simulate_recency(model, **kw), repeat=2)
    return [("plain mean (no controls recorded)", t_plain, plain.contrast_estimate(2, None)),
            ("control variate c_1 (score)", t_cv, cv.contrast_estimate(2, ("score",))),
            ("control variates c_1..c_4", t_cv, cv.contrast_estimate(2, "all"))]


def report_control_variates(n_samples):
    print(f"\nsecond-layer contrast at d = {d}, alpha = 0, {n_samples:,} sequences, Gram path, 1 thread")
    print(f"{'estimator':<36} {'dtype':>8} {'time [s]':>9} {'estimate':>12} {'SE':>10} {'VR per time':>12}")
    for dtype in (torch.float64, torch.float32):
        rows = control_variates(n_samples, dtype)
        _, t0, e0 = rows[0]
        for name, t, est in rows:
            gain = (e0.se**2 * t0) / (est.se**2 * t)
            print(f"{name:<36} {str(dtype)[6:]:>8} {t:>9.2f} {est.value:>12.4e} {est.se:>10.2e} {gain:>11.3g}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1),
                        help="torch intra-op threads of the float64 reference (default: min(2, cores))")
    parser.add_argument("--cv-samples", type=int, default=200_000,
                        help="sequences of the control-variate comparison (default 200,000)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    t_ref, ref = timed(lambda: [reference(norm, a, g) for _, norm, a, g in ROWS])
    t_gram, gram = timed(lambda: [rec.simulate_recency(rec.RecencyModel(d, n, a, g, norm, LAYERS), N, SEED)
                                  for _, norm, a, g in ROWS], repeat=3)
    t_tok, _ = timed(lambda: [rec.simulate_recency(rec.RecencyModel(d, n, a, g, norm, LAYERS), N, SEED, method="tokens")
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
    report_control_variates(args.cv_samples)


if __name__ == "__main__":
    main()
