"""The fast backend's numbers: one decision protocol, two contexts (docs/specification.md §4).

Every decision of a boosting run compares numbers whose exact values are known only to within
an error bound: which candidate is largest (Sec. 3.2), whether it exceeds epsilon, where
Algorithm 2's witness starts and ends (App. F.3), the utilities' own choices (A.1: a rank, an
action, a top-1 node), the sign of ``Gamma`` for a fixed step (App. H.1).  A *context* takes
them all through one interface, as mpmath's contexts run one algorithm in several arithmetics:

``sign(value, error, refine)``
    the sign of a number known to within ``error`` of ``value``;
``compare(a, ea, b, eb, refine)``
    the sign of ``a - b`` (errors ``ea`` and ``eb``);
``argmax(values, errors, refine, same)``
    the first maximiser (App. F.3's tie rule) of numbers known to within ``errors``;
``refine(attempt)``
    ``attempt(bits)`` at rising precision until it answers.

Each answers, or returns :data:`UNDECIDED` ("cannot be decided" is part of the contract, as
for python-flint's ball predicates); :meth:`Certified.decided` turns that into
:class:`Undecided`, which the backend answers by asking the judge.

* :data:`FLOAT64` (plain float64, ``arithmetic="float64"``) decides by rounding, and says
  so: ``sign`` is the float's sign, ``argmax`` the first value no later one passes by more
  than its error (a tolerance for rounding), and nothing is ever undecided or refined.  Its
  runs are uncertified.
* :class:`Certified` (``arithmetic="certified"``) decides where the bound separates the
  numbers; else it encloses them with Arb (python-flint's ball arithmetic, the callers'
  ``refine(bits)``) at :data:`REFINE_BITS` = 128, 512 and 2,048 bits, python-flint's pattern
  of predicates on balls at rising precision; past the last, the decision is
  :data:`UNDECIDED`, and the run asks the judge (:class:`huc_ref.boost.Judge`, the certified
  mpmath engine, handed over by the dispatcher) for the whole choice on the same exact state.

Every decision the certified state takes, and where its refinement comes from
(:mod:`huc_ref.fast.certified`; ARCHITECTURE.md, "The decision protocol"):

===============================================  ==========================================
decision                                          protocol call (refinement)
===============================================  ==========================================
the largest candidate                             ``argmax`` (Arb sups; equal columns or
                                                  witnesses are one sup: ``same``)
whether it exceeds epsilon                        ``sign`` (Arb sup minus epsilon)
the witness's first largest and smallest prefix   ``refine`` (Arb prefix sums,
                                                  :func:`~huc_ref.fast.enclosures.ball_witness`)
a utility's choice on a boosted row               the family's ``decide`` hook, whose row
                                                  answers ``sign``, ``ranked``, ``first_largest``
                                                  by exact forms, then ``sign``/``argmax`` (Arb)
the order of two boosted rows' scores             ``compare`` (Arb scores; equal states equal)
the sign of ``Gamma`` for a fixed step             ``sign`` (no refinement: one HUCError)
===============================================  ==========================================
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..errors import HUCError

__all__ = ["Undecided", "UNDECIDED", "REFINE_BITS", "Float64", "Certified", "FLOAT64", "flint", "certain_extreme"]

#: The precisions (bits) of :meth:`Certified.refine`: a decision tree's rows, smoothed (K.1), give
#: scores 2e-27 apart (``bench/certified.py --fit``), which 128 bits separate.
REFINE_BITS = (128, 512, 2048)


class Undecided(Exception):
    """A decision the context cannot take (:data:`UNDECIDED` raised, with the reason): the run
    asks the judge, the certified engine, on the same exact state (docs/specification.md §4).

    Examples
    --------
    >>> Certified.decided(UNDECIDED, "the largest candidate")
    Traceback (most recent call last):
    huc_ref.fast.context.Undecided: the largest candidate
    """


class _Marker:
    """The answer "cannot be decided" (:data:`UNDECIDED`)."""

    __slots__ = ()

    def __repr__(self):
        return "UNDECIDED"

    def __bool__(self):
        raise TypeError("UNDECIDED has no truth value: test `answer is UNDECIDED`")


#: What a context's decision returns where it cannot be decided.
UNDECIDED = _Marker()


def flint():
    """python-flint (Arb, the ball arithmetic of certified float64, docs/specification.md §4), or
    one HUCError saying how to install it.

    Returns
    -------
    module
        The ``flint`` module.

    Raises
    ------
    HUCError
        Of kind ``dependency``, where python-flint is not installed, naming the ``certified``
        extra.

    Examples
    --------
    >>> flint().arb(1) > 0
    True
    """
    try:
        import flint as module
    except ImportError:
        raise HUCError("arithmetic: 'certified' on the fast engine needs python-flint (pip install "
                       "'huc-ref[certified]')", kind="dependency") from None
    return module


def certain_extreme(balls, among: list, above: bool, exactly=None):
    """The index of ``among`` whose ball lies certainly above (``above``; else below) every other's,
    or None.  Only those whose midpoints round to the largest (smallest) float can be it: a ball
    certainly above another has the larger midpoint, and rounding keeps that order or makes a tie;
    among such ties each is tried, as a float64 tie of balls that Arb separates (two sups a
    rounding of the smoothing apart, 1e-22 here) need not put the largest first; so is every ball
    not certainly inside that of the largest (smallest) midpoint.  With ``exactly`` (``(m, j) ->``
    the sign of ``x_m - x_j`` or None), balls that overlap are compared by it, and of equal
    extremes the first in ``among`` is taken (App. F.3's tie rule): an exact 0 and a ball about 0
    from sums that cancel have different midpoints, the second's perhaps the larger.

    Parameters
    ----------
    balls : sequence of arb
        The enclosures, indexed as ``among`` names them.
    among : list of int
        The indices compared.
    above : bool
        The largest (True) or the smallest.
    exactly : callable, optional
        ``exactly(m, j)``: the sign of ``x_m - x_j`` where known exactly, else None.

    Returns
    -------
    int or None
        The index, or None where no ball is certainly the extreme.

    Examples
    --------
    >>> from flint import arb, ctx
    >>> with ctx.workprec(128):  # one float64 midpoint for the first two
    ...     balls = [arb(1) / 2, arb(1) / 2 + arb(2) ** -80, arb(0)]
    >>> certain_extreme(balls, [0, 1, 2], True), certain_extreme(balls, [0, 1, 2], False)
    (1, 2)
    >>> certain_extreme([arb(1), arb(1)], [0, 1], True) is None  # equal: no ball is certainly above
    True
    >>> C = [arb(0), -arb(1) / 10, arb(2.0 ** -200, 2.0 ** -190)]  # C_2 holds 0 and has the larger midpoint
    >>> certain_extreme(C, [0, 1, 2], True) is None  # Arb cannot tell C_0 from C_2
    True
    >>> certain_extreme(C, [0, 1, 2], True, lambda m, j: [0, -1, 0][m] - [0, -1, 0][j])  # equal exactly: the first
    0
    >>> wide = [arb(0, 1e-10), arb(0), arb(-1e-11)]  # 0 and 1 equal exactly; 2 overlaps 0 and no exact sign is known
    >>> certain_extreme(wide, [0, 1, 2], True, lambda m, j: 0 if {m, j} == {0, 1} else None) is None  # not 1
    True
    """
    mids = [float(balls[j].mid()) for j in among]
    t = among[int(np.argmax(mids) if above else np.argmin(mids))]
    side = -1 if above else 1  # the sign of x_o - x_j that leaves j the extreme

    def inner(o, j):  # x_o certainly on j's inner side
        return balls[o] < balls[j] if above else balls[o] > balls[j]

    def below(o, j):  # x_o on j's inner side, or equal to it and later
        if inner(o, j):
            return True
        sign = exactly(o, j) if exactly is not None else None
        return sign == side or (sign == 0 and o > j)
    for j in among:  # the extreme is t or a ball not certainly inside t's (0 and a ball about 0 are two floats)
        if (j == t or not inner(j, t)) and all(below(o, j) for o in among if o != j):
            return j
    return None


def _sign(x) -> int:
    return (x > 0) - (x < 0)


class Float64:
    """Plain float64 (``arithmetic="float64"``): every decision by rounding, never undecided,
    uncertified (the fast path's runs, App. F.4; their results say ``theorem_3_5["certified"] = False``).

    Examples
    --------
    >>> FLOAT64.sign(1e-300), FLOAT64.compare(0.3, 0.0, 0.1 + 0.2, 0.0)  # 0.1 + 0.2 rounds above 0.3
    (1, -1)
    >>> FLOAT64.argmax([0.25, 0.25 + 1e-17, 0.5], [1e-15] * 3)  # within the tolerance: the first stays
    2
    >>> FLOAT64.argmax([0.25, 0.25 + 1e-17], [1e-15] * 2)
    0
    """

    name = "float64"
    certified = False
    #: the ``arithmetic`` its results say (``huc-boost/1``)
    arithmetic = "float64"

    def sign(self, value, error=0.0, refine=None, why=None) -> int:
        """The sign of ``value`` as float64 rounded it (``error``, ``refine`` and ``why`` are not used):
        App. H.1's ``sign(Gamma)``, Sec. 3.2's ``sup > epsilon``.

        Parameters
        ----------
        value : float
            The number.
        error, refine, why
            Not used (the certified context's arguments).

        Returns
        -------
        int
            -1, 0 or 1.

        Examples
        --------
        >>> FLOAT64.sign(-1e-300, 1.0)
        -1
        """
        return _sign(value)

    def compare(self, a, ea, b, eb, refine=None, why=None) -> int:
        """The sign of ``a - b`` as float64 rounded them (App. F.3's orders of scores).

        Parameters
        ----------
        a, b : float
            The numbers.
        ea, eb, refine, why
            Not used (the certified context's arguments).

        Returns
        -------
        int
            -1, 0 or 1.

        Examples
        --------
        >>> FLOAT64.compare(0.25, 1.0, 0.5, 1.0)
        -1
        """
        return _sign(a - b)

    def argmax(self, values, errors, refine=None, same=None, why=None) -> int:
        """The first maximiser up to ``errors``: a later value replaces the best so far only where it
        passes it by more than its error (App. F.3's tie rule for sums equal in exact arithmetic).

        Parameters
        ----------
        values : sequence of float
            The numbers.
        errors : sequence of float
            Their error bounds.
        refine, same, why
            Not used (the certified context's arguments).

        Returns
        -------
        int
            The index.

        Examples
        --------
        >>> FLOAT64.argmax([0.5, 0.5 + 1e-16, 0.25], [1e-15] * 3)  # within the error: the first
        0
        """
        best = 0
        for j in range(1, len(values)):
            if values[j] > values[best] + errors[j]:
                best = j
        return best

    def refine(self, attempt):
        """Nothing is refined in float64 (docs/specification.md §4 asks it of certified arithmetic
        only): :data:`UNDECIDED`.

        Parameters
        ----------
        attempt : callable
            Not called.

        Returns
        -------
        UNDECIDED
            Always.

        Examples
        --------
        >>> FLOAT64.refine(lambda bits: 1)
        UNDECIDED
        """
        return UNDECIDED

    def state(self, backend):
        """The float64 state of ``backend``: the predictions themselves, moved as Algorithm 1 states
        it (:class:`huc_ref.fast.boost.FloatState`).

        Parameters
        ----------
        backend : FloatBackend
            The backend.

        Returns
        -------
        FloatState
            Its state.

        Examples
        --------
        >>> from huc_ref import demo
        >>> from huc_ref.fast.boost import FloatBackend
        >>> type(FLOAT64.state(FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 0.01))).__name__
        'FloatState'
        """
        from .boost import FloatState
        return FloatState(backend)


#: The plain float64 context (one is enough: it keeps nothing).
FLOAT64 = Float64()


class Certified:
    """Float64 with rigorous error bounds, Arb where they cannot decide, and the judge where Arb
    cannot either (``arithmetic="certified"``; docs/specification.md §4).  ``judge(dist, utilities,
    method, epsilon, digits)`` makes the certified engine's judge of one run
    (:class:`huc_ref.boost.Judge`: the dispatcher hands it over, so that the fast backend imports
    nothing of the exact one); None: an undecided choice is one HUCError.  ``digits``: the
    judge's working precision.  ``refine_bits``: the precisions of :meth:`refine`.  The
    context keeps the tallies of the run it serves: :attr:`refined` (what the bounds left to Arb)
    and :attr:`fallbacks` (what Arb left to the judge), by reason.

    Parameters
    ----------
    judge : callable, optional
        ``judge(dist, utilities, method, epsilon, digits)``, the maker of the certified engine's
        judge of one run; None: an undecided choice is one HUCError.
    digits : int, default 30
        The judge's working precision.
    refine_bits : tuple of int, default REFINE_BITS
        The precisions of :meth:`refine`.

    Examples
    --------
    >>> from fractions import Fraction
    >>> c = Certified()
    >>> c.sign(Fraction(1, 10**30), Fraction(1, 10**31)), c.sign(0.5, 1.0) is UNDECIDED
    (1, True)
    >>> from flint import arb
    >>> c.sign(0.0, 1e-20, refine=lambda bits: arb(10) ** -30)  # Arb at 128 bits: 1e-30 > 0
    1
    >>> c.compare(0.5, 1e-17, 0.5, 1e-17, refine=lambda bits: arb(1) / 3 - arb(2) / 6) is UNDECIDED  # a tie
    True
    """

    name = "certified"
    certified = True
    #: the ``arithmetic`` its results say (``huc-boost/1``)
    arithmetic = "certified"

    def __init__(self, judge=None, digits: int = 30, refine_bits: tuple = REFINE_BITS):
        self.judge, self.digits, self.refine_bits = judge, digits, tuple(refine_bits)
        self.refined: Counter = Counter()
        self.fallbacks: Counter = Counter()

    def refine(self, attempt):
        """``attempt(bits)`` (an answer, or None where its enclosures at ``bits`` cannot tell) at each
        precision of ``refine_bits`` in turn, the first answer; :data:`UNDECIDED` past the last
        (mpmath's ``autoprec``: precision raised to a maximum, then a documented failure;
        docs/specification.md §4).

        Parameters
        ----------
        attempt : callable
            ``attempt(bits)``: an answer, or None.

        Returns
        -------
        object
            The first answer, or :data:`UNDECIDED`.

        Raises
        ------
        HUCError
            Of kind ``dependency``, where python-flint is not installed (:func:`flint`).

        Examples
        --------
        >>> Certified(refine_bits=(64, 128)).refine(lambda bits: bits if bits > 100 else None)
        128
        >>> Certified(refine_bits=(64,)).refine(lambda bits: None)
        UNDECIDED
        """
        module = flint()
        for bits in self.refine_bits:
            with module.ctx.workprec(bits):
                found = attempt(bits)
            if found is not None:
                return found
        return UNDECIDED

    def sign(self, value, error=0, refine=None, why=None):
        """The sign of a number within ``error`` of ``value`` (floats or exact rationals): decided
        where the bound excludes 0 (or both are exactly 0); else from ``refine(bits)``, Arb's
        enclosure of the number at ``bits``, where one excludes 0 (or is exactly 0); else
        :data:`UNDECIDED` (docs/specification.md §4).  A decision past the bound is tallied under
        ``why``.

        Parameters
        ----------
        value : float or Fraction
            The number's approximation.
        error : float or Fraction, default 0
            The bound on its error.
        refine : callable, optional
            ``refine(bits)``: Arb's enclosure of the number at ``bits``.
        why : str, optional
            The reason tallied where the bound does not decide.

        Returns
        -------
        int or UNDECIDED
            -1, 0 or 1, or :data:`UNDECIDED`.

        Examples
        --------
        >>> from fractions import Fraction
        >>> Certified().sign(Fraction(0), Fraction(0)), Certified().sign(-2.0, 1.0)
        (0, -1)
        """
        if value - error > 0:
            return 1
        if value + error < 0:
            return -1
        if not error and not value:
            return 0
        if refine is None:
            return UNDECIDED

        def attempt(bits):
            x = refine(bits)
            return 1 if x > 0 else -1 if x < 0 else 0 if x == 0 else None
        found = self.refine(attempt)
        if found is not UNDECIDED:
            self.tally(why)
        return found

    def compare(self, a, ea, b, eb, refine=None, why=None):
        """The sign of ``a - b`` (errors ``ea``, ``eb``; ``refine(bits)``: Arb's ``a - b``), or
        :data:`UNDECIDED` (App. F.3's orders of scores, A.1's ranks; docs/specification.md §4).

        Parameters
        ----------
        a, b : float or Fraction
            The numbers' approximations.
        ea, eb : float or Fraction
            The bounds on their errors.
        refine : callable, optional
            ``refine(bits)``: Arb's enclosure of ``a - b``.
        why : str, optional
            The reason tallied where the bounds do not decide.

        Returns
        -------
        int or UNDECIDED
            -1, 0 or 1, or :data:`UNDECIDED`.

        Examples
        --------
        >>> Certified().compare(0.5, 1e-17, 0.25, 1e-17)
        1
        """
        return self.sign(a - b, ea + eb, refine, why)

    def argmax(self, values, errors, refine=None, same=None, why=None):
        """The first maximiser of numbers within ``errors`` of ``values``: the largest value where
        every other's bound lies below its own; else, of those that could be largest (one for each
        group of equal numbers, ``same(c, d)`` saying two are equal exactly; App. F.3's tie rule
        takes the first), the one whose Arb enclosure (``refine(bits, among)``: a ball per index)
        lies certainly above the others' (:func:`certain_extreme`); else :data:`UNDECIDED`.  A
        decision past the bounds is tallied under ``why``.

        Parameters
        ----------
        values : sequence of float
            The numbers' approximations.
        errors : sequence of float
            The bounds on their errors.
        refine : callable, optional
            ``refine(bits, among)``: a ball per index of ``among``.
        same : callable, optional
            ``same(c, d)``: whether two numbers are equal exactly.
        why : str, optional
            The reason tallied where the bounds do not decide.

        Returns
        -------
        int or UNDECIDED
            The index, or :data:`UNDECIDED`.

        Examples
        --------
        >>> from flint import arb
        >>> c = Certified()
        >>> c.argmax([0.5, 0.25], [1e-17, 1e-17]), c.argmax([0.5, 0.5], [1e-17, 1e-17]) is UNDECIDED
        (0, True)
        >>> c.argmax([0.5, 0.5], [1e-17, 1e-17], same=lambda c, d: True, why="tie"), c.refined["tie"]  # equal
        (0, 1)
        >>> def sups(bits, among):  # enclosures at ``bits`` (the context's precision): 1e-30 apart
        ...     return {0: arb(1) / 2, 1: arb(1) / 2 + arb(10) ** -30}
        >>> c.argmax([0.5, 0.5], [1e-17] * 2, refine=sups)
        1
        """
        values, errors = np.asarray(values, dtype=float), np.asarray(errors, dtype=float)
        j = int(np.argmax(values))
        close = np.flatnonzero(values + errors >= values[j] - errors[j]).tolist()  # (j among them)
        if len(close) == 1:
            return j
        firsts = []  # one candidate per number: the first (the tie rule's) of those equal to it exactly
        for c in close:
            if same is None or not any(same(f, c) for f in firsts):
                firsts.append(c)
        if len(firsts) > 1:
            found = UNDECIDED if refine is None else self.refine(
                lambda bits: certain_extreme(refine(bits, firsts), firsts, True))
            if found is UNDECIDED:
                return UNDECIDED
            firsts = [found]
        self.tally(why)
        return firsts[0]

    def tally(self, why) -> None:
        """Count a decision the bounds left to refinement, under ``why`` (None: not counted): what
        certified float64 decided past its bounds (docs/specification.md §4).

        Parameters
        ----------
        why : str or None
            The reason.

        Examples
        --------
        >>> c = Certified()
        >>> c.tally("the witness interval"); c.tally(None); dict(c.refined)
        {'the witness interval': 1}
        """
        if why is not None:
            self.refined[why] += 1

    @staticmethod
    def decided(answer, why: str):
        """``answer``, or :class:`Undecided` with ``why`` where it is :data:`UNDECIDED` (then the
        judge decides, docs/specification.md §4).

        Parameters
        ----------
        answer : object
            A decision's answer.
        why : str
            The reason, for the exception.

        Returns
        -------
        object
            ``answer``.

        Raises
        ------
        Undecided
            Where ``answer`` is :data:`UNDECIDED`.

        Examples
        --------
        >>> Certified.decided(1, "x")
        1
        >>> Certified.decided(UNDECIDED, "a tie")
        Traceback (most recent call last):
        huc_ref.fast.context.Undecided: a tie
        """
        if answer is UNDECIDED:
            raise Undecided(why)
        return answer

    def state(self, backend):
        """The certified state of ``backend``: exact logits evaluated in float64 with error bounds
        (:class:`huc_ref.fast.certified.CertifiedState`, docs/specification.md §4).

        Parameters
        ----------
        backend : FloatBackend
            The backend.

        Returns
        -------
        CertifiedState
            Its state.

        Examples
        --------
        >>> from huc_ref import demo
        >>> from huc_ref.fast.boost import FloatBackend
        >>> b = FloatBackend.from_distribution(demo.DIST, {"u": demo.U}, "huc", 0.01, numbers=Certified())
        >>> type(b.state).__name__, b.state.rho == 2.0 ** -53  # p0 rounded once
        ('CertifiedState', True)
        """
        from .certified import CertifiedState
        return CertifiedState(backend)
