"""How strong the checks are: mutants of ``huc_ref``'s core modules and whether the checks kill
them.  Used by ``bench/mutation.py`` (a random sample, the score printed) and
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
import threading
from pathlib import Path

__all__ = ["CORE", "EQUIVALENT", "sites", "mutate", "find", "equivalent", "run_mutant"]

ROOT = Path(__file__).resolve().parents[1]
#: The core modules of ``huc_ref`` whose mutants the checks must kill.
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


_HOLDS = "result.theorem_3_5['holds'] = bool(applies and all(c.bound_ok and c.decreased and c.floor_ok for c in checks)"
_THEOREM = ("it differs only when an update fails one of Theorem 3.5's inequalities, which the theorem excludes "
            "(and the checks would report)")

#: Mutants no result can tell apart from the code, each with the reason: ``(module, the line as it
#: reads, the change, which of the line's such changes) -> reason``.  Read from the survivors of
#: ``bench/mutation.py`` and the fixed sample of ``tests/test_mutation.py``.
EQUIVALENT = {
    ("boost.py", "sign = 0 if row.empty else (row.moment > 0) - (row.moment < 0)", "constant 0 -> 1", 0):
        "the sign enters only the key on which the two precisions must agree, and both compute it alike",
    ("boost.py", "bound_ok, decreased = after <= loss - promised + 1e-12, after < loss", "Lt -> LtE", 0):
        "arithmetic='float' only: a float log loss equal before and after an update cannot happen, the update "
        "lowers it by at least eps^2/2 (Thm 3.5), far above one rounding",
    ("boost.py", "decreased = (after - loss).b < 0", "Lt -> LtE", 0):
        "an interval's upper end exactly 0 for a decrease of at least eps^2/2 cannot happen",
    ("boost.py", "alpha = (1 if gamma_h > 0 else -1) * (float(fixed) if engine.float else fixed)", "Gt -> GtE", 0):
        "an updated candidate has |Gamma| > eps, so Gamma = 0 never reaches the step",
    ("boost.py", "dec = TreeDecomposition(tree, atom.p, [0] * tree.K)", "constant 0 -> 1", 0):
        "only q_v(p) is read from this decomposition, and it does not depend on the utility values",
    ("boost.py", "star_v = sum(star, Fraction(0))", "constant 0 -> 1", 0):
        "adds -sum_j h_j q_j to Gamma, which is 0: h = c Delta_{u,v}(p) has zero q_v(p)-weighted mean (eq. 63)",
    ("bounds.py", "if self.hi <= x:", "LtE -> Lt", 0):
        "an enclosure's end equal to the threshold: the mutant cannot decide there and the caller raises the "
        "precision, which decides the same",
    ("bounds.py", "if self.lo > x:", "Gt -> GtE", 0):
        "as above, for the lower end",
    ("driver.py", _HOLDS, "And -> Or", 0): _THEOREM,
    ("driver.py", _HOLDS, "And -> Or", 1): _THEOREM,
    ("intervals.py", "return 0, 1", "constant 1 -> 2", 0):
        "the empty sum is never asked for: a candidate pair has r < b",
    ("intervals.py", "pairs = _candidate_pairs(floors, threshold) if threshold > 0 else None", "constant 0 -> 1", 0):
        "the threshold counts units of 2^-k with k >= 64: a threshold of exactly 1 only moves the search to a "
        "finer k, which finds the same pairs",
    ("intervals.py", "if k > 1 << 20:  # only exact near-ties remain at any resolution: scan exactly",
     "constant 1 -> 2", 0):
        "where the certified search gives up for the exact scan: both are exact with the same tie rule",
    ("tree.py", "lo = [0] * n", "constant 0 -> 1", 0): "every entry is overwritten in the post-order pass below",
    ("tree.py", "hi = [0] * n", "constant 0 -> 1", 0): "every entry is overwritten in the post-order pass below",
}


# CPython before 3.13 counts the AST constructor's recursion in state shared by all threads
# (gh-106905): two threads parsing at once can raise "SystemError: AST constructor recursion depth
# mismatch" (CI's run of tests/test_mutation.py did, on 3.11.7).  Every parse here holds this lock.
_PARSING = threading.Lock()


def _parse(source: str) -> ast.Module:
    with _PARSING:
        return ast.parse(source)


def equivalent(module: str, index: int) -> str | None:
    """The reason the mutant at site ``index`` of ``huc_ref/<module>`` is equivalent, if it is listed.

    >>> equivalent("tree.py", find("tree.py", "hi = [0] * n", "constant 0 -> 1"))
    'every entry is overwritten in the post-order pass below'
    """
    for (m, text, change, nth), reason in EQUIVALENT.items():
        if m == module:
            try:
                if find(m, text, change, nth) == index:
                    return reason
            except LookupError:
                continue
    return None


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
    tree = _parse(source)
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
    tree = _parse(source)
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

    >>> find("tree.py", "hi = [0] * n", "constant 0 -> 1") > 0
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
