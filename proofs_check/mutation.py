"""How strong the checks are: mutants of ``huc_ref``'s core modules and whether the checks kill
them (issue #19, item 5).  Used by ``bench/mutation.py`` (a random sample, the score printed) and
``tests/test_mutation.py`` (a fixed sample that must be killed).

A mutant is one small change to one module: a comparison flipped (``<`` for ``<=``, ``==`` for
``!=``), ``+`` for ``-``, ``*`` for ``/``, ``and`` for ``or``, or an integer constant 0, 1 or 2
moved up by one.  Docstrings and the arguments of ``raise`` (a message's text) are not mutated.
A mutant runs in a copy of the packages: the checks of ``huc verify`` run (the quick ones
first; the verdict does not depend on the order) until one does not pass, and the mutant is
killed; or all pass and it survived.  A survivor is either *equivalent* (no result can change)
or a hole in the checks.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["CORE", "sites", "mutate", "find", "run_mutant"]

ROOT = Path(__file__).resolve().parents[1]
CORE = ["decomposition.py", "intervals.py", "audit.py", "utilities.py", "tree.py", "bounds.py", "boost.py",
        "driver.py"]

_SWAPS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
          ast.NotEq: ast.Eq, ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
          ast.And: ast.Or, ast.Or: ast.And}

# the symbolic checks take most of huc verify's time: they run last, so that a mutant they do
# not catch is caught sooner by a quick one
_SLOW = ("telescoping", "log_loss_derivatives", "c2_conditional", "c3_orthogonality", "c3_orthonormal", "d1_canonical",
         "appendix_g")

_DRIVER = f"""
import sys
from proofs_check.runner import selected_checks
checks = selected_checks()
slow = {_SLOW!r}
for check in sorted(checks, key=lambda c: any(s in c.name for s in slow)):
    r = check.run()
    if r["status"] != "ok":
        print("KILLED", r["check"], r["status"], r["detail"][:160].replace(chr(10), " "))
        sys.exit(1)
print("SURVIVED")
"""


def _untouchable(tree: ast.AST) -> set:
    """The ids of nodes never mutated: docstrings and everything inside a ``raise``."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
        if isinstance(node, ast.Raise):
            out.update(id(n) for n in ast.walk(node))
    return out


def sites(source: str) -> list[tuple[int, int, str]]:
    """Every place a mutation applies: ``(index in ast.walk order, line, change)``.

    >>> for site in sites("def f(x):\\n    return x < 1 and x + 2\\n"):
    ...     print(site)
    (5, 2, 'And -> Or')
    (7, 2, 'Lt -> LtE')
    (8, 2, 'Add -> Sub')
    (11, 2, 'constant 1 -> 2')
    (14, 2, 'constant 2 -> 3')
    >>> sites("if x:\\n    raise ValueError(f'{x + 1}')\\n")  # a message is not mutated
    []
    """
    tree = ast.parse(source)
    skip = _untouchable(tree)
    out = []
    for k, node in enumerate(ast.walk(tree)):
        if id(node) in skip:
            continue
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _SWAPS:
            out.append((k, line, f"{type(node.ops[0]).__name__} -> {_SWAPS[type(node.ops[0])].__name__}"))
        elif isinstance(node, (ast.BinOp, ast.BoolOp)) and type(node.op) in _SWAPS:
            out.append((k, line, f"{type(node.op).__name__} -> {_SWAPS[type(node.op)].__name__}"))
        elif isinstance(node, ast.Constant) and type(node.value) is int and node.value in (0, 1, 2):
            out.append((k, line, f"constant {node.value} -> {node.value + 1}"))
    return out


def mutate(source: str, index: int) -> str:
    """``source`` with the mutation at site ``index`` (:func:`sites`) applied.

    >>> print(mutate("y = x < 1", 3))
    y = x <= 1
    """
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


def find(module: str, text: str, change: str, nth: int = 0) -> int:
    """The site index of the ``nth`` mutation ``change`` on the line of ``huc_ref/<module>`` that
    reads ``text`` (stripped): a fixed mutant that survives edits elsewhere in the module.

    >>> find("bounds.py", "factor = {'adaptive': 2, 'fixed': 4}.get(step)", "constant 2 -> 3") > 0
    True
    """
    source = (ROOT / "huc_ref" / module).read_text()
    lines = source.splitlines()
    hits = [k for k, line, what in sites(source) if what == change and _normal(lines[line - 1]) == _normal(text)]
    if len(hits) <= nth:
        raise LookupError(f"{module}: no {change!r} on a line reading {text!r} (the sample needs updating)")
    return hits[nth]


def _normal(line: str) -> str:
    return " ".join(line.replace('"', "'").split())


def run_mutant(module: str, index: int, timeout: float, tests: list[str] | None = None) -> str:
    """``KILLED <check> ...`` or ``SURVIVED`` for one mutant, run in a copy of the packages by the
    checks of ``huc verify`` and then, if it survived them, by the pytest node ids ``tests``."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for pkg in ("huc_ref", "proofs_check") + (("tests",) if tests else ()):
            shutil.copytree(ROOT / pkg, tmp / pkg, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
        target = tmp / "huc_ref" / module
        target.write_text(mutate(target.read_text(), index))
        try:
            out = subprocess.run([sys.executable, "-c", _DRIVER], cwd=tmp, capture_output=True, text=True,
                                 timeout=timeout)
            last = (out.stdout.strip() or out.stderr.strip() or "?").splitlines()[-1]
            if last == "SURVIVED" and tests:
                run = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                                     cwd=tmp, capture_output=True, text=True, timeout=timeout)
                return "SURVIVED" if run.returncode == 0 else f"KILLED by {' '.join(tests)}"
        except subprocess.TimeoutExpired:
            return f"KILLED (timeout after {timeout:.0f} s)"
        return last if last.startswith(("KILLED", "SURVIVED")) else f"KILLED (import fails: {last[:100]})"
