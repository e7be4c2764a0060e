"""A fixed sample of mutants of the core modules, which ``huc verify`` must kill
(:mod:`proofs_check.mutation` says what a mutant is and how it is run).

The sample was drawn once, ``random.Random(2026).sample`` over every mutation site of the eight
core modules (633 sites), and is pinned here by the line it changes (so it stays the same
mutants when other lines move).  Each mutant runs in a copy of the packages: the checks of
``huc verify`` run until one fails.  Three of the mutants drawn are equivalent (no result can
change; ``proofs_check.mutation.EQUIVALENT`` gives each reason) and are not run.  The subtraction
in UC-Boost's direction ``u_y - mu`` is the one both methods' directions share (``minus`` in
``_Engine.direction``, exact where the means are): not equivalent, since HUC-Boost's depends on it.
``bench/mutation.py`` measures a larger random sample.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from proofs_check.mutation import EQUIVALENT, find, run_mutant

# (module, the line as it reads, the change, which of the line's such changes)
SAMPLE = [
    ("intervals.py", "if self.hi is not None and (x > self.hi or (x == self.hi and not self.hi_closed)):",
     "Eq -> NotEq", 0),
    ("bounds.py", "if isinstance(x, bool) or not isinstance(x, Integral) or x < 1:", "Or -> And", 0),
    ("boost.py", "for a in ([None] if self.method == 'uc' else rel):", "Eq -> NotEq", 0),
    ("intervals.py", "if best is None or abs(num) * best[1] > abs(best[0]) * den:", "Mult -> Div", 0),
    ("utilities.py", "if par >= 0 and par not in ids:", "GtE -> Gt", 0),
    ("driver.py", "self.position, self.passes = 0, self.passes + 1  # a complete pass", "constant 0 -> 1", 0),
    ("boost.py", "scale = self.down(None, factor, lambda v, f, j: f[j] if v is None else v * f[j])", "Mult -> Div", 0),
    ("boost.py", "return ctx.mpf(x.numerator) / x.denominator if type(x) is Fraction else x", "Div -> Mult", 0),
    ("boost.py", "t = terms_at(self.tree, Prediction(self.tree, atom.p), vals[-1], atom, rel, _same)",
     "constant 1 -> 2", 0),
    ("boost.py", "alpha = (1 if gamma_h > 0 else -1) * (float(fixed) if engine.float else fixed)",
     "constant 0 -> 1", 0),
    ("boost.py", "keys = [tuple(sorted(k)) for k in self.down((), moved, lambda key, m, j: key + ((m[0][j], m[1]),))]",
     "constant 0 -> 1", 0),
]

def _verdicts():
    def one(entry):
        module, text, change, nth = entry
        return run_mutant(module, find(module, text, change, nth), timeout=600)
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(one, SAMPLE))


@pytest.mark.slow
def test_huc_verify_kills_the_fixed_sample_of_mutants(capsys):
    verdicts = _verdicts()
    killed = [v.startswith("KILLED") for v in verdicts]
    with capsys.disabled():
        print(f"\nmutation sample: huc verify killed {sum(killed)} of {len(SAMPLE)} non-equivalent mutants "
              f"(drawn with 3 equivalent ones, not run: see the module's docstring)")
        for (module, text, change, _), verdict in zip(SAMPLE, verdicts):
            print(f"  {module}: {change} in {text[:60]!r}: {verdict[:100]}")
    survivors = [f"{m}: {change} in {text!r}" for (m, text, change, _), k in zip(SAMPLE, killed) if not k]
    assert not survivors, survivors


def test_the_pinned_mutants_still_exist():
    """Every pinned line and change is still in its module (else the sample needs redrawing)."""
    for entry in SAMPLE + list(EQUIVALENT):
        assert find(*entry) >= 0
    assert not set(SAMPLE) & set(EQUIVALENT)


def test_parses_never_overlap_across_threads(monkeypatch):
    """The sample runs in two threads, and CPython before 3.13 shares the AST constructor's recursion
    count between threads (gh-106905: CI once raised "AST constructor recursion depth mismatch"):
    no two parses of :mod:`proofs_check.mutation` may run at once."""
    import ast
    import threading
    import time

    import proofs_check.mutation as mutation

    inside, most, guard, parse = [0], [0], threading.Lock(), ast.parse

    def slow_parse(source, *args, **kwargs):
        with guard:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.01)  # long enough for another thread to arrive
        try:
            return parse(source, *args, **kwargs)
        finally:
            with guard:
                inside[0] -= 1

    monkeypatch.setattr(mutation.ast, "parse", slow_parse)
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda entry: find(*entry), SAMPLE[:4] * 2))
    assert found == [find(*entry) for entry in SAMPLE[:4] * 2]
    assert most[0] == 1
