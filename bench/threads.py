"""Which numpy calls of the column scan run on two threads at once.  Not a test:
prints ratios measured in one run.

numpy releases the GIL inside most calls on large arrays, so the fast audit's tables phase runs
its utilities on two threads (``huc_ref.fast.audit.THREADS``).  For each call numpy's scan
(``huc_ref.fast.intervals.Rows._numpy``) makes per subgroup, on arrays the size of the K = 30,
n = 10^6 workload's (3.5 million entries, 10^6 atoms), this times ``2 R`` calls on one thread and
``R`` calls on each of two threads (separate arrays), alternating, the best of ``--repeat``:
``speedup`` is the first over the second (2 where the calls overlap fully, 1 where one waits for
the other).  ``np.cumsum`` into its own input is why the scan sums into a buffer of its own.

Run: ``python bench/threads.py`` (``--quick``: a tenth of the sizes).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

import numpy as np


def one_and_two(call, reps: int, repeat: int) -> tuple[float, float]:
    """Seconds per call on one thread, and per call with two threads calling at once (best of ``repeat``)."""
    call(0)
    call(1)
    alone, both = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(2 * reps):
            call(0)
        alone.append((time.perf_counter() - t) / (2 * reps))
        t = time.perf_counter()
        pair = [threading.Thread(target=lambda i=i: [call(i) for _ in range(reps)]) for i in range(2)]
        for p in pair:
            p.start()
        for p in pair:
            p.join()
        both.append((time.perf_counter() - t) / (2 * reps))
    return min(alone), min(both)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    scale = 10 if args.quick else 1
    n, m = 10**6 // scale, 3_500_000 // scale
    rng = np.random.default_rng(0)
    order = rng.permutation(n)
    rank = np.sort(rng.integers(0, n, m))
    w = rng.random(n)
    val = rng.normal(size=m) / m  # (summed in place again and again they grow, but stay finite and normal here)
    x = [val.copy() for _ in range(2)]
    out = [np.empty(m) for _ in range(2)]
    ranked = [np.empty(n) for _ in range(2)]
    calls = {
        "take weights in rank order (clip)": lambda i: np.take(w, order, out=ranked[i], mode="clip"),
        "take at entries' ranks (clip)": lambda i: np.take(ranked[i], rank, out=out[i], mode="clip"),
        "multiply": lambda i: np.multiply(val, 0.5, out=out[i]),
        "cumsum into its own input": lambda i: np.cumsum(x[i], out=x[i]),
        "cumsum into another array": lambda i: np.cumsum(x[i], out=out[i]),
    }
    print(f"n = {n}, entries = {m}, two threads on separate arrays, best of {args.repeat}")
    print(f"{'call':>36} {'1 thread ms':>12} {'2 threads ms':>13} {'speedup':>8}")
    for name, call in calls.items():
        if "cumsum" in name:
            for arr in x:
                arr[:] = val
        alone, both = one_and_two(call, 3, args.repeat)
        print(f"{name:>36} {alone * 1e3:>12.2f} {both * 1e3:>13.2f} {alone / both:>8.2f}", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
