"""Benchmark of exact numbers of a million digits written and read as text (docs/specification.md
§6: exact results are written whole).  Not a test: it prints times and ratios measured in one run.

* **writer**: a million-digit integer to decimal text with gmpy2 (where installed), with
  ``rational._decimal_digits`` (the decimal module's exact arithmetic, used without gmpy2) and
  with CPython's ``str`` (its 4,300-digit guard lifted; quadratic in CPython 3.11);
* **reader**: the same text back to an integer with gmpy2, ``rational._digits_value`` and ``int``;
* **huc audit --json** of ``tests.shapes.long_binary_case`` (520 atoms of 1,990-digit
  predictions; its UC has about a million digits) as a whole command, with gmpy2, without it
  (blocked in the child process), and without it with the writer swapped for CPython's ``str``
  (the writer ``_decimal_digits`` replaces); the three outputs are checked byte-identical;
* **certified HUC-Boost** on ``long_binary_case`` with 10 to 160 atoms: the certified engine
  (``arithmetic="exact"``), which keeps the terms of atoms no update has touched exact
  (docs/specification.md §4), so Algorithm 2's prefix sums over them are rationals whose
  denominators have up to ``1,990 x atoms`` digits, against certified float64
  (``arithmetic="certified"``); the two runs' updates are checked to be the same decisions; up to
  80 atoms the certified engine again with those exact parts summed as ``Fraction`` s instead of
  gmpy2's ``mpq`` (``boost._gmp_exact_parts`` turned off; checked to give the same run); and
  certified float64 alone on the 520-atom case.

Run: ``python bench/long_numbers.py`` (``--quick``: half the digits, 130 atoms, boosting to 20).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import mpmath  # noqa: E402

from bench.workloads import timed  # noqa: E402
from huc_ref import boost, read_case  # noqa: E402
from huc_ref.rational import _decimal_digits, _digits_value  # noqa: E402
from tests.shapes import long_binary_case  # noqa: E402

#: The child process's prologue: ``gmpy2`` blocked (``import gmpy2`` raises ImportError), and, for
#: the ``str`` row, the decimal writer replaced by CPython's ``str`` with its guard lifted.
BLOCK_GMPY2 = "import sys; sys.modules['gmpy2'] = None; "
PLAIN_STR = ("sys.set_int_max_str_digits(0); import huc_ref.rational as r; "
             "r._decimal_digits = str; ")
RUN_CLI = "from huc_ref.cli import main; sys.exit(main(sys.argv[1:]))"


def have_gmpy2() -> bool:
    try:
        import gmpy2  # noqa: F401
    except ImportError:
        return False
    return True


def conversions(digits: int) -> None:
    """Print the writer's and the reader's rows for one integer of about ``digits`` digits."""
    n = 7 ** int(digits / 0.845098)  # log10(7) = 0.845098...
    sys.set_int_max_str_digits(0)
    t_str, text = timed(str, n)
    rows = {"writer": [("CPython str", t_str)], "reader": []}
    t_dec, out = timed(_decimal_digits, n)
    assert out == text, "decimal writer differs from str"
    rows["writer"].append(("decimal module", t_dec))
    t_int, back = timed(int, text)
    rows["reader"].append(("CPython int", t_int))
    t_dv, back2 = timed(_digits_value, text)
    assert back2 == back == n, "halves reader differs from int"
    rows["reader"].append(("halves", t_dv))
    if have_gmpy2():
        import gmpy2
        t_g, out = timed(lambda: gmpy2.mpz(n).digits())
        assert out == text
        rows["writer"].append(("gmpy2", t_g))
        t_g, back3 = timed(lambda: int(gmpy2.mpz(text)))
        assert back3 == n
        rows["reader"].append(("gmpy2", t_g))
    print(f"{len(text):,}-digit integer: seconds, and CPython's time over each")
    for part, cells in rows.items():
        base = cells[0][1]
        print(f"  {part:<7}" + "".join(f"  {name} {t:7.3f} s ({base / t:5.1f}x)" for name, t in cells))


def end_to_end(atoms: int, digits: int) -> None:
    """Time ``huc audit CASE --json`` in child processes and check their outputs equal."""
    case = long_binary_case(atoms, digits)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.json"
        path.write_text(json.dumps(case))
        runs = [("with gmpy2", "import sys; ")] if have_gmpy2() else []
        runs += [("without gmpy2", BLOCK_GMPY2), ("without, CPython str", BLOCK_GMPY2 + PLAIN_STR)]
        outputs, times = [], []
        for _, prologue in runs:
            t0 = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", prologue + RUN_CLI, "audit", str(path), "--json"],
                                  capture_output=True, check=True, cwd=ROOT)
            times.append(time.perf_counter() - t0)
            outputs.append(done.stdout)
    assert all(o == outputs[0] for o in outputs), "the engines' huc-result/1 documents differ"
    uc = json.loads(outputs[0])["uc"]["value"]
    print(f"huc audit --json: {atoms} atoms of {digits}-digit predictions, UC of {len(uc):,} characters")
    for (name, _), t in zip(runs, times):
        print(f"  {name:<22} {t:8.2f} s   ({t / times[-1]:.3f} of the last row)")


def boosting(sizes, digits: int, fast_only=(), fraction_up_to: int = 80) -> None:
    """Time certified HUC-Boost on both engines and check they take the same decisions; up to
    ``fraction_up_to`` atoms, the certified engine again with its prefix sums' exact parts kept
    as ``Fraction`` s (gmpy2's ``mpq`` turned off: mpmath's integers taken as Python's), the same
    run; for ``fast_only`` sizes, certified float64 alone."""
    print(f"certified HUC-Boost (epsilon 1/100), {digits}-digit predictions: seconds")
    for atoms in fast_only:
        case = read_case(long_binary_case(atoms, digits))
        t_fast, fast = timed(boost, case.distribution, case.utilities, arithmetic="certified")
        print(f"  {atoms:>4} atoms, {len(fast.updates):>3} updates: certified float64 {t_fast:6.2f} s", flush=True)
    for atoms in sizes:
        case = read_case(long_binary_case(atoms, digits))
        runs = {}
        for engine, arithmetic in (("exact", None), ("fast", "certified")):
            runs[engine] = timed(boost, case.distribution, case.utilities, engine=engine, arithmetic=arithmetic)
        (t_exact, exact), (t_fast, fast) = runs["exact"], runs["fast"]
        decisions = [[(u["subgroup"], u["utility"], u["node"], str(u["gamma"]).startswith("-")) for u in r.updates]
                     for r in (exact, fast)]
        assert decisions[0] == decisions[1], "the engines' certified decisions differ"
        line = (f"  {atoms:>4} atoms, {len(exact.updates):>3} updates: certified engine {t_exact:7.2f} s, "
                f"certified float64 {t_fast:5.2f} s ({t_exact / t_fast:5.1f}x)")
        if atoms <= fraction_up_to and mpmath.libmp.BACKEND == "gmpy":
            saved, mpmath.libmp.BACKEND = mpmath.libmp.BACKEND, "python"  # (_gmp_exact_parts reads it)
            try:
                t_frac, plain = timed(boost, case.distribution, case.utilities, engine="exact")
            finally:
                mpmath.libmp.BACKEND = saved
            assert plain.to_json() == exact.to_json(), "Fraction and mpq sums gave different runs"
            line += f"; Fraction sums {t_frac:7.2f} s ({t_frac / t_exact:4.1f}x the engine's)"
        print(line, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="half a million digits; a 130-atom case")
    args = ap.parse_args()
    conversions(500_000 if args.quick else 1_000_000)
    end_to_end(130 if args.quick else 520, 1990)
    boosting((10, 20) if args.quick else (10, 20, 40, 80, 160), 1990, fast_only=(130,) if args.quick else (520,))


if __name__ == "__main__":
    from bench.results import recorded
    with recorded(__file__):  # the output also goes to docs/results (bench/results.py)
        main()
