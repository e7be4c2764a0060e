"""huc-ref: the reference implementation of Utility Calibration (UC) and Hierarchical
Utility Calibration (HUC), after Futami, Huang and Takeuchi, *Hierarchical Utility
Calibration for Structured Multiclass Decisions*.

Notation table (paper -> Python)::

    T, Y_a, d_v, V°           LabelTree, LabelTree.leaves_below, .d, .internal_nodes
    pi_a(p)                    TreeDecomposition.pi            (A.3)
    N_{u,a}(p), mu_{u,a}(p)    TreeDecomposition.N, .mu        (A.3)
    mu_u(p)                    Utility.score, TreeDecomposition.mu(root)
    q_{v,j}(p)                 TreeDecomposition.q             (Sec. 3.1)
    R_v(p, y)                  TreeDecomposition.R             (Sec. 3.1)
    Delta_{u,v}(p)             TreeDecomposition.Delta         (Sec. 3.1)
    g_{u,v}(p, y)              TreeDecomposition.g             (Thm 3.1)
    V_T(u)                     Utility.relevant_nodes          (Def. 3.2)
    M_{c,u,I}                  interval_moment(..., node=None) (Sec. 2.1)
    Gamma_{c,u,I,v}            interval_moment(..., node=v)    (Def. 3.2)
    UC, HUC                    audit(...).uc, .huc             (Sec. 2.1, Def. 3.2)
    Algorithm 2                max_interval_sum                (App. F.3)
    N_cand                     AuditResult.n_cand              (Thm 3.4)
    Algorithm 1 / 3, UC-Boost  boost(..., method="huc"|"uc")   (Sec. 3.2, App. E, H)
    Gamma_t, Lambda_t, alpha_t boost(...).updates[t]           (E.2)
    Thm 3.5                    boost(...).theorem_3_5          (Sec. 3.2)
    Temp./Vec./Dir. -> HUC     recalibration.two_stage         (H.2, H.6, K.1)

The exact path accepts ``int``, ``Fraction``, ``"a/b"`` and decimal strings, never a
float; every result is a ``Fraction``.  Bad input raises :class:`HUCError`.

>>> from huc_ref import LabelTree, FiniteDistribution, Table, audit
>>> t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
>>> d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
>>> r = audit(d, {"u": Table(t, [-1, 1, 1, 1])})
>>> r.uc.sup, r.huc.sup
(Fraction(0, 1), Fraction(1, 4))
"""

from .audit import atom_terms, interval_moment
from .decomposition import Prediction, TreeDecomposition, subtree_sums
from .distribution import Atom, FiniteDistribution, prepare_prediction
from .engines import audit, boost
from .errors import HUCError
from .formats import Case, read_case
from .intervals import Interval, IntervalMax, max_interval_sum
from .rational import exact
from .results import AuditResult, BoostResult, Candidate
from .tree import LabelTree
from .utilities import (
                        Aggregated,
                        BinaryDecision,
                        Decision,
                        PerAtom,
                        Rank,
                        Subtree,
                        Table,
                        Top1AtDepth,
                        TopK,
                        Utility,
                        class_indicator,
)

__version__ = "0.2.0"

__all__ = [
    "HUCError", "exact", "LabelTree", "Prediction", "TreeDecomposition", "subtree_sums",
    "Utility", "Table", "Subtree", "Rank", "TopK", "Decision", "BinaryDecision", "Top1AtDepth",
    "Aggregated", "PerAtom", "class_indicator", "Atom", "FiniteDistribution", "prepare_prediction",
    "Interval", "IntervalMax", "max_interval_sum", "AuditResult", "Candidate", "atom_terms", "audit",
    "interval_moment", "Case", "read_case", "boost", "BoostResult",
]
