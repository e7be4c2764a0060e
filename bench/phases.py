"""Benchmark of the fast audit's two phases.  Not a test: prints ratios measured in one run.

The workload of ``bench/fast_audit.py`` (a depth-7 tree with K = 30 leaves, |U| = 5 top-1
utilities at depths 3..7, |C| = 7 subgroups, n = 10^6 softmax rows; ``--K`` and ``--n`` change
the leaves and the rows, ``--U`` keeps the deepest of the utilities); per engine:

* ``sample s``: the sample pass (``sample_terms``: the scores, residuals and path terms of
  every utility, F.4), and its ratio ``x read`` to numpy summing the ``n x K`` matrix once;
* ``tables s``: every utility's sort and Algorithm 2 on all its columns (``sample_tables``);
* ``audit s``: the whole ``fast.audit``, and ``x sorts``: its ratio to |U| argsorts of n floats;
* ``cpu s``: the audit's process time (both threads), which the machine's noise moves less;
* ``sys s`` and ``faults``: of that, the kernel's time, and the audit's minor page faults: memory
  the allocator took back from the kernel and asks for again, whose first touch costs a fault
  (per 4 KiB page, or per 2 MiB huge page where numpy asks for those).

Every figure is the best of ``--repeat`` runs, the contenders alternating.  With
``--against REV`` the same figures for the code of git revision ``REV`` (a temporary worktree),
measured in separate processes alternating with this checkout's, and the ratios of this code's
figures to that revision's.

With ``--retain`` (glibc only) this code is also measured in processes started with
``GLIBC_TUNABLES`` set so that glibc keeps the memory it frees (``RETAIN``) instead of giving
it back to the kernel: the same work, without most of the faults, so the two rows show what
fresh memory costs.

With ``--audit-only`` the phases are not run apart: each process times whole audits only, so what
one audit leaves to the allocator is what the next one finds (the phases' own calls change that:
their buffers, freed, are the audit's next); with ``--engine numba`` as a process that audits with
one engine only.

With ``--cache-block 65536,262144`` this code is measured in processes alternating, each with
numpy's column scan reading that many positions at a time (``huc_ref.fast.intervals.CACHE_BLOCK``),
and each figure's ratio to the first value's; with ``--K 1000 --n 400000`` (any K: the same
depth-7 tree, utilities and subgroups) on many short columns.

Run: ``python bench/phases.py`` (``--quick``: n = 10^5; ``--against 06c69c5``: before and after;
``--retain``: the allocator's part; ``--engine numba --n 100000 --U 2``: numba's tables with two
utilities; ``--engine numpy --K 1000 --n 400000 --cache-block
65536,262144,1048576``: numpy's stretch length).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
FIGURES = ("sample", "tables", "audit", "cpu", "sys", "faults", "read", "argsort")
#: glibc's tunables that keep freed memory in the process: no trimming of the heap, and
#: allocations up to 1 GiB from the heap rather than from fresh mappings
RETAIN = "glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=1073741824"


def measure(root: Path, n: int, repeat: int, only: str | None = None, K: int = 30,
            cache_block: int | None = None, audit_only: bool = False, U: int = 5) -> dict:
    """The figures (seconds, best of ``repeat``) of the code under ``root``, per engine, on the
    depth-7 tree with ``K`` leaves; ``cache_block``: numpy's scan reads that many positions at a
    time (``CACHE_BLOCK``) instead of its default; ``audit_only``: the phases are not timed apart."""
    sys.path.insert(0, str(root))
    import importlib
    import resource

    import numpy as np

    from bench.fast_audit import depth_tree, sample, utilities
    from huc_ref import fast
    passes = importlib.import_module("huc_ref.fast.audit")
    if cache_block is not None:
        importlib.import_module("huc_ref.fast.intervals").CACHE_BLOCK = cache_block
    tree = depth_tree(K, 7)
    us = dict(list(utilities(tree).items())[-U:])  # (the deepest U)
    P, y, groups = sample(tree, n)
    ft = passes.FastTree(tree)
    W = np.stack(list(groups.values())).T / n  # (one subgroup's weights contiguous, as fast.audit passes them)
    column = P[:, 0].copy()
    engines = [e for e in ["numpy"] + (["numba"] if fast.numba_available() else []) if only in (None, e)]
    best = {e: dict.fromkeys(FIGURES, math.inf) for e in engines}
    for e in engines:  # (compiles the kernels, warms the allocator)
        fast.audit(y, P, tree, us, subgroups=groups, accelerator=e)
    for _ in range(repeat):
        for e in engines:
            b = best[e]
            if not audit_only:
                t = time.perf_counter()
                terms = passes.sample_terms(ft, P, y, us, engine=e, row_sum_tolerance=passes.ROW_SUM_TOLERANCE)
                b["sample"] = min(b["sample"], time.perf_counter() - t)
                t = time.perf_counter()
                passes.sample_tables(ft, terms, y, W, us, engine=e)
                b["tables"] = min(b["tables"], time.perf_counter() - t)
                del terms
            t, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
            fast.audit(y, P, tree, us, subgroups=groups, accelerator=e)
            b["audit"] = min(b["audit"], time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_SELF)
            sys_s = after.ru_stime - before.ru_stime
            b["cpu"] = min(b["cpu"], after.ru_utime - before.ru_utime + sys_s)
            b["sys"] = min(b["sys"], sys_s)
            b["faults"] = min(b["faults"], after.ru_minflt - before.ru_minflt)
            t = time.perf_counter()
            P.sum()
            b["read"] = min(b["read"], time.perf_counter() - t)
            t = time.perf_counter()
            np.argsort(column)
            b["argsort"] = min(b["argsort"], time.perf_counter() - t)
    for b in best.values():
        b["sorts"] = len(us) * b["argsort"]
    return best


def row(engine: str, b: dict, label: str = "") -> str:
    if math.isinf(b["sample"]):  # (--audit-only: the phases not timed)
        phases = f"{'-':>9} {'-':>7} {'-':>9}"
    else:
        phases = f"{b['sample']:>9.3f} {b['sample'] / b['read']:>7.1f} {b['tables']:>9.3f}"
    return (f"{label:>9} {engine:>6} {phases} "
            f"{b['audit']:>8.3f} {b['audit'] / b['sorts']:>8.2f} {b['cpu']:>7.2f} {b['sys']:>7.2f} {b['faults']:>8.0f}")


def ratios(best: dict, label: str, base: str) -> None:
    """Print each figure of contender ``label`` over contender ``base``'s, per engine."""
    print(f"{label} / {base} (below 1: faster):")
    for engine, b in best[label].items():
        a = best[base][engine]
        print(f"  {engine}: " + ", ".join(f"{f} {b[f] / a[f]:.2f}" if 0 < a[f] < math.inf else f"{f} -"
                                          for f in ("sample", "tables", "audit", "cpu", "sys")))


def in_processes(contenders: list, args) -> dict:
    """Each contender ``(label, code root, environment, *child arguments)`` measured in
    ``args.rounds`` separate processes, alternating; per label and engine, each figure's best."""
    found = {label: [] for label, *_ in contenders}
    for _ in range(args.rounds):
        for label, root, env, *extra in contenders:
            child = [sys.executable, __file__, "--child", str(root), "--repeat", str(args.repeat), "--K", str(args.K),
                     "--U", str(args.U),
                     "--n", str(args.n)] + list(extra)
            child += (["--quick"] if args.quick else []) + (["--engine", args.engine] if args.engine else [])
            child += ["--audit-only"] if args.audit_only else []
            out = subprocess.run(child, check=True, capture_output=True, text=True, cwd=root, env=env)
            found[label].append(json.loads(out.stdout))
    return {label: {e: {f: min(r[e][f] for r in runs) for f in runs[0][e]} for e in runs[0]}
            for label, runs in found.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each figure, alternating (the best)")
    ap.add_argument("--against", metavar="REV", help="a git revision to measure alternating with this code")
    ap.add_argument("--retain", action="store_true",
                    help="also this code in processes whose glibc keeps the memory it frees (GLIBC_TUNABLES)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="with --against, --retain or --cache-block: alternating processes each")
    ap.add_argument("--engine", choices=["numpy", "numba"], help="one engine only (default: both, alternating)")
    ap.add_argument("--K", type=int, default=30, help="leaves of the depth-7 tree (default 30)")
    ap.add_argument("--U", type=int, default=5, choices=range(1, 6), help="the deepest U of the five utilities")
    ap.add_argument("--n", type=int, help="atoms (default 10^6, or 10^5 with --quick)")
    ap.add_argument("--audit-only", action="store_true",
                    help="whole audits only, the phases not timed apart (the allocator as a user's process leaves it)")
    ap.add_argument("--cache-block", metavar="N,N,...",
                    help="numpy's scan stretch lengths to measure alternating in processes (CACHE_BLOCK)")
    ap.add_argument("--child", metavar="ROOT", help=argparse.SUPPRESS)
    ap.add_argument("--child-cache-block", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    n = args.n = args.n or (10**5 if args.quick else 10**6)
    if args.child:
        print(json.dumps(measure(Path(args.child), n, args.repeat, args.engine, args.K, args.child_cache_block,
                                 args.audit_only, args.U)))
        return
    sys.path.insert(0, str(HERE))
    from bench.machine import describe
    print(describe())
    head = (f"{'code':>9} {'engine':>6} {'sample s':>9} {'x read':>7} {'tables s':>9} {'audit s':>8} "
            f"{'x sorts':>8} {'cpu s':>7} {'sys s':>7} {'faults':>8}")
    print(f"K = {args.K}, n = {n}, |U| = {args.U}, |C| = 7")
    if not args.against and not args.retain and not args.cache_block:
        print(head)
        for engine, b in measure(HERE, n, args.repeat, args.engine, args.K, audit_only=args.audit_only,
                                 U=args.U).items():
            print(row(engine, b))
        return
    env = dict(os.environ)
    env.pop("GLIBC_TUNABLES", None)
    if args.cache_block:
        sizes = [int(v) for v in args.cache_block.split(",")]
        contenders = [(f"{v}", HERE, env, "--child-cache-block", str(v)) for v in sizes]
        best = in_processes(contenders, args)
        print(head)
        for label, per_engine in best.items():
            for engine, b in per_engine.items():
                print(row(engine, b, label))
        for label in list(best)[1:]:
            ratios(best, label, str(sizes[0]))
        return
    contenders = [("this", HERE, env)]
    if args.retain:
        contenders.append(("retained", HERE, {**env, "GLIBC_TUNABLES": RETAIN}))
    from bench.workloads import checkout
    with checkout(HERE, args.against) if args.against else nullcontext() as old:
        if args.against:
            contenders.append((args.against, old, env))
        best = in_processes(contenders, args)
    print(head)
    for label, per_engine in best.items():
        for engine, b in per_engine.items():
            print(row(engine, b, label))
    for label, base in [("retained", "this"), ("this", args.against)]:
        if label in best and base in best:
            ratios(best, label, base)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
