"""Benchmark of the exact audit engine.  Not a test: it prints ratios measured
in one run, so machine noise cancels as far as it can.

For n sample atoms, K leaves, |U| = 3 utilities and |C| = 3 subgroups, with predictions of
small denominators and float-derived (dyadic) ones, it prints:

* the exact audit's time per atom (``Fraction``, the reference);
* the same audit on gmpy2's ``mpq`` (``rational="gmpy2"``), and the ratio;
* the ratio to brute-force interval enumeration (every (r, b) of every row, exact
  running sums) where that finishes (n = 1,000, small denominators);
* the growth of the per-atom cost from n = 1,000 to the largest n (Table 2's
  O(n log n) says it should stay flat);
* the audit of three atoms whose exact result has a million digits (``10^6 dig``).

Run: ``python bench/exact_audit.py`` (``--quick`` for a small grid; ``--no-gmpy2`` runs as if
gmpy2 were not installed: ``import gmpy2`` fails, so ``rational.reduced`` keeps CPython's gcd).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
if "--no-gmpy2" in sys.argv:  # before huc_ref is imported: as if gmpy2 were not installed
    sys.modules["gmpy2"] = None  # type: ignore[assignment]

import importlib  # noqa: E402

from bench.workloads import timed  # noqa: E402
from huc_ref import audit  # noqa: E402
from tests.shapes import million_digits, workload  # noqa: E402

audit_module = importlib.import_module("huc_ref.audit")


def brute_force_seconds(dist, utilities, t_exact):
    """Whole-audit time with Algorithm 2 replaced by enumeration of every (r, b) pair."""
    def enumerate_all(blocks):
        best = 0
        for r in range(len(blocks)):
            s = 0
            for b in range(r, len(blocks)):
                s += blocks[b]
                best = max(best, abs(s))
        return best
    saved = audit_module.max_interval_sum
    spent = {"algorithm 2": 0.0, "enumeration": 0.0}

    def spy(blocks):
        t0 = time.perf_counter()
        out = saved(blocks)
        t1 = time.perf_counter()
        assert enumerate_all(blocks) == out.sup
        spent["algorithm 2"] += t1 - t0
        spent["enumeration"] += time.perf_counter() - t1
        return out
    audit_module.max_interval_sum = spy
    try:
        audit(dist, utilities)
    finally:
        audit_module.max_interval_sum = saved
    return t_exact - spent["algorithm 2"] + spent["enumeration"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="n up to 10^4 only")
    ap.add_argument("--no-gmpy2", action="store_true", help="run as if gmpy2 were not installed")
    args = ap.parse_args()
    try:
        import gmpy2  # noqa: F401
        have_mpq = True
    except ImportError:
        have_mpq = False
    sizes = [1000, 10000] if args.quick else [1000, 10000, 100000]
    print(f"{'inputs':<7} {'K':>4} {'n':>7} {'Fraction s':>11} {'us/atom':>9} {'mpq s':>8} "
          f"{'Frac/mpq':>8} {'brute/exact':>11} {'growth':>7}")
    for kind in ("small", "float"):
        for K in (8, 30):
            first = None
            for n in sizes:
                if kind == "float" and n > 10000:
                    print(f"{kind:<7} {K:>4} {n:>7}  skipped: exact sums over 10^5 float-derived atoms "
                          "carry ~10^7-bit denominators")
                    continue
                dist, us = workload(n, K, kind)
                t_frac, res = timed(audit, dist, us, max_digits=10**12)  # the bench measures cost
                per_atom = t_frac / n
                first = first or per_atom
                mpq = ratio = "-"
                if have_mpq:
                    t_mpq, res2 = timed(audit, dist, us, rational="gmpy2", max_digits=10**12)
                    assert res2 == res, "mpq and Fraction disagree"
                    mpq, ratio = f"{t_mpq:8.2f}", f"{t_frac / t_mpq:8.2f}"
                brute = "-"
                if n <= 1000 and kind == "small":  # float-derived: O(m^2) sums of 10^5-bit rationals
                    brute = f"{brute_force_seconds(dist, us, t_frac) / t_frac:11.1f}"
                print(f"{kind:<7} {K:>4} {n:>7} {t_frac:11.2f} {per_atom * 1e6:9.0f} {mpq:>8} {ratio:>8} "
                      f"{brute:>11} {per_atom / first:7.2f}", flush=True)
    # an exact result of a million digits: three atoms of D.1's tree moved by 3^-2100000
    dist, us = million_digits()
    t_frac, res = timed(audit, dist, us, max_digits=10**12)
    mpq = ratio = "-"
    if have_mpq:
        t_mpq, res2 = timed(audit, dist, us, rational="gmpy2", max_digits=10**12)
        assert res2 == res, "mpq and Fraction disagree"
        mpq, ratio = f"{t_mpq:8.2f}", f"{t_frac / t_mpq:8.2f}"
    digits = int(res.uc.sup.denominator.bit_length() * 0.30103)
    print(f"{'10^6 dig':<7} {4:>4} {dist.n:>7} {t_frac:11.2f} {'-':>9} {mpq:>8} {ratio:>8} {'-':>11} {'-':>7}"
          f"   (UC's witness moment: {digits:,} digits)", flush=True)


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
