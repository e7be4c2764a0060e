"""Benchmark of the compiled kernels against those of an earlier revision (the K = 30
audit's sample pass and scans).  Not a test: prints times and ratios measured in one run, the two
revisions alternating.

The arguments of every ``top1_path_terms`` call (the sample pass's chunks) and every ``rank_scan``
call (the five utilities' scans) of one numba audit of ``bench/fast_audit.py``'s K = 30 workload
(depth-7 tree, |U| = 5 top-1 utilities, |C| = 7 subgroups) are recorded; then each kernel of this
checkout and of git revision ``--against`` (its ``huc_ref/fast/kernels.py``, loaded as a module of
its own) runs on the same arguments, alternating, ``--repeat`` times; each figure is the best, in
one thread.  The outputs of the two are compared first (the scans' sups, witnesses and moments;
the sample pass's scores, residuals, error bounds, terms and unsure rows): a kernel change that is
meant to give the same bits must.  Where ``rank_scan`` of ``--against`` takes each atom's label
and row of weights apart (``kind``, ``w_row``, as revisions without ``kernels.lane_keys`` do), its arguments are
taken apart from the keys; where its ``top1_path_terms`` takes its arrays one by one, the named
structures are passed so.

Run: ``python bench/kernels_against.py --against 9440b3a`` (``--n 100000``; numba needed).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fast_audit import depth_tree, sample, utilities  # noqa: E402
from bench.machine import describe  # noqa: E402
from huc_ref import fast  # noqa: E402

kernels = importlib.import_module("huc_ref.fast.kernels")
passes = importlib.import_module("huc_ref.fast.audit")
NAMES = ("top1_path_terms", "rank_scan")
#: top1_path_terms' outputs compared (fields of its last argument, ``kernels.Top1Out``)
OUTPUTS = ("score", "residual", "error", "terms", "unsure")


def load_revision(rev: str, where: Path):
    """``huc_ref/fast/kernels.py`` of git revision ``rev`` as a module of its own, with the
    revision's ``huc_ref/fast/lanes.py`` (its LLVM IR helpers) where it has one; their other
    relative imports are read from this checkout's package."""
    def show(path: str) -> str | None:
        found = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True)
        return found.stdout if found.returncode == 0 else None

    def load(name: str, text: str):
        path = where / f"{name}.py"
        text = text.replace("from . import", "from huc_ref.fast import")
        path.write_text(text.replace("from .", "from huc_ref.fast."))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    text = show("huc_ref/fast/kernels.py")
    lanes = show("huc_ref/fast/lanes.py")
    if lanes is not None:
        lanes_name = f"lanes_{rev}".replace("~", "_").replace("^", "_")
        load(lanes_name, lanes)
        text = text.replace("from .lanes import", f"from {lanes_name} import")
    return load(f"kernels_{rev}".replace("~", "_").replace("^", "_"), text)


def record(n: int) -> dict:
    """The arguments of each kernel's calls in one numba audit of ``n`` atoms (also
    ``bench/gather.py``'s scans); the sample pass's chunks as ``huc_ref.fast.audit.THREADS`` makes
    them (:func:`main` sets one thread)."""
    tree = depth_tree(30, 7)
    P, y, groups = sample(tree, n)
    calls = {name: [] for name in NAMES}
    real = {name: getattr(kernels, name) for name in NAMES}
    for name in NAMES:
        setattr(kernels, name, lambda *a, _n=name: (calls[_n].append(a), real[_n](*a))[1])
    try:
        fast.audit(y, P, tree, utilities(tree), subgroups=groups, accelerator="numba")
    finally:
        for name in NAMES:
            setattr(kernels, name, real[name])
    return calls


def adapt(old, name: str, args: tuple) -> tuple:
    """``args`` of this checkout's kernel ``name`` as ``old``'s kernel takes them."""
    params = inspect.signature(getattr(old, name).py_func).parameters
    if name == "top1_path_terms" and "dfs_leaf_row" in params:  # (its arrays one by one, not named structures)
        Xd, y, start, tree, plan, rel, smallest, out = args
        return (Xd, y, *tree, plan.cut_rows, plan.cut_label, plan.cut_off, plan.cut_depth, plan.agree, plan.agree_at,
                plan.ks, plan.ks_len, rel, smallest, start, out.score, out.residual, out.error, plan.u_row, out.terms,
                plan.term_at, out.unsure, out.sums)
    if name == "rank_scan" and "w_row" in params:  # (before lane_keys: the label and row of weights apart)
        block, order, residual, key, terms, col_table, Wl, shift, *rest = args
        rows = (key & ((1 << shift) - 1)).astype(np.uint16) if shift else np.zeros(0, dtype=np.uint16)
        return (block, order, residual, key >> shift, terms, col_table, Wl, rows, *rest)
    return args


def fresh(name: str, args: tuple) -> tuple:
    """``args`` with top1_path_terms' outputs copied, so that two kernels write apart."""
    if name != "top1_path_terms":
        return args
    out = args[-1]
    return (*args[:-1], type(out)(*(np.zeros_like(a) for a in out)))


def outputs(name: str, args: tuple, result) -> list:
    return [getattr(args[-1], k) for k in OUTPUTS] if name == "top1_path_terms" else list(result)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", required=True, help="a git revision whose kernels to measure beside these")
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args(argv)
    print(describe())
    if not kernels.COMPILED:
        print("numba is not installed: the kernels are plain Python here, nothing to measure")
        return
    passes.THREADS = 1
    calls = record(args.n)
    with tempfile.TemporaryDirectory() as tmp:
        old = load_revision(args.against, Path(tmp))
        print(f"K = 30, n = {args.n}, |U| = 5, |C| = 7; one thread; best of {args.repeat}")
        print(f"{'kernel':>16} {'calls':>6} {'this s':>9} {args.against + ' s':>12} {'this / ' + args.against:>16}"
              "  same outputs")
        for name in NAMES:
            mine, theirs = getattr(kernels, name), getattr(old, name)
            same = True
            for call in calls[name]:  # compiled, and compared
                a, b = fresh(name, call), fresh(name, call)
                x, y = mine(*a), theirs(*adapt(old, name, b))
                same &= all(np.array_equal(u, v) for u, v in zip(outputs(name, a, x), outputs(name, b, y)))
            best = [np.inf, np.inf]
            for _ in range(args.repeat):  # alternating: drift hits both alike
                for k, (fn, adapted) in enumerate(((mine, calls[name]),
                                                   (theirs, [adapt(old, name, c) for c in calls[name]]))):
                    start = time.perf_counter()
                    for call in adapted:
                        fn(*call)
                    best[k] = min(best[k], time.perf_counter() - start)
            print(f"{name:>16} {len(calls[name]):>6} {best[0]:>9.4f} {best[1]:>12.4f} {best[0] / best[1]:>16.2f}"
                  f"  {'yes' if same else 'NO'}", flush=True)


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
