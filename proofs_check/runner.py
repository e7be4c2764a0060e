"""Run every registered check and report: a table (claim, location, method, status, time)
or a JSON list.  Exit status 1 when any check fails."""

from __future__ import annotations

import json
import os
import re
import sys
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from . import checks_audit, checks_boost, checks_decomposition, checks_examples  # noqa: F401 - registration
from .core import CHECKS

__all__ = ["DEFAULT_JOBS", "paper_order", "run_checks", "usable_cpus", "format_result", "format_table", "main"]


_MAIN = re.compile(r"(?:Sec\.|Thm|Prop\.|Lemma|Def\.|Algorithm)\s*(\d+)(?:\.(\d+))?")
_APPENDIX = re.compile(r"App\.\s*([A-Z])(?:\.(\d+))?")


def paper_order(location: str) -> tuple:
    """A sort key putting a check's location in the paper's order: the main text by section
    number (``Sec. 2.2``, ``Thm 3.1``, ``Prop. 3.3``), then the appendices by letter and number.

    >>> sorted(["App. D.1", "Thm 3.4, App. F.1", "App. C.3", "Sec. 2.2 eq. (5)", "Prop. 3.3"], key=paper_order)
    ['Sec. 2.2 eq. (5)', 'Prop. 3.3', 'Thm 3.4, App. F.1', 'App. C.3', 'App. D.1']
    """
    main, appendix = _MAIN.search(location), _APPENDIX.search(location)
    if main and (not appendix or main.start() < appendix.start()):
        return (0, int(main.group(1)), int(main.group(2) or 0), "")
    if appendix:
        return (1, ord(appendix.group(1)), int(appendix.group(2) or 0), "")
    return (2, 0, 0, location)


def selected_checks(only: str | None = None) -> list:
    """The registered checks (those whose name contains ``only``), in the paper's order."""
    return sorted((c for c in CHECKS if only is None or only in c.name), key=lambda c: paper_order(c.location))


#: The most processes ``huc verify`` starts unless told (``--jobs``): the longest check takes
#: about a fifth of the whole (18 s of 98 on the 2-core machine), so more would not finish
#: sooner, and each process holds its own sympy (80 MB imported, more as it works).
DEFAULT_JOBS = 6


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system says, else all).

    >>> usable_cpus() >= 1
    True
    """
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _run_named(name: str) -> dict:
    """Run the registered check ``name`` (in a worker process: its own registry)."""
    return next(c for c in CHECKS if c.name == name).run()


def _results(checks: list, jobs: int):
    """The checks' results in their order, as each is ready: in this process (``jobs == 1``),
    else on ``jobs`` worker processes (started afresh, not forked: each imports the packages
    itself, about two seconds, and no thread of this process is copied half-way)."""
    if jobs <= 1 or len(checks) <= 1:
        return (c.run() for c in checks)
    pool = ProcessPoolExecutor(min(jobs, len(checks)), mp_context=get_context("spawn"))
    return _draining(pool, pool.map(_run_named, [c.name for c in checks]))


def _draining(pool, results):
    with pool:
        yield from results


def run_checks(only: str | None = None, jobs: int = 1) -> list[dict]:
    """Run the checks (those whose name contains ``only``, if given), in the paper's order, and
    return their results; ``jobs``: on that many processes (the checks are independent).

    >>> [r["status"] for r in run_checks("appendix_d1")]
    ['ok']
    """
    return list(_results(selected_checks(only), jobs))


def format_result(r: dict, position: str = "", elapsed: float | None = None) -> str:
    """One check's lines of the ``huc verify`` report: status, name, location, time (and, as it
    streams, its position and the time so far), claim, method.

    >>> print(format_result({"status": "ok", "check": "check_demo", "location": "App. D.1", "seconds": 0.25,
    ...                      "claim": "UC = 0 while HUC = 1/4", "method": "exact worked example",
    ...                      "detail": "D_top = 1/4"}, "1/22 ", 3.0), end="")
    [  ok  ] 1/22 check_demo  (App. D.1; 0.2 s; 3.0 s elapsed)
             claim:  UC = 0 while HUC = 1/4
             how:    exact worked example: D_top = 1/4
    """
    so_far = "" if elapsed is None else f"; {elapsed:.1f} s elapsed"
    lines = [f"[{r['status']:^6}] {position}{r['check']}  ({r['location']}; {r['seconds']:.1f} s{so_far})",
             textwrap.fill(r["claim"], 100, initial_indent="         claim:  ", subsequent_indent=" " * 17),
             textwrap.fill(f"{r['method']}: {r['detail']}", 100, initial_indent="         how:    ",
                           subsequent_indent=" " * 17)]
    return "\n".join(lines) + "\n"


def _summary(results: list[dict], elapsed: float) -> str:
    failed = [r for r in results if r["status"] != "ok"]
    return f"\n{len(results) - len(failed)} passed, {len(failed)} failed  ({elapsed:.1f} s)\n"


def format_table(results: list[dict]) -> str:
    """The human-readable report of ``huc verify``: per claim its status, location, method.

    >>> print(format_table([{"status": "ok", "check": "check_demo", "location": "App. D.1", "seconds": 0.25,
    ...                      "claim": "UC = 0 while HUC = 1/4", "method": "exact worked example",
    ...                      "detail": "D_top = 1/4"}]), end="")
    [  ok  ] check_demo  (App. D.1; 0.2 s)
             claim:  UC = 0 while HUC = 1/4
             how:    exact worked example: D_top = 1/4
    <BLANKLINE>
    1 passed, 0 failed  (0.2 s)
    """
    return "".join(format_result(r) for r in results) + _summary(results, sum(r["seconds"] for r in results))


def _positive(text: str) -> int:
    """``--jobs``: a whole number at least 1."""
    import argparse
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes, at least 1; got {text!r}")
    return int(text)


def main(argv=None) -> int:
    """``huc verify`` / ``python -m proofs_check`` [--json] [--only SUBSTRING] [--jobs N]; exit
    status 0 when every selected check holds.  The checks run on ``--jobs`` processes (default:
    the usable CPUs, at most :data:`DEFAULT_JOBS`); results come in the paper's order either way.

    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     status = main(["--json", "--only", "appendix_d1"])
    >>> status, [r["location"] for r in json.loads(out.getvalue())]
    (0, ['App. D.1'])
    """
    import argparse
    ap = argparse.ArgumentParser(prog="huc verify", description="Check every identity, worked example and bound "
                                 "of the paper, and say how each was checked.")
    ap.add_argument("--json", action="store_true", help="print a JSON list of results")
    ap.add_argument("--only", metavar="SUBSTRING", help="run only the checks whose name contains SUBSTRING")
    jobs = min(usable_cpus(), DEFAULT_JOBS)
    ap.add_argument("--jobs", metavar="N", type=_positive, default=jobs,
                    help=f"run the checks on N processes (default: the usable CPUs, at most {DEFAULT_JOBS}; "
                         f"here {jobs})")
    args = ap.parse_args(argv)
    if not selected_checks(args.only):  # bad input, one line (it printed "0 passed, 0 failed", status 1: a failure)
        print(f"huc verify: error: --only: no check's name contains {args.only!r} (names: huc verify --json)",
              file=sys.stderr)
        return 2
    if args.json:
        results = run_checks(args.only, args.jobs)
        sys.stdout.write(json.dumps(results, indent=2) + "\n")
    else:  # streamed: each check's lines as soon as it (and every check before it) ends, with the time so far
        checks, results, start = selected_checks(args.only), [], time.perf_counter()
        for k, result in enumerate(_results(checks, args.jobs), start=1):
            results.append(result)
            sys.stdout.write(format_result(result, f"{k}/{len(checks)} ", time.perf_counter() - start))
            sys.stdout.flush()
        sys.stdout.write(_summary(results, time.perf_counter() - start))
    return 0 if results and all(r["status"] == "ok" for r in results) else 1
