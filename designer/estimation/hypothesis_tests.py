"""Hypothesis tests between two inputs of a mechanism, and their trade-off curves (docs/theory.md section 3).

H0: the input is ``x``; H1: it is ``x2``. A test ``phi: Y -> [0, 1]`` rejects H0 with probability
``phi(y)``. Over the credal sets it has four errors::

    alpha_up = upper_x(phi)      alpha_lo = lower_x(phi)
    beta_up  = 1 - lower_x2(phi) beta_lo  = 1 - upper_x2(phi)

Trade-off curves (``a`` = level):

============== ============================================ ======================= ==========
kind           definition                                    bound (holds)           paper
============== ============================================ ======================= ==========
pessimistic    ``T_pe(a) = min{beta_up : alpha_up <= a}``    ``>= f_pe`` (eps_W)      Thm 3.18
optimistic     ``T_op(a) = max{beta_lo : alpha_lo >= a}``    ``<= f_op`` (eps_W)      Thm 3.18
shafer_lower   ``min{beta_lo : alpha_up <= a}``              ``>= u`` (eps_S)         Thm 3.5
shafer_upper   ``max{beta_up : alpha_lo >= a}``              ``<= U`` (eps_S)         Thm 3.5
============== ============================================ ======================= ==========

(the optimistic and Thm 3.5 readings are docs/theory.md section 3's). ``T_pe`` and ``T_op`` are linear programs; the
two Thm 3.5 curves are not convex programs. All four are computed exactly by one observation: on the
tests whose values are ordered like a chain ``A_1 < A_2 < ... < Y``, ``phi = sum_j c_j 1[A_j]`` and every
error is linear in ``c`` (Choquet integrals are comonotone additive), with ``sum_j c_j <= 1``. With two
linear constraints an optimum uses at most two sets, which are nested: enumerating the ``3**l`` nested pairs
``A <= B`` solves each curve exactly. ``T_pe``/``T_op`` also come as LPs (:func:`minimax_test`), and the
Thm 3.5 curves by the extreme-point split of docs/theory.md section 3 (:func:`shafer_curve_by_vertices`): tests compare.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from .. import setfunctions as sf
from .._internal.native import native_output_silenced
from .._internal.numeric import exp_capped
from .._internal.solvers import minimize
from .._internal.validation import check_real
from ..composition import power
from ..credal import _members, _row, extreme_points
from ..exceptions import InvalidArgumentError, InvalidMechanismError
from ..mechanism import Mechanism
from ..privacy import eps_shafer, eps_walley

__all__ = [
    "KINDS",
    "MinimaxTest",
    "bound",
    "bound_kinks",
    "deterministic_tests",
    "minimax_test",
    "optimistic_test",
    "shafer_curve_by_vertices",
    "test_errors",
    "tradeoff",
    "tradeoff_curve",
    "two_fold_bound",
    "worst_case_fisher",
]

KINDS = ("pessimistic", "optimistic", "shafer_lower", "shafer_upper")
#: Largest frame for the exact nested-pair method (3**l pairs).
MAX_PAIR_FRAME = 12


@dataclass(frozen=True)
class MinimaxTest:
    """A test ``phi`` (one rejection probability per frame element) and its four errors.

    Examples
    --------
    >>> import designer
    >>> from designer.estimation import hypothesis_tests as ht
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> test = ht.test_errors(q, "yes", "no", [0, 1])  # reject exactly on the answer {no}
    >>> test.alpha_up, test.alpha_lo, test.beta_up  # pl_yes({no}), bel_yes({no}), 1 - bel_no({no})
    (0.4, 0.2, 0.4)
    """

    phi: NDArray[np.float64]
    alpha_up: float
    alpha_lo: float
    beta_up: float
    beta_lo: float


def test_errors(mech: Mechanism, x: str | int, x2: str | int, phi: ArrayLike) -> MinimaxTest:
    """The four errors of a test ``phi`` (Choquet integrals, docs/theory.md section 3).

    Examples
    --------
    >>> import designer
    >>> from designer.estimation import hypothesis_tests as ht
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> errors = ht.test_errors(q, "yes", "no", [0, 1])
    >>> errors.alpha_up, errors.alpha_lo, errors.beta_up, round(errors.beta_lo, 12)
    (0.4, 0.2, 0.4, 0.2)
    """
    p = np.asarray(phi, dtype=np.float64)
    if p.shape != (mech.l,) or np.any(p < 0) or np.any(p > 1):
        raise InvalidMechanismError(f"phi must be {mech.l} numbers in [0, 1]")
    members = _members(mech)
    hi = np.where(members, p, -np.inf).max(axis=1)
    lo = np.where(members, p, np.inf).min(axis=1)
    i, j = _row(mech, x), _row(mech, x2)
    m = mech.matrix
    return MinimaxTest(p, float(m[i] @ hi), float(m[i] @ lo), float(1 - m[j] @ lo), float(1 - m[j] @ hi))


def _test_lp(mech: Mechanism, x: str | int, x2: str | int, alpha: float, optimistic: bool) -> MinimaxTest:
    """Variables ``phi (l)``, ``t_B`` (epigraph of max over B), ``s_B`` (hypograph of min over B)."""
    i, j = _row(mech, x), _row(mech, x2)
    members = _members(mech)
    F, l = members.shape
    B, Y = np.nonzero(members)
    n = l + 2 * F
    t0, s0 = l, l + F
    r = np.arange(B.size)
    # phi_y - t_B <= 0  and  s_B - phi_y <= 0  for y in B
    rows = np.r_[r, r, B.size + r, B.size + r]
    cols = np.r_[Y, t0 + B, s0 + B, Y]
    vals = np.r_[np.ones(B.size), -np.ones(B.size), np.ones(B.size), -np.ones(B.size)]
    a_ub = np.zeros((2 * B.size + 1, n))
    a_ub[rows, cols] = vals
    c = np.zeros(n)
    if not optimistic:
        # min beta_up = 1 - sum m_x2(B) s_B  s.t.  sum m_x(B) t_B <= a
        a_ub[-1, t0:t0 + F] = mech.matrix[i]
        c[s0:s0 + F] = -mech.matrix[j]
        b_last = alpha
    else:
        # max beta_lo = 1 - sum m_x2(B) t_B  s.t.  sum m_x(B) s_B >= a
        a_ub[-1, s0:s0 + F] = -mech.matrix[i]
        c[t0:t0 + F] = mech.matrix[j]
        b_last = -alpha
    b_ub = np.r_[np.zeros(2 * B.size), b_last]
    res = minimize(c, A_ub=a_ub, b_ub=b_ub, bounds=[(0, 1)] * n)
    if res.status != 0:
        raise InvalidMechanismError(f"the test LP at level {alpha:g} has no solution ({res.message})")
    return test_errors(mech, i, j, np.clip(res.x[:l], 0.0, 1.0))


def minimax_test(mech: Mechanism, x: str | int, x2: str | int, alpha: float) -> MinimaxTest:
    """The level-``alpha`` minimax test (Huber-Strassen): ``min beta_up`` s.t. ``alpha_up <= alpha``.

    One LP (docs/theory.md section 3). Its ``beta_up`` is ``T_pe(alpha)`` (Def 3.17, Thm 3.18).

    Examples
    --------
    The level-0.1 test of "the input is yes" against "no" from one answer of ``Q_2x3(0.6, 0.2)``: reject on ``{no}``
    with probability 1/4, never otherwise; its worst-case type II error is ``T_pe(0.1) = 0.85``:

    >>> import designer
    >>> from designer.estimation import hypothesis_tests as ht
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> test = ht.minimax_test(q, "yes", "no", 0.1)
    >>> (test.phi.round(9) + 0.0).tolist(), test.alpha_up, test.beta_up  # + 0.0: no -0.0
    ([0.0, 0.25], 0.1, 0.85)
    """
    return _test_lp(mech, x, x2, _level(alpha), optimistic=False)


def optimistic_test(mech: Mechanism, x: str | int, x2: str | int, alpha: float) -> MinimaxTest:
    """The optimistic test: ``max beta_lo`` s.t. ``alpha_lo >= alpha`` (docs/theory.md section 3 reads Def 3.17).

    Examples
    --------
    >>> import designer
    >>> from designer.estimation import hypothesis_tests as ht
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> test = ht.optimistic_test(q, "yes", "no", 0.3)
    >>> test.alpha_lo, test.beta_lo
    (0.3, 0.8)
    """
    return _test_lp(mech, x, x2, _level(alpha), optimistic=True)


def _level(alpha: float) -> float:
    a = float(alpha)
    if not 0.0 <= a <= 1.0:
        raise InvalidArgumentError(f"alpha must lie in [0, 1], got {alpha}")
    return a


# ---------------------------------------------------------------------------- exact curves
def _nested_pairs(l: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """All pairs of subsets ``A <= B`` (3**l of them) as two mask arrays."""
    sets = np.arange(1 << l, dtype=np.int64)
    a_list, b_list = [], []
    for b in range(1 << l):
        sub = sets[(sets & ~b) == 0]
        a_list.append(sub)
        b_list.append(np.full(sub.size, b))
    return np.concatenate(a_list), np.concatenate(b_list)


def _two_set_lp(u_a: NDArray, v_a: NDArray, u_b: NDArray, v_b: NDArray, alphas: NDArray,
                maximise: bool, at_most: bool) -> NDArray[np.float64]:
    """Optimise ``c1 v_a + c2 v_b`` s.t. ``c1 u_a + c2 u_b <= a`` (or ``>= a``), ``c1 + c2 <= 1``, ``c >= 0``,
    for every pair and level; returns the best over pairs per level. Vertices of the 2-D polygon suffice."""
    out = np.empty(alphas.size)
    tol = 1e-12
    for n, a in enumerate(alphas):
        cands = []
        # c = 0 (phi = 0): u = 0 <= a always; feasible for >= only when a == 0.
        zero_ok = at_most or a <= tol
        for u, v in ((u_a, v_a), (u_b, v_b)):
            with np.errstate(divide="ignore", invalid="ignore"):
                if at_most:
                    c = np.where(u > 0, np.minimum(1.0, a / u), 1.0)
                    ok = np.ones(u.size, dtype=bool)
                else:
                    c = np.where(u > 0, np.minimum(1.0, a / u), 1.0)
                    ok = (u * c >= a - tol) if a > tol else np.ones(u.size, dtype=bool)
                    if a <= tol:
                        c = np.zeros(u.size)
            cands.append(np.where(ok, c * v, np.nan))
        # c1 + c2 = 1 and c1 u_a + c2 u_b = a
        with np.errstate(divide="ignore", invalid="ignore"):
            c2 = (a - u_a) / (u_b - u_a)
        ok = np.isfinite(c2) & (c2 >= -tol) & (c2 <= 1 + tol)
        c2 = np.clip(c2, 0.0, 1.0)
        cands.append(np.where(ok, (1 - c2) * v_a + c2 * v_b, np.nan))
        # the full-weight points themselves when they satisfy the constraint
        for u, v in ((u_a, v_a), (u_b, v_b)):
            ok = (u <= a + tol) if at_most else (u >= a - tol)
            cands.append(np.where(ok, v, np.nan))
        allc = np.concatenate(cands)
        if zero_ok:
            allc = np.r_[allc, 0.0]
        out[n] = np.nanmax(allc) if maximise else np.nanmin(allc)
    return out


def tradeoff(mech: Mechanism, x: str | int, x2: str | int, kind: str, alphas: ArrayLike) -> NDArray[np.float64]:
    """The trade-off curve ``kind`` at the levels ``alphas``, exactly (nested-pair method, module docstring).

    Examples
    --------
    >>> import designer
    >>> from designer.estimation import hypothesis_tests as ht
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> ht.tradeoff(q, "yes", "no", "pessimistic", [0, 0.1, 0.2, 0.5]).round(6).tolist()
    [1.0, 0.85, 0.7, 0.333333]
    """
    if kind not in KINDS:
        raise InvalidArgumentError(f"kind must be one of {list(KINDS)}, got {kind!r}")
    if mech.l > MAX_PAIR_FRAME:
        raise InvalidMechanismError(
            f"trade-off curves enumerate 3**l nested pairs of events; l = {mech.l} is above {MAX_PAIR_FRAME}"
        )
    a = np.asarray(alphas, dtype=np.float64)
    if np.any((a < 0) | (a > 1)) or not np.all(np.isfinite(a)):
        raise InvalidArgumentError("levels alpha must lie in [0, 1]")
    i, j = _row(mech, x), _row(mech, x2)
    bel, pl = mech.bel(), mech.pl()
    A, B = _nested_pairs(mech.l)
    if kind == "pessimistic":  # max lower_x2 s.t. upper_x <= a  -> beta = 1 - max
        u, v, maximise, at_most = pl[i], bel[j], True, True
    elif kind == "optimistic":  # min upper_x2 s.t. lower_x >= a -> beta = 1 - min
        u, v, maximise, at_most = bel[i], pl[j], False, False
    elif kind == "shafer_lower":  # max upper_x2 s.t. upper_x <= a
        u, v, maximise, at_most = pl[i], pl[j], True, True
    else:  # shafer_upper: min lower_x2 s.t. lower_x >= a
        u, v, maximise, at_most = bel[i], bel[j], False, False
    best = _two_set_lp(u[A], v[A], u[B], v[B], a, maximise, at_most)
    return np.clip(1.0 - best, 0.0, 1.0)


def bound(kind: str, eps: float, alphas: ArrayLike) -> NDArray[np.float64]:
    """The paper's bound for a curve at loss ``eps`` (``e = exp(eps)``; docs/theory.md section 3).

    ``pessimistic``: ``max(1 - a e, 0, (1 - a)/e)``; ``optimistic``: ``min(1 - a/e, e (1 - a))`` (Thm 3.18,
    eps = eps_W); ``shafer_lower``: ``max((1 - a)/e, 1 - a e)``; ``shafer_upper``: ``min(e (1 - a), 1 - a/e)``
    (Thm 3.5, eps = eps_S). An infinite loss gives the trivial bounds 0 (lower) and 1 (upper).

    Examples
    --------
    Thm 3.18's pessimistic bound at ``eps_walley = ln 4``: ``max(1 - 4a, 0, (1 - a)/4)``

    >>> import math
    >>> from designer.estimation import hypothesis_tests as ht
    >>> ht.bound("pessimistic", math.log(4), [0, 0.1, 0.5]).round(12).tolist()
    [1.0, 0.6, 0.125]
    """
    a = np.asarray(alphas, dtype=np.float64)
    if eps != math.inf:  # an infinite loss is allowed: it gives the trivial bounds
        eps = check_real(eps, "eps", low=0.0)
    if math.isinf(eps):
        return np.zeros_like(a) if kind in ("pessimistic", "shafer_lower") else np.ones_like(a)
    e = exp_capped(eps)
    if kind == "pessimistic":
        return np.maximum.reduce([1 - a * e, np.zeros_like(a), (1 - a) / e])
    if kind == "optimistic":
        return np.minimum(1 - a / e, e * (1 - a))
    if kind == "shafer_lower":
        return np.maximum((1 - a) / e, 1 - a * e)
    if kind == "shafer_upper":
        return np.minimum(e * (1 - a), 1 - a / e)
    raise InvalidArgumentError(f"kind must be one of {list(KINDS)}, got {kind!r}")


def two_fold_bound(kind: str, eps: float, alphas: ArrayLike, *, corrected: bool = False) -> NDArray[np.float64]:
    """The bounds for two answers (Cor 3.6 for ``shafer_*``, Cor 3.19 for the Walley curves).

    Lower curves: ``max(e^-2eps (1-a), -a + 2/(e^eps+1), 1 - a e^2eps)``; upper curves as printed:
    ``min(e^2eps (1-a), 1 - a e^-2eps, -a + (3 - e^-2eps)/(e^eps+1))``. They were derived for ``Q_2x3``.

    As printed, the *upper* two-fold bounds do not hold (docs/theory.md section 3): Warner's mechanism asked
    twice crosses them at every eps > 0 (at eps = 0.1 by 0.0138). ``corrected=True`` gives the upper bound
    reflected from the lower one, ``upper(a) = 1 - lower(1 - a)``:
    ``min(e^2eps (1-a), 1 - a e^-2eps, 2 e^eps/(e^eps+1) - a)``; it holds for every ``Q_2x3`` asked twice
    and Warner's mechanism attains it (tests). The lower bounds are unchanged.

    Examples
    --------
    The lower Shafer bound for two answers at eps = 1, and the corrected upper bound (docs/theory.md, section 3):

    >>> from designer.estimation import hypothesis_tests as ht
    >>> ht.two_fold_bound("shafer_lower", 1.0, [0.0, 0.5]).round(6).tolist()
    [1.0, 0.067668]
    >>> ht.two_fold_bound("shafer_upper", 1.0, [0.5], corrected=True).round(6).tolist()
    [0.932332]
    """
    a = np.asarray(alphas, dtype=np.float64)
    e = exp_capped(check_real(eps, "eps", low=0.0))
    if kind in ("pessimistic", "shafer_lower"):
        return np.maximum.reduce([(1 - a) / e**2, -a + 2 / (e + 1), 1 - a * e**2])
    if kind in ("optimistic", "shafer_upper"):
        third = 2 * e / (e + 1) - a if corrected else -a + (3 - 1 / e**2) / (e + 1)
        return np.minimum.reduce([e**2 * (1 - a), 1 - a / e**2, third])
    raise InvalidArgumentError(f"kind must be one of {list(KINDS)}, got {kind!r}")


def bound_kinks(kind: str, eps: float) -> NDArray[np.float64]:
    """The levels in ``(0, 1)`` where :func:`bound` changes slope (a curve drawn through them is exact).

    Examples
    --------
    >>> import math
    >>> from designer.estimation import hypothesis_tests as ht
    >>> ht.bound_kinks("pessimistic", math.log(4)).round(12).tolist()  # where 1 - 4a meets (1 - a)/4
    [0.2]
    """
    if eps == math.inf:
        return np.zeros(0)
    e = exp_capped(check_real(eps, "eps", low=0.0))
    lines = {  # (slope, intercept) of the pieces
        "pessimistic": [(-e, 1.0), (0.0, 0.0), (-1 / e, 1 / e)],
        "optimistic": [(-1 / e, 1.0), (-e, e)],
        "shafer_lower": [(-1 / e, 1 / e), (-e, 1.0)],
        "shafer_upper": [(-e, e), (-1 / e, 1.0)],
    }
    if kind not in lines:
        raise InvalidArgumentError(f"kind must be one of {list(KINDS)}, got {kind!r}")
    pieces = lines[kind]
    kinks = []
    for i, (s1, c1) in enumerate(pieces):
        for s2, c2 in pieces[i + 1:]:
            a = (c2 - c1) / (s1 - s2) if s1 != s2 else -1.0
            # a crossing is a kink only where both pieces are the envelope (the bound itself)
            if 0.0 < a < 1.0 and abs(s1 * a + c1 - float(bound(kind, eps, [a])[0])) <= 1e-12:
                kinks.append(a)
    return np.unique(np.array(kinks, dtype=np.float64))


def tradeoff_curve(mech: Mechanism, x: str | int, x2: str | int, kind: str = "pessimistic", *,
                   points: int = 101, alphas: ArrayLike | None = None, fold: int = 1) -> pd.DataFrame:
    """A trade-off curve with its bound, as a DataFrame with columns ``alpha``, ``beta``, ``bound``.

    Parameters
    ----------
    mech : Mechanism
    x, x2 : str or int
        Null and alternative inputs.
    kind : {"pessimistic", "optimistic", "shafer_lower", "shafer_upper"}
    points : int, default 101
        Levels evenly spaced on [0, 1], plus the bound's kinks (:func:`bound_kinks`; ignored when ``alphas``
        is given).
    fold : int, default 1
        Test on ``fold`` independent answers (``Q(x)^n`` vs ``Q(x2)^n``, Cor 3.6 / 3.19): the curve of
        the ``fold``-fold product mechanism. The bound is the single-answer bound at ``fold * eps``.

    Returns
    -------
    pandas.DataFrame
        ``alpha``, ``beta`` and ``bound`` (computed from the mechanism's own eps_W or eps_S).

    Examples
    --------
    >>> import designer
    >>> from designer.estimation import hypothesis_tests as ht
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> curve = ht.tradeoff_curve(q, "yes", "no", points=3)  # 0, 0.5, 1 and the bound's kink 0.2
    >>> curve.round(6).values.tolist()
    [[0.0, 1.0, 1.0], [0.2, 0.7, 0.2], [0.5, 0.333333, 0.125], [1.0, 0.0, 0.0]]
    """
    eps = eps_walley(mech) if kind in ("pessimistic", "optimistic") else eps_shafer(mech)
    if alphas is None:
        a = np.union1d(np.linspace(0.0, 1.0, int(points)), bound_kinks(kind, fold * eps))
    else:
        a = np.asarray(alphas, dtype=np.float64)
    m = power(mech, fold) if fold > 1 else mech
    beta = tradeoff(m, x, x2, kind, a)
    return pd.DataFrame({"alpha": a, "beta": beta, "bound": bound(kind, fold * eps, a)})


def deterministic_tests(mech: Mechanism, x: str | int, x2: str | int) -> pd.DataFrame:
    """Errors of every deterministic test (rejection region ``R``): ``alpha_up = pl_x(R)``,
    ``alpha_lo = bel_x(R)``, ``beta_up = 1 - bel_x2(R)``, ``beta_lo = 1 - pl_x2(R)``.

    Examples
    --------
    >>> import designer
    >>> from designer.estimation import hypothesis_tests as ht
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> ht.deterministic_tests(q, "yes", "no")["region"].tolist()
    [(), ('yes',), ('no',), ('yes', 'no')]
    >>> ht.deterministic_tests(q, "yes", "no")["alpha_up"].tolist()
    [0.0, 0.8, 0.4, 1.0]
    """
    i, j = _row(mech, x), _row(mech, x2)
    bel, pl = mech.bel(), mech.pl()
    regions = [sf.mask_labels(r, mech.frame) for r in range(1 << mech.l)]
    return pd.DataFrame({"region": regions, "alpha_up": pl[i], "alpha_lo": bel[i], "beta_up": 1 - bel[j],
                         "beta_lo": 1 - pl[j]})


def shafer_curve_by_vertices(mech: Mechanism, x: str | int, x2: str | int, kind: str,
                             alphas: Sequence[float]) -> NDArray[np.float64]:
    """The Thm 3.5 curves by docs/theory.md section 3's split over the extreme points of ``x2``'s credal set (one LP
    per vertex and level). Exponential in ``l``; a cross-check for small frames.

    Examples
    --------
    >>> import designer
    >>> from designer.estimation import hypothesis_tests as ht
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> ht.shafer_curve_by_vertices(q, "yes", "no", "shafer_lower", [0.1, 0.5]).round(6).tolist()
    [0.8, 0.166667]
    >>> ht.tradeoff(q, "yes", "no", "shafer_lower", [0.1, 0.5]).round(6).tolist()  # the exact method agrees
    [0.8, 0.166667]
    """
    if kind not in ("shafer_lower", "shafer_upper"):
        raise InvalidArgumentError("kind must be 'shafer_lower' or 'shafer_upper'")
    i = _row(mech, x)
    members = _members(mech)
    F, l = members.shape
    B, Y = np.nonzero(members)
    n = l + F
    r = np.arange(B.size)
    a_ub = np.zeros((B.size + 1, n))
    if kind == "shafer_lower":  # epigraph t_B >= phi_y; sum m_x t_B <= a
        a_ub[r, Y] = 1.0
        a_ub[r, l + B] = -1.0
        a_ub[-1, l:] = mech.matrix[i]
    else:  # hypograph s_B <= phi_y; sum m_x s_B >= a
        a_ub[r, l + B] = 1.0
        a_ub[r, Y] = -1.0
        a_ub[-1, l:] = -mech.matrix[i]
    out = []
    for a in alphas:
        best = math.inf if kind == "shafer_lower" else -math.inf
        for vertex in extreme_points(mech, x2):
            c = np.zeros(n)
            # shafer_lower: min 1 - P.phi; shafer_upper: max 1 - P.phi
            c[:l] = -vertex if kind == "shafer_lower" else vertex
            b = np.r_[np.zeros(B.size), a if kind == "shafer_lower" else -a]
            res = minimize(c, A_ub=a_ub, b_ub=b, bounds=[(0, 1)] * n)
            if res.status != 0:
                continue
            value = 1.0 + res.fun if kind == "shafer_lower" else 1.0 - res.fun
            best = min(best, value) if kind == "shafer_lower" else max(best, value)
        out.append(best)
    return np.array(out)


# ---------------------------------------------------------------------------- Fisher information
def worst_case_fisher(mech: Mechanism, prior: float = 0.5, *, x: str | int = 0, x2: str | int = 1
                      ) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """Smallest Fisher information about ``pi = P(input = x)`` from one precise answer, over the credal
    sets of both rows (docs/theory.md section 8): a convex program (quadratic-over-linear, Clarabel), checked against
    the credal sets' vertex pairs.

    .. math:: I(w_x, w_{x2}) = \\sum_y \\frac{(w_x(y) - w_{x2}(y))^2}{\\pi w_x(y) + (1 - \\pi) w_{x2}(y)}

    Returns
    -------
    info : float
        ``min I``; the variance of the MLE from ``n`` answers is ``1 / (n info)`` (``nu_W`` for ``Q_2x3``).
    pr_x, pr_x2 : (l,) ndarray
        The least informative members of the two credal sets.

    Examples
    --------
    The least informative members of ``Q_2x3(0.6, 0.2)``'s credal sets answer truthfully with 0.6; the information
    0.16 per answer at the prior 1/2 gives Cor 3.20's ``nu_W = 1 / (4 (2p - 1)^2) - 0 = 6.25``:

    >>> import designer
    >>> from designer.estimation import hypothesis_tests as ht
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> information, member_x, member_x2 = ht.worst_case_fisher(q, 0.5)
    >>> round(information, 9), member_x.round(9).tolist(), round(1 / information, 6)
    (0.16, [0.6, 0.4], 6.25)
    """
    import cvxpy as cp

    pi = float(prior)
    if not 0.0 < pi < 1.0:
        raise InvalidArgumentError(f"prior must lie in (0, 1), got {prior}")
    i, j = _row(mech, x), _row(mech, x2)
    members = _members(mech)
    B, Y = np.nonzero(members)
    n = B.size
    alloc = np.zeros((members.shape[0], n))
    alloc[B, np.arange(n)] = 1.0
    to_pr = np.zeros((mech.l, n))
    to_pr[Y, np.arange(n)] = 1.0
    wx, wx2 = cp.Variable(n, nonneg=True), cp.Variable(n, nonneg=True)
    px, px2 = to_pr @ wx, to_pr @ wx2
    info = cp.sum([cp.quad_over_lin(px[y] - px2[y], pi * px[y] + (1 - pi) * px2[y]) for y in range(mech.l)])
    prob = cp.Problem(cp.Minimize(info), [alloc @ wx == mech.matrix[i], alloc @ wx2 == mech.matrix[j]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "may be inaccurate": checked against vertices below
        with native_output_silenced():
            prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)

    def fisher(p: NDArray[np.float64], q: NDArray[np.float64]) -> float:
        mix = pi * p + (1 - pi) * q
        used = mix > 0
        return float(np.sum((p[used] - q[used]) ** 2 / mix[used]))

    best_p = np.clip(to_pr @ wx.value, 0, None) if wx.value is not None else None
    best_q = np.clip(to_pr @ wx2.value, 0, None) if wx2.value is not None else None
    best = fisher(best_p, best_q) if best_p is not None and best_q is not None else math.inf
    if mech.l <= 6:  # vertex pairs: exact values where the minimum sits on a vertex (often)
        for p in extreme_points(mech, i):
            for q in extreme_points(mech, j):
                value = fisher(p, q)
                if value <= best * (1 + 1e-9):  # an exact vertex value beats a solver's near-tie
                    best, best_p, best_q = value, p, q
    assert best_p is not None and best_q is not None, "the solver found no allocation and l > 6"
    return best, best_p, best_q
