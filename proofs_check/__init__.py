"""Verification of the paper's claims: ``huc verify`` (or ``python -m proofs_check``).

One check per claim, named after it (``check_theorem_3_1_telescoping``).  Each check
builds the paper's formula directly (:mod:`proofs_check.paper`) and runs ``huc_ref``'s
own code on the same symbols or rationals, so a bug in ``huc_ref`` makes it fail.  Each
result says how the claim was checked: *proved symbolically*, *exhaustive* (proved for
every tree shape up to a stated size) or *checked at exact rational points* (sampled;
never called proved).  See :mod:`proofs_check.core`.
"""

from .core import CHECKS, Check, CheckFailed, Evidence
from .runner import format_table, main, run_checks

__all__ = ["CHECKS", "Check", "CheckFailed", "Evidence", "run_checks", "format_table", "main"]
