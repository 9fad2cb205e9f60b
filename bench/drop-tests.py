"""
Why the drop test is Barnard's test over the schedule's looks and not an e-process
(docs/decisions/0195): the power of each candidate to confirm a drop from 0.9 to 0.3 on one case,
against a base of 30 attempts (10 runs of 3), with the head's schedule {3, 10} (looks 3, 5, 7, 9,
10) and the level of Holm's first step over 10 cases (0.05 / 10). Each test stays within its level
when nothing changed; the figures are the chance that it confirms the drop by the last look.

    python3 bench/drop-tests.py [--runs N]

Needs numpy and scipy. Seeded; a few minutes.
"""
import sys

import numpy as np
from scipy.stats import binom

RUNS = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 2000
NB, LOOKS, LEVEL = 30, (3, 5, 7, 9, 10), 0.005
rng = np.random.default_rng(7)


def z(b, nb, h, n):
    p = (b + h) / (nb + n)
    v = p * (1 - p) * (1 / nb + 1 / n)
    with np.errstate(all="ignore"):
        return np.where(v > 0, (b / nb - h / n) / np.sqrt(np.where(v > 0, v, 1)), 0.0)


def weights(shape):
    info = [1 / (1 / NB + 1 / n) for n in LOOKS]
    if shape == "pocock":
        return [1.0] * len(LOOKS)
    return [np.sqrt(i / info[-1]) for i in info]  # O'Brien-Fleming


def crossing(pi, t, w):
    """P(the max over the looks of w_k Z_k reaches t) at a common rate pi: every base count, the
    head's distribution carried from look to look."""
    pb = binom.pmf(np.arange(NB + 1), NB, pi)
    dist = np.zeros((NB + 1, 1))
    dist[:, 0] = 1
    prev, total = 0, 0.0
    for k, n in enumerate(LOOKS):
        inc = binom.pmf(np.arange(n - prev + 1), n - prev, pi)
        nd = np.zeros((NB + 1, dist.shape[1] + n - prev))
        for j, q in enumerate(inc):
            nd[:, j : j + dist.shape[1]] += q * dist
        hit = w[k] * z(np.arange(NB + 1)[:, None], NB, np.arange(nd.shape[1])[None, :], n) >= t - 1e-9
        total += (pb * (nd * hit).sum(1)).sum()
        nd[hit] = 0
        dist, prev = nd, n
    return total


def critical(w):
    lo, hi = 0.0, 8.0
    for _ in range(30):
        mid = (lo + hi) / 2
        if max(crossing(pi, mid, w) for pi in np.linspace(0.005, 0.995, 100)) <= LEVEL:
            hi = mid
        else:
            lo = mid
    return hi


def barnard_looks(shape, base, paths):
    w = weights(shape)
    c = critical(w)
    hit = np.zeros(len(base), bool)
    for k, n in enumerate(LOOKS):
        hit |= w[k] * z(base, NB, paths[:, n - 1], n) >= c - 1e-9
    return hit.mean()


G = (np.arange(2000) + 0.5) / 2000


def loglik(s, n, p):
    return s * np.log(p) + (n - s) * np.log1p(-p)


def e_value(sb, sh, nh):
    """Mixture over (base rate, head rate) uniform on head < base, against the best common rate:
    an e-process (valid at every look and after any top-up), the anytime-valid candidate."""
    lb, lh = loglik(sb, NB, G), loglik(sh, nh, G)
    below = np.logaddexp.accumulate(lh) - np.log(len(G))
    num = lb + below + np.log(2 / len(G))
    num = num.max() + np.log(np.exp(num - num.max()).sum())
    bh, hh = sb / NB, sh / nh
    pb, ph = (bh, hh) if hh >= bh else ((sb + sh) / (NB + nh),) * 2
    den = (sb * np.log(pb) if sb else 0) + ((NB - sb) * np.log1p(-pb) if NB - sb else 0)
    den += (sh * np.log(ph) if sh else 0) + ((nh - sh) * np.log1p(-ph) if nh - sh else 0)
    return num - den


def e_process(base, paths):
    hit = 0
    for b, path in zip(base, paths):
        hit += any(e_value(b, path[n - 1], n) >= np.log(1 / LEVEL) for n in LOOKS)
    return hit / len(base)


def main():
    base = rng.binomial(NB, 0.9, RUNS)
    paths = np.cumsum(rng.random((RUNS, LOOKS[-1])) < 0.3, axis=1)
    print(f"drop 0.9 -> 0.3, base {NB} attempts, looks {LOOKS}, level {LEVEL}, {RUNS} runs")
    print(f"  Barnard over the looks, O'Brien-Fleming weights: {barnard_looks('obf', base, paths):.3f}")
    print(f"  Barnard over the looks, Pocock (equal weights):  {barnard_looks('pocock', base, paths):.3f}")
    print(f"  e-process (mixture / best null, e-Bonferroni):   {e_process(base, paths):.3f}")
    # Knowing the base rate exactly bounds what any test of the head alone could do: one look at 10.
    known = binom.cdf(paths[:, -1], 10, 0.9) <= LEVEL
    print(f"  (a one-look test at 10 knowing the base is 0.9:   {known.mean():.3f})")


if __name__ == "__main__":
    main()
