"""Where a benchmark's results go: ``docs/results/<script>[.<options>].json``, which the
documentation's Performance page renders (``docs/_ext/hucdocs.py``).

Every script of ``bench/`` runs its ``main`` inside :func:`recorded`: what it prints still goes
to the terminal, and is also kept, with the command, the machine (:func:`bench.machine.describe`),
the date, the commit and whether it was a ``--quick`` run, in one JSON file per script and set of
options (a quick run does not replace a full one).  A run that fails, or is asked for ``--help``,
records nothing; ``HUC_BENCH_RECORD=0`` records nothing either (a run for one's own eyes).

Run: ``python bench/results.py`` lists the results files and when each was recorded.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"

#: Options a script gives only to the processes it starts itself: those record nothing.
CHILD_OPTIONS = ("--child",)


def results_path(script: str, argv: list[str]) -> Path:
    """The results file of ``script`` run with ``argv``: its options joined to its name.

    >>> results_path("bench/fast_audit.py", ["--quick"]).name
    'fast_audit.quick.json'
    >>> results_path("bench/certified.py", ["--fit", "100"]).name
    'certified.fit.100.json'
    """
    words = [re.sub(r"[^A-Za-z0-9]+", "-", a).strip("-") for a in argv]
    return RESULTS / (".".join([Path(script).stem] + [w for w in words if w]) + ".json")


def _commit() -> str:
    """The checkout's commit (``+changes`` where its tracked files differ from it)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "huc_ref", "bench"], cwd=ROOT).returncode
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


class _Tee(io.TextIOBase):
    """Text written to the terminal and kept."""

    def __init__(self, stream):
        self.stream, self.kept = stream, io.StringIO()

    def write(self, text):
        self.kept.write(text)
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()


@contextlib.contextmanager
def recorded(script: str, argv: list[str] | None = None):
    """Run the body with its printed output also kept; on success write the results file."""
    argv = sys.argv[1:] if argv is None else argv
    skip = (os.environ.get("HUC_BENCH_RECORD") == "0" or any(a in CHILD_OPTIONS for a in argv)
            or "-h" in argv or "--help" in argv)
    if skip:
        yield
        return
    from bench.machine import describe
    tee, start = _Tee(sys.stdout), time.perf_counter()
    with contextlib.redirect_stdout(tee):
        yield
    relative = Path(script).resolve().relative_to(ROOT).as_posix()
    output = tee.kept.getvalue()
    machine = describe()
    record = {"script": relative, "command": " ".join(["python", relative] + argv), "quick": "--quick" in argv,
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "commit": _commit(), "machine": machine.removeprefix("machine: "),
              "seconds": round(time.perf_counter() - start, 1), "output": output}
    path = results_path(relative, argv)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"(recorded in {path.relative_to(ROOT)})", file=sys.stderr)


def main() -> None:
    for path in sorted(RESULTS.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        print(f"{path.name:40} {record['date']}  {record['commit']:>16}  {'quick' if record['quick'] else 'full'}")


if __name__ == "__main__":
    main()
