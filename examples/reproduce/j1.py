"""App. J.1's toy experiment, Fig. 2(b): UC-Boost lowers UC but leaves HUC behind.

    "The UC errors after UC- and HUC-Boost are similar and decrease as n grows.  Their HUC
    errors differ: after UC-Boost, HUC remains, whereas after HUC-Boost it decreases with
    sample size."  (Sec. 5.1)

The experiment is ``examples/j1_toy.py`` (docs/specification.md §7's reconstruction of J.1's
utilities, whose table the text extraction lost); here its grid runs size by size, each size
cached with the random generator's state after it, so that an interrupted run resumes and gives
the numbers of an uninterrupted one.  The paper gives Fig. 2(b) as a figure only: its numbers
cannot be recovered from the text, so the verdicts are on Sec. 5.1's four claims.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import numpy as np

from examples import j1_toy

from . import kit

NAME = "j1"
TITLE = "App. J.1 toy (Fig. 2(b))"
SOURCE = "no data: the population law and the tree are J.1's"
REPETITIONS = 200  # Sec. 5.1: "Curves show means over 200 repetitions"
NOTES = """\
J.1's decision utilities (`S_j`, `D_j`, `tau_j`) were lost with a table of the text extraction;
the grid uses docs/specification.md §7's reconstruction, so Fig. 2(b)'s curves are compared in
shape (the four claims above), not in value.  Boosting runs in float arithmetic (uncertified, for
speed); the population errors are evaluated exactly."""


def config(quick: bool) -> dict:
    """What a cached size depends on (its fingerprint)."""
    return {"eta": [str(x) for x in j1_toy.ETA], "utilities": {k: u.to_json() for k, u in j1_toy.UTILITIES.items()},
            "caps": j1_toy.CAPS, "stop": str(j1_toy.STOP), "seed": j1_toy.SEED, "quick": quick,
            "sizes": j1_toy.QUICK_SIZES if quick else j1_toy.SIZES, "version": 1}


def claims(results) -> list[tuple[str, bool, str]]:
    """Sec. 5.1's claims checked on the grid: (claim, holds, the numbers behind the verdict).

    >>> r = {10: {"uc": [(0.1, 0.2)], "huc": [(0.1, 0.05)]}, 1000: {"uc": [(0.005, 0.2)], "huc": [(0.005, 0.002)]}}
    >>> [holds for _, holds, _ in claims(r)]
    [True, True, True, True]
    """
    sizes = list(results)
    mean = {n: {m: [statistics.mean(e[k] for e in results[n][m]) for k in (0, 1)] for m in ("uc", "huc")}
            for n in sizes}
    small, large = sizes[0], sizes[-1]
    gap = max(abs(mean[n]["uc"][0] - mean[n]["huc"][0]) / max(mean[n]["uc"][0], mean[n]["huc"][0]) for n in sizes)
    out = [("The UC errors after UC- and HUC-Boost are similar", gap <= 0.1,
            f"largest relative gap between the two mean UCs over n: {gap:.3f} (similar: at most 0.1)")]
    falls = {m: mean[large][m][0] / mean[small][m][0] for m in ("uc", "huc")}
    out.append(("... and decrease as n grows", max(falls.values()) <= 0.1,
                f"mean UC at n = {large} over n = {small}: {falls['uc']:.4f} after UC-B, {falls['huc']:.4f} "
                "after HUC-B (decrease: at most 0.1)"))
    stays = mean[large]["uc"][1] / mean[small]["uc"][1]
    out.append(("after UC-Boost, HUC remains", stays >= 0.5,
                f"mean HUC after UC-B at n = {large} over n = {small}: {stays:.3f} (remains: at least 0.5)"))
    drops = mean[large]["huc"][1] / mean[small]["huc"][1]
    out.append(("after HUC-Boost it decreases with sample size", drops <= 0.1,
                f"mean HUC after HUC-B at n = {large} over n = {small}: {drops:.4f} (decreases: at most 0.1)"))
    return out


def render(results) -> str:
    """The grid's table and the verdict on each claim of Sec. 5.1."""
    lines = ["**Fig. 2(b) (population UC and HUC after each boost; mean ± sd over the repetitions)**", "",
             j1_toy.table(results), "",
             "The paper draws these numbers (Fig. 2(b)) without printing them: its claims are checked instead.", "",
             "| Sec. 5.1's claim | Verdict | Measured |", "|---|---|---|"]
    for claim, holds, numbers in claims(results):
        lines.append(f"| {claim} | {'holds' if holds else 'does not hold'} | {numbers} |")
    return "\n".join(lines)


def reproduce(*, quick=False, results=kit.RESULTS, fresh=False, log=None) -> dict:
    """Run (or read back) the grid size by size, write ``figure2b.md`` and ``figure2b.png``."""
    log = log or sys.stderr
    sizes = j1_toy.QUICK_SIZES if quick else j1_toy.SIZES
    reps = j1_toy.QUICK_REPETITIONS if quick else REPETITIONS
    out = kit.folder(results, NAME, quick)
    stamp = kit.fingerprint(config(quick))
    rng = np.random.default_rng(j1_toy.SEED)
    grid, cpu, fresh_runs = {}, 0.0, 0
    started = time.monotonic()
    for n in sizes:
        path = out / "runs" / f"n{n}.json"
        run = None if fresh else kit.cached(path, stamp)
        if run is None:
            start = time.process_time()
            errors = {"uc": [], "huc": []}
            for _ in range(reps):
                for method, errs in j1_toy.one_run(n, rng, "float").items():
                    errors[method].append([float(e) for e in errs])
            run = {"dataset": NAME, "unit": {"n": n}, "fingerprint": stamp, "quick": quick, "errors": errors,
                   "cpu_seconds": round(time.process_time() - start, 1), "rng_after": rng.bit_generator.state}
            kit.write_atomic(path, json.dumps(run, indent=1, sort_keys=True) + "\n")
            fresh_runs += 1
            print(f"j1 n = {n}: {run['cpu_seconds']:.0f} s CPU; {(time.monotonic() - started) / 60:.1f} min so far",
                  file=log, flush=True)
        else:
            rng.bit_generator.state = run["rng_after"]
        grid[n] = {m: [tuple(e) for e in v] for m, v in run["errors"].items()}
        cpu += run["cpu_seconds"]
    print(f"j1: {len(sizes)} sizes, {len(sizes) - fresh_runs} cached", file=log, flush=True)
    text = render(grid)
    head = (f"<!-- generated by `python -m examples.reproduce j1{' --quick' if quick else ''}`; do not edit -->\n\n"
            f"{TITLE}: {len(sizes)} sizes x {reps} repetitions, {cpu / 60:.0f} CPU-minutes in all; "
            f"configuration {stamp}.\n\n")
    kit.write_atomic(out / "figure2b.md", head + text + "\n")
    j1_toy.draw(grid, reps, out / "figure2b.png")
    failed = [(c, 0.0, "claim", numbers) for c, holds, numbers in claims(grid) if not holds]
    return {"j1": (text, failed)}
