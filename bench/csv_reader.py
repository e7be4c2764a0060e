"""Benchmark of the CSV reader of predictions (``huc_ref.formats.read_columns``).  Not a test:
prints times and ratios measured in one run, the contenders alternating.

A softmax array of ``n`` rows and ``K`` classes, written with ``%.17g`` and a header of the
labels (as ``huc apply`` writes it), read by:

* ``read_columns``: the reader as the commands use it (numpy's ``loadtxt`` for a file of numbers);
* ``cell by cell``: the same reader's csv-module path (``_csv_columns(..., fast=False)``), which
  reads every file whose cells are not all numbers (every cell split and passed to ``float`` in
  Python);
* ``loadtxt``: ``np.loadtxt`` alone on the same text, the floor of the first;
* ``np.load``: the same array from a ``.npy`` file, for scale;

each the best of ``--repeat`` runs, and each time over ``read_columns``'s.

Run: ``python bench/csv_reader.py`` (``--quick``: 10^4 x 10).
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import describe  # noqa: E402
from huc_ref.formats import _csv_columns, read_columns  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    n, K = (10**4, 10) if args.quick else (10**5, 30)
    print(describe())
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(K), n)
    with tempfile.TemporaryDirectory() as d:
        csv_path, npy_path = Path(d, "p.csv"), Path(d, "p.npy")
        np.savetxt(csv_path, P, delimiter=",", fmt="%.17g", header=",".join(f"c{k}" for k in range(K)), comments="")
        np.save(npy_path, P)
        text = csv_path.read_text()
        contenders = {
            "read_columns": lambda: read_columns(csv_path, "predictions", numbers=True)[0],
            "cell by cell": lambda: _csv_columns(text, "p", True, fast=False)[0],
            "loadtxt": lambda: np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1),
            "np.load": lambda: np.load(npy_path),
        }
        best = dict.fromkeys(contenders, float("inf"))
        for _ in range(args.repeat):
            for name, fn in contenders.items():
                start = time.perf_counter()
                out = fn()
                best[name] = min(best[name], time.perf_counter() - start)
                assert np.array_equal(out, P), name  # every contender reads the same doubles
    print(f"n = {n}, K = {K} ({n * K:,} cells, {len(text) / 2**20:.1f} MiB of text)")
    print(f"{'reader':>14} {'s':>8} {'x read_columns':>15}")
    for name, t in best.items():
        print(f"{name:>14} {t:8.3f} {t / best['read_columns']:15.2f}")


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
