"""How many mutants of the core modules ``huc verify`` kills.  Not a test:
prints the score measured in one run, over a random sample (fixed seed) of every mutation site
(:mod:`proofs_check.mutation` says what a mutant is).  Survivors are printed with their change,
to be read: some are equivalent (the change cannot alter any result), the others are holes in
the checks.  ``tests/test_mutation.py`` runs a fixed sample in the suite.

Run: ``python bench/mutation.py`` (``--mutants 40 --workers 2``; ``--quick``: 3 mutants).
"""

from __future__ import annotations

import argparse
import random
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from proofs_check.mutation import CORE, ROOT, equivalent, run_mutant, sites  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mutants", type=int, default=40)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=400)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    count = 3 if args.quick else args.mutants
    everywhere = [(m, k, line, what) for m in CORE for k, line, what in sites((ROOT / "huc_ref" / m).read_text())]
    sample = random.Random(args.seed).sample(everywhere, count)
    print(f"{len(everywhere)} mutation sites in {len(CORE)} core modules; {count} mutants (seed {args.seed})")
    with ThreadPoolExecutor(args.workers) as pool:
        verdicts = list(pool.map(lambda s: run_mutant(s[0], s[1], args.timeout), sample))
    same = 0
    for (module, index, line, what), verdict in zip(sample, verdicts):
        text = (ROOT / "huc_ref" / module).read_text().splitlines()[line - 1].strip()
        reason = equivalent(module, index) if verdict == "SURVIVED" else None
        same += reason is not None
        print(f"  {module}:{line} {what}  [{text[:70]}]: {verdict}" + (f" (equivalent: {reason})" if reason else ""))
    killed = sum(v.startswith("KILLED") for v in verdicts)
    print(f"huc verify killed {killed} of {count} mutants ({100 * killed / count:.0f}%); {same} survivors are "
          f"equivalent: {killed} of {count - same} non-equivalent ({100 * killed / max(1, count - same):.0f}%)")


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
