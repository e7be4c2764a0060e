"""Benchmark: what the test suite costs.  Not a test: runs the README's test command (``pytest
-q -n auto``, or ``-n N``) once and prints its wall time, the CPU time of pytest and its workers
(``getrusage`` of the children: user + system), their ratio (how many cores the run kept busy),
and pytest's ``--durations`` list of the slowest tests.

The CPU time is the number to compare across machines and loads: a loaded machine stretches
the wall time, much less the CPU time.  The hypothesis profile is the suite's default (``ci``:
no deadline); ``HUC_HYPOTHESIS_PROFILE=dev`` runs fewer examples.

Run: ``python bench/suite.py`` (minutes: the whole suite); ``python bench/suite.py -n 2
--durations 30``; extra arguments after ``--`` go to pytest (``-- -m "not slow"``).
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def run(workers: str, durations: int, extra: list[str]) -> dict:
    """One run of the suite: its summary line, wall and CPU seconds, and the slowest tests."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", workers, f"--durations={durations}",
                           *extra], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = done.stdout.splitlines()
    slowest = [line for line in lines if re.match(r"\s*\d+\.\d+s (call|setup|teardown)\s", line)]
    summary = next((line.strip("= ") for line in reversed(lines) if " passed" in line or " failed" in line), "")
    return {"code": done.returncode, "summary": summary, "wall": wall, "cpu": cpu, "slowest": slowest}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", default="auto", help="pytest-xdist workers (default auto, as the README's command)")
    ap.add_argument("--durations", type=int, default=15, help="how many of the slowest tests to list")
    ap.add_argument("pytest_args", nargs="*", help="more arguments for pytest (after --)")
    args = ap.parse_args(argv)
    r = run(args.n, args.durations, args.pytest_args)
    print(f"pytest -q -n {args.n} {' '.join(args.pytest_args)}".rstrip())
    print(f"  {r['summary']} (exit code {r['code']})")
    print(f"  wall {r['wall']:.0f} s, CPU {r['cpu']:.0f} s (user + system, pytest and its workers), "
          f"{r['cpu'] / r['wall']:.2f} cores busy on average")
    print(f"  the {len(r['slowest'])} slowest phases:")
    for line in r["slowest"]:
        print(f"    {line.strip()}")
    return r["code"]


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        code = main()
    sys.exit(code)
