"""Run every registered check and report: a table (claim, location, method, status, time)
or a JSON list.  Exit status 1 when any check fails."""

from __future__ import annotations

import json
import sys
import textwrap

from . import checks_audit, checks_boost, checks_decomposition, checks_examples  # noqa: F401 - registration
from .core import CHECKS

__all__ = ["run_checks", "format_table", "main"]


def run_checks(only: str | None = None) -> list[dict]:
    """Run the checks (those whose name contains ``only``, if given) and return their results.

    >>> [r["status"] for r in run_checks("appendix_d1")]
    ['ok']
    """
    selected = [c for c in CHECKS if only is None or only in c.name]
    return [c.run() for c in selected]


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
    lines = []
    for r in results:
        lines.append(f"[{r['status']:^6}] {r['check']}  ({r['location']}; {r['seconds']:.1f} s)")
        lines.append(textwrap.fill(r["claim"], 100, initial_indent="         claim:  ", subsequent_indent=" " * 17))
        lines.append(textwrap.fill(f"{r['method']}: {r['detail']}", 100, initial_indent="         how:    ",
                                   subsequent_indent=" " * 17))
    failed = [r for r in results if r["status"] != "ok"]
    total = sum(r["seconds"] for r in results)
    lines.append("")
    lines.append(f"{len(results) - len(failed)} passed, {len(failed)} failed  ({total:.1f} s)")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    """``huc verify`` / ``python -m proofs_check`` [--json] [--only SUBSTRING]; exit status 0
    when every selected check holds.

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
    args = ap.parse_args(argv)
    results = run_checks(args.only)
    sys.stdout.write(json.dumps(results, indent=2) + "\n" if args.json else format_table(results))
    return 0 if results and all(r["status"] == "ok" for r in results) else 1
