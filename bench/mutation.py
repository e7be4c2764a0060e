"""How many mutants of the core modules ``huc verify`` kills (issue #19, item 5).  Not a test:
prints the score measured in one run.

A mutant is one small change to one module (a comparison flipped, ``+`` for ``-``, ``*`` for
``/``, ``and`` for ``or``, a constant moved by one), chosen with a fixed seed over every place
the operators apply in the core modules.  Each runs in a copy of the packages; the checks run in
the paper's order and the mutant is killed at the first check that does not pass (or when it
runs longer than ``--timeout`` seconds).  Survivors are printed with their change, to be read:
some are equivalent (the change cannot alter any result), the others are holes in the checks.

Run: ``python bench/mutation.py`` (``--mutants 20 --workers 2``; ``--quick``: 3 mutants).
"""

from __future__ import annotations

import argparse
import ast
import random
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ["decomposition.py", "intervals.py", "audit.py", "utilities.py", "tree.py", "bounds.py", "boost.py",
        "driver.py"]

_SWAPS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
          ast.NotEq: ast.Eq, ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
          ast.And: ast.Or, ast.Or: ast.And}

_DRIVER = """
import sys
from proofs_check.runner import selected_checks
for check in selected_checks():
    r = check.run()
    if r["status"] != "ok":
        print("KILLED", r["check"], r["status"], r["detail"][:160].replace(chr(10), " "))
        sys.exit(1)
print("SURVIVED")
"""


def _docstrings(tree: ast.AST) -> set:
    """The ids of docstring nodes (not code: never mutated)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def sites(source: str) -> list[tuple[int, str]]:
    """Every place a mutation applies: ``(index in ast.walk order, description)``."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    out = []
    for k, node in enumerate(ast.walk(tree)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _SWAPS:
            out.append((k, f"line {line}: {type(node.ops[0]).__name__} -> {_SWAPS[type(node.ops[0])].__name__}"))
        elif isinstance(node, (ast.BinOp, ast.BoolOp)) and type(node.op) in _SWAPS:
            out.append((k, f"line {line}: {type(node.op).__name__} -> {_SWAPS[type(node.op)].__name__}"))
        elif (isinstance(node, ast.Constant) and type(node.value) is int and id(node) not in skip
              and node.value in (0, 1, 2)):
            out.append((k, f"line {line}: constant {node.value} -> {node.value + 1}"))
    return out


def mutate(source: str, index: int) -> str:
    """``source`` with the mutation at site ``index`` (:func:`sites`) applied."""
    tree = ast.parse(source)
    for k, node in enumerate(ast.walk(tree)):
        if k != index:
            continue
        if isinstance(node, ast.Compare):
            node.ops = [_SWAPS[type(node.ops[0])]()]
        elif isinstance(node, (ast.BinOp, ast.BoolOp)):
            node.op = _SWAPS[type(node.op)]()
        else:
            node.value += 1
        break
    return ast.unparse(tree)


def run_mutant(module: str, index: int, timeout: float) -> str:
    """``KILLED <check> ...`` or ``SURVIVED`` for one mutant, run in a copy of the packages."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for pkg in ("huc_ref", "proofs_check"):
            shutil.copytree(ROOT / pkg, tmp / pkg, ignore=shutil.ignore_patterns("__pycache__"))
        target = tmp / "huc_ref" / module
        target.write_text(mutate(target.read_text(), index))
        try:
            out = subprocess.run([sys.executable, "-c", _DRIVER], cwd=tmp, capture_output=True, text=True,
                                 timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"KILLED (timeout after {timeout:.0f} s)"
        lines = (out.stdout.strip() or out.stderr.strip() or "?").splitlines()
        last = lines[-1]
        return last if last.startswith(("KILLED", "SURVIVED")) else f"KILLED (import fails: {last[:100]})"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mutants", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=400)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    count = 3 if args.quick else args.mutants
    everywhere = [(m, k, what) for m in CORE for k, what in sites((ROOT / "huc_ref" / m).read_text())]
    sample = random.Random(args.seed).sample(everywhere, count)
    print(f"{len(everywhere)} mutation sites in {len(CORE)} core modules; {count} mutants (seed {args.seed})")
    with ThreadPoolExecutor(args.workers) as pool:
        verdicts = list(pool.map(lambda s: run_mutant(s[0], s[1], args.timeout), sample))
    for (module, _, what), verdict in zip(sample, verdicts):
        print(f"  {module}:{what}: {verdict}")
    killed = sum(v.startswith("KILLED") for v in verdicts)
    print(f"huc verify killed {killed} of {count} mutants ({100 * killed / count:.0f}%)")


if __name__ == "__main__":
    main()
