"""Benchmark of the audit beyond one machine's memory (huc_ref.fast.scale).  Not a test: it prints
what one run measured, and keeps it in ``docs/results/scale/measurements.json`` (each run adds or
replaces its rows) and ``docs/results/scale/table.md`` (the table, written from the JSON), which
docs/scale.md includes; the run's output is also recorded as every script's is (``bench/results.py``).

Two workloads: ``binary`` (K = 2: a classifier's positive rate, three utilities: each class's
indicator and a cost table, one subgroup column besides everyone) and ``k100`` (the issue's
realistic case: K = 100 classes in a two-level tree of 10 x 10, three utilities: a payoff table,
top-1 correctness at depth 1 and a binary decision; four subgroups).  Paths:

* ``memory``: ``fast.audit`` of numpy arrays (the in-memory fast path, numpy accelerator);
* ``memory-numba``: the same with ``accelerator="numba"`` (its kernels compiled on a few rows first);
* ``threads``: the same rows as Dask arrays (persisted in memory first), on the local threaded
  scheduler (sorted rows through spill files, the default without a Client);
* ``cluster``: a ``LocalCluster`` of two worker processes of one thread each (rows persisted on
  the workers, sorted rows as Dask tasks);
* ``dataset``: ``huc audit --predictions DIR --engine fast`` of a Parquet dataset (written first
  by ``--make-dataset``), out of core, in a process whose address space is capped
  (``RLIMIT_AS``, ``ulimit -v``) at ``--cap`` GiB.

Each measurement runs in a process of its own (its peak memory, ``ru_maxrss``, is its own; the
cluster's adds its workers').  ``s``: the audit's wall time (not the rows' generation, nor, for
the Dask paths, their persisting); ``ns/row``; ``x memory``: the per-row cost over the in-memory
path's at the largest ``n`` it ran (in this run or kept from an earlier one); ``peak MiB``;
``beyond input``: the peak less the process's memory before the audit (which held the input,
for the in-memory and Dask paths); ``B/row``: that per row of the sample for the in-memory path,
per row of a partition for the others (what bounds them: a task holds one partition's rows).

Run: ``python bench/scale.py --quick`` (seconds); ``python bench/scale.py --workload binary
--sizes 1e6,1e7``; ``python bench/scale.py --workload binary --make-dataset /work/data/binary
--sizes 1e8 --paths dataset --cap 4``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "scale" / "measurements.json"

#: Rows of a partition (a Dask chunk, a Parquet row group) per workload: about 16 MiB of predictions.
PARTITION = {"binary": 1_000_000, "k100": 20_000}


def workload(name: str):
    """``(tree, utilities, subgroup names)`` of a workload."""
    from huc_ref import BinaryDecision, LabelTree, Table, Top1AtDepth, class_indicator
    if name == "binary":
        tree = LabelTree.from_children("r", {"r": ["neg", "pos"]})
        return tree, {"pos": class_indicator(tree, "pos"), "cost": Table(tree, ["1/2", -1]),
                      "neg": class_indicator(tree, "neg")}, ["female"]
    children = {"r": [f"g{a}" for a in range(10)]} | {f"g{a}": [f"y{a}_{b}" for b in range(10)] for a in range(10)}
    tree = LabelTree.from_children("r", children)
    labels = tree.labels
    table = [f"{(7 * k) % 9 - 4}/4" for k in range(100)]
    return tree, {"table": Table(tree, table), "top1": Top1AtDepth(tree, 1),
                  "decision": BinaryDecision(tree, labels[:25], labels[:50], "1/3")}, ["female", "young", "region"]


def rows(name: str, part: int, m: int):
    """Partition ``part`` of a workload: ``(P, y, C)``, softmax rows of normal logits, labels drawn
    from them (a calibrated model, so that violations are small), subgroup columns."""
    import numpy as np
    K = 2 if name == "binary" else 100
    rng = np.random.default_rng(1000 + part)
    P = np.exp(rng.normal(0.0, 1.5, (m, K)))
    P /= P.sum(axis=1, keepdims=True)
    y = np.minimum((np.cumsum(P, axis=1) < rng.random(m)[:, None]).sum(axis=1), K - 1)
    C = [rng.random(m) < 0.5, rng.random(m) < 0.3, rng.integers(-2, 3, m) / 2][:1 if name == "binary" else 3]
    return P, y, C


#: The in-memory paths and their accelerators.
IN_MEMORY = {"memory": "numpy", "memory-numba": "numba"}

#: The paths in the order the table lists them.
PATHS = ("memory", "memory-numba", "threads", "cluster", "dataset")


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(spec: dict) -> dict:
    """One measurement (in this process): ``spec`` names the workload, path, n and dataset."""
    import numpy as np

    from huc_ref import fast
    name, path, n = spec["workload"], spec["path"], int(spec["n"])
    tree, utilities, group_names = workload(name)
    part = PARTITION[name]
    sizes = [min(part, n - a) for a in range(0, n, part)]
    out = {"workload": name, "path": path, "n": n, "partition": part}
    if path == "dataset":
        from huc_ref.cli import main
        spec_file = Path(spec["dataset"]).parent / (Path(spec["dataset"]).name + "-spec.json")
        base = peak_mib()
        start = time.perf_counter()
        status = main(["audit", "--tree", str(spec_file), "--predictions", spec["dataset"], "--engine", "fast",
                       "--top", "0", "--spill", spec["spill"]])
        out.update(seconds=time.perf_counter() - start, status=status, peak_mib=peak_mib(), base_mib=base,
                   cap_gib=spec.get("cap"))
        return out
    if path in IN_MEMORY:  # (filled partition by partition: the peak before the audit is the input's, no copy)
        P, y = np.empty((n, tree.K)), np.empty(n, dtype=np.int64)
        groups = {"all": np.ones(n)} | {g: np.empty(n) for g in group_names}
        for i, a in enumerate(range(0, n, part)):
            Pi, yi, Ci = rows(name, i, sizes[i])
            P[a:a + sizes[i]], y[a:a + sizes[i]] = Pi, yi
            for g, c in zip(group_names, Ci):
                groups[g][a:a + sizes[i]] = c
        accelerator = IN_MEMORY[path]
        if accelerator == "numba":  # (compiled before the measurement: its memory is not the audit's)
            fast.audit(y[:5000], P[:5000], tree, utilities, subgroups={g: c[:5000] for g, c in groups.items()},
                       labels=tree.labels, accelerator=accelerator)
        base = peak_mib()
        start = time.perf_counter()
        result = fast.audit(y, P, tree, utilities, subgroups=groups, labels=tree.labels, accelerator=accelerator)
        out.update(seconds=time.perf_counter() - start, peak_mib=peak_mib(), base_mib=base,
                   input_bytes=int(P.nbytes + y.nbytes + sum(8 * n for _ in groups)))
    else:
        import dask
        import dask.array as da
        client = cluster = None
        if path == "cluster":
            import logging

            from distributed import Client, LocalCluster
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=logging.ERROR, memory_limit=0)
            client = Client(cluster)
        K = tree.K
        gen = [dask.delayed(rows, pure=True, nout=3)(name, i, m) for i, m in enumerate(sizes)]
        P = da.concatenate([da.from_delayed(g[0], (m, K), float) for g, m in zip(gen, sizes)])
        y = da.concatenate([da.from_delayed(g[1], (m,), np.int64) for g, m in zip(gen, sizes)])
        groups = {"all": da.ones(n, chunks=(tuple(sizes),))}
        for k, g in enumerate(group_names):
            groups[g] = da.concatenate([da.from_delayed(dask.delayed(lambda c, k=k: c[k])(x[2]), (m,), float)
                                        for x, m in zip(gen, sizes)])
        P, y, *values = dask.persist(P, y, *groups.values())
        groups = dict(zip(groups, values))
        base = peak_mib()
        start = time.perf_counter()
        result = fast.audit(y, P, tree, utilities, subgroups=groups, labels=tree.labels)
        out.update(seconds=time.perf_counter() - start, peak_mib=peak_mib(), base_mib=base)
        if client is not None:
            workers = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
            out["worker_peak_mib"] = sorted(workers.values())
            client.close()
            cluster.close()
    out["uc"], out["huc"] = result.uc.sup, result.huc.sup
    return out


def make_dataset(name: str, folder: Path, n: int) -> None:
    """Write ``n`` rows of a workload as a Parquet dataset (files of at most 50 row groups of
    :data:`PARTITION` rows; the labels' columns, the labels as text, the subgroup columns) and its
    spec file beside it, partition by partition (bounded memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    tree, utilities, group_names = workload(name)
    folder.mkdir(parents=True, exist_ok=True)
    spec = {"tree": tree.to_json(), "labels": list(tree.labels),
            "utilities": {k: u.to_json() for k, u in utilities.items()}}
    (folder.parent / (folder.name + "-spec.json")).write_text(json.dumps(spec))
    part = PARTITION[name]
    writer, file = None, -1
    for i, a in enumerate(range(0, n, part)):
        m = min(part, n - a)
        P, y, C = rows(name, i, m)
        columns = {label: P[:, j] for j, label in enumerate(tree.labels)}
        columns["label"] = pa.DictionaryArray.from_arrays(pa.array(y.astype("int32")), pa.array(list(tree.labels)))
        columns |= dict(zip(group_names, C))
        table = pa.table(columns)
        if i // 50 != file:
            if writer is not None:
                writer.close()
            file = i // 50
            writer = pq.ParquetWriter(folder / f"part-{file:05d}.parquet", table.schema)
        writer.write_table(table, row_group_size=part)
        print(f"\r{a + m} of {n} rows written", end="", file=sys.stderr, flush=True)
    writer.close()
    print(file=sys.stderr)


def measure(spec: dict) -> dict:
    """:func:`child` in a fresh process (for the dataset path with its address space capped)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env["ARROW_DEFAULT_MEMORY_POOL"] = "system"  # (pyarrow's own pools reserve ~1 GiB of address space)
    env["MALLOC_ARENA_MAX"] = "2"  # (glibc reserves 64 MiB of address space per thread arena)
    cap = spec.get("cap")

    def limit():
        if cap:
            size = int(float(cap) * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (size, size))
    done = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], env=env, preexec_fn=limit,
                          capture_output=True, text=True)
    if done.returncode != 0:
        return dict(spec, error=(done.stderr.strip().splitlines() or ["?"])[-1])
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(results: list) -> str:
    """The Markdown table of the kept results, with each row's ratio to the in-memory per-row cost
    at the largest n the in-memory path ran for its workload."""
    lines = ["| workload | path | n | s | ns/row | x memory | peak MiB | beyond input, MiB | B/row | cap |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name in ("binary", "k100"):
        mine = [r for r in results if r["workload"] == name and "seconds" in r]
        ref = max((r for r in mine if r["path"] == "memory"), key=lambda r: r["n"], default=None)
        per = ref["seconds"] / ref["n"] if ref else None
        for r in sorted(mine, key=lambda r: (r["n"], PATHS.index(r["path"]))):
            peak = r["peak_mib"] + sum(r.get("worker_peak_mib", []))
            beyond = r["peak_mib"] - r["base_mib"]  # (the driver's: the workers' peaks hold their persisted rows)
            per_row = beyond * 2**20 / (r["n"] if r["path"] in IN_MEMORY else r["partition"])
            ratio = f"{r['seconds'] / r['n'] / per:.2f}" if per else "-"
            cap = f"{r['cap_gib']:g} GiB" if r.get("cap_gib") else "-"
            lines.append(f"| {name} | {r['path']} | {r['n']:.0e} | {r['seconds']:.1f} | "
                         f"{1e9 * r['seconds'] / r['n']:.0f} | {ratio} | {peak:.0f} | {beyond:.0f} | {per_row:.0f} | "
                         f"{cap} |")
    lines += ["", targets(results), "", projection(results)]
    return "\n".join(lines) + "\n"


#: The issue's targets: Dask on local threads within 2x the in-memory per-row cost at 10^7 rows,
#: and out of core at the largest sizes within 3x (of the in-memory cost at the largest n it ran).
TARGETS = (("threads", 10**7, 2.0), ("dataset", None, 3.0))


def targets(results: list) -> str:
    """Each target of :data:`TARGETS`, per workload: the ratio measured and whether it is met."""
    lines = ["Targets (per-row cost over the in-memory path's at the largest n it ran):", ""]
    for name in ("binary", "k100"):
        mine = [r for r in results if r["workload"] == name and "seconds" in r]
        ref = max((r for r in mine if r["path"] == "memory"), key=lambda r: r["n"], default=None)
        for path, n, bound in TARGETS:
            found = [r for r in mine if r["path"] == path and (n is None or r["n"] == n)]
            if not found or ref is None:
                lines.append(f"* {name}, {path}{'' if n is None else f' at n = {n:.0e}'}: not measured")
                continue
            r = max(found, key=lambda r: r["n"])
            ratio = (r["seconds"] / r["n"]) / (ref["seconds"] / ref["n"])
            lines.append(f"* {name}, {path} at n = {r['n']:.0e}: {ratio:.2f}x the in-memory cost at n = "
                         f"{ref['n']:.0e} (target {bound:g}x: {'met' if ratio <= bound else 'NOT met'})")
    return "\n".join(lines)


#: The machines of the projection (each like this one: 2 CPUs) and the rows it projects to.
MACHINES, PROJECTED = (1, 8, 32, 128), 10**9


def projection(results: list) -> str:
    """The projection to 10^9 rows on N machines like this one: each workload's per-row cost out of
    core (the dataset path at its largest n; else the threads path's) times 10^9 / N.  It assumes
    what the audit's graph allows: the partitions' maps and the score ranges are independent tasks,
    so they spread over machines, and the sorted rows (:func:`spill_bytes` a row) cross the network
    once; a cluster whose network moves them slower than this machine's disk is slower than this."""
    lines = [f"Projected hours for {PROJECTED:.0e} rows on N machines of this one's CPUs "
             "(per-row cost measured out of core here, divided by N):", "",
             "| workload | measured at n | ns/row | " + " | ".join(f"N = {m}" for m in MACHINES)
             + " | sorted rows, GB |",
             "|---|---:|---:|" + "---:|" * len(MACHINES) + "---:|"]
    for name in ("binary", "k100"):
        for path in ("dataset", "threads"):
            found = [r for r in results if r["workload"] == name and r["path"] == path and "seconds" in r]
            if found:
                r = max(found, key=lambda r: r["n"])
                per = r["seconds"] / r["n"]
                hours = " | ".join(f"{per * PROJECTED / m / 3600:.2g}" for m in MACHINES)
                lines.append(f"| {name} ({path}) | {r['n']:.0e} | {1e9 * per:.0f} | {hours} | "
                             f"{spill_bytes(name) * PROJECTED / 1e9:.0f} |")
                break
    return "\n".join(lines)


def spill_bytes(name: str) -> int:
    """Bytes of sorted rows per sample row (what the audit writes to its spill folder or moves between
    workers: :meth:`huc_ref.fast.scale._Spec.row_bytes`, the CLI's subgroups with the whole population)."""
    from huc_ref.fast.scale import _Spec
    from huc_ref.fast.tree import FastTree
    tree, utilities, groups = workload(name)
    return _Spec(FastTree(tree), utilities, "numpy", None, ["all"] + groups, False, None, 1).row_bytes()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", choices=["binary", "k100"], default="binary")
    parser.add_argument("--sizes", default="1e6", help="comma-separated n (default 1e6)")
    parser.add_argument("--paths", default="memory,threads,cluster", help="of " + ", ".join(PATHS))
    parser.add_argument("--quick", action="store_true", help="a few seconds: n = 10^5, binary, memory and threads")
    parser.add_argument("--make-dataset", metavar="DIR", help="write the dataset for --paths dataset first")
    parser.add_argument("--dataset", metavar="DIR", help="the dataset of --paths dataset (default --make-dataset's)")
    parser.add_argument("--spill", metavar="DIR", default=None, help="the dataset path's spill folder")
    parser.add_argument("--cap", type=float, default=None, metavar="GIB", help="the dataset path's RLIMIT_AS")
    parser.add_argument("--no-save", action="store_true", help="print only; keep docs/results as they are")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    from bench.machine import describe
    print(describe())
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    paths = args.paths.split(",")
    if args.quick:
        sizes, paths, args.workload, args.no_save = [10**5], ["memory", "threads"], "binary", True
    dataset = args.dataset or args.make_dataset
    if args.make_dataset:
        make_dataset(args.workload, Path(args.make_dataset), max(sizes))
    kept = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    fresh = []
    for n in sizes:
        for path in paths:
            spec = {"workload": args.workload, "path": path, "n": n}
            if path == "dataset":
                spec |= {"dataset": dataset, "cap": args.cap, "spill": args.spill or str(Path(dataset).parent)}
            r = measure(spec)
            r |= {"machine": describe(), "date": time.strftime("%Y-%m-%d")}
            fresh.append(r)
            if "error" in r:
                print(f"{args.workload} {path} n={n:.0e}: failed: {r['error']}")
            else:
                print(f"{args.workload} {path} n={n:.0e}: {r['seconds']:.1f} s, {1e9 * r['seconds'] / n:.0f} ns/row, "
                      f"peak {r['peak_mib'] + sum(r.get('worker_peak_mib', [])):.0f} MiB", flush=True)
    key = lambda r: (r["workload"], r["path"], r["n"])  # noqa: E731
    merged = {key(r): r for r in kept} | {key(r): r for r in fresh if "seconds" in r}
    results = sorted(merged.values(), key=key)
    print(table(results))
    if not args.no_save:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
        (RESULTS.parent / "table.md").write_text(
            "<!-- written by python bench/scale.py from docs/results/scale/measurements.json; do not edit -->\n\n"
            + table(results))


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
