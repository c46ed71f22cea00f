"""The paper's mechanisms and the standard ones they are compared with.

Binary mechanisms use inputs and frame ``("yes", "no")``; the correspondence ``x -> y(x)`` between inputs
and outputs is by equal labels.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from ._internal.exact import ratio_at_most_exp
from ._internal.numeric import rr_probabilities
from ._internal.validation import check_epsilon, check_int, check_labels, check_real
from .exceptions import InvalidArgumentError
from .mechanism import Mechanism

__all__ = ["Q_GWRR", "Q_WRR", "Q_2x3", "Q_kRR", "Q_lambda", "Q_subset_selection"]

BINARY = ("yes", "no")


def within_budget(p: float, q: float, eps: float) -> float:
    """``p``, lowered by the few units in the last place that rounding may have added, so that the stored
    ratio ``p / q`` is at most ``e^eps`` in exact arithmetic (the mechanism is then eps-private as stored,
    not only as written; a row is off 1 by at most ``1e-15``)."""
    from fractions import Fraction

    while p > q:
        ratio = Fraction(p) / Fraction(q)
        if ratio_at_most_exp(ratio.numerator, ratio.denominator, eps):
            break
        p = math.nextafter(p, 0.0)
    return p


def _representable(eps: float, m: float) -> tuple[float, float]:
    """The randomized-response pair at ``eps``; refused when the small mass underflows to 0 (infinite loss)."""
    p, q = rr_probabilities(eps, m)
    if q == 0.0:
        raise InvalidArgumentError(f"at eps = {eps:g} the mechanism's small mass e^-eps underflows to 0, which would "
                                   "be an infinite loss: budgets above about 744 nats cannot be represented in floats")
    return p, q


def Q_WRR(eps: float, *, labels: Sequence[str] = BINARY) -> Mechanism:
    """Warner's randomized response at budget ``eps`` (Ex 3.7).

    .. math:: Q_{WRR} = \\frac{1}{e^\\epsilon + 1} \\begin{pmatrix} e^\\epsilon & 1 \\\\ 1 & e^\\epsilon \\end{pmatrix}

    Parameters
    ----------
    eps : float
        Privacy budget, > 0 (natural log units).
    labels : pair of str, default ("yes", "no")
        Input and output labels.

    Returns
    -------
    Mechanism
        Bayesian 2 x 2 mechanism with every privacy loss equal to ``eps``.

    Examples
    --------
    >>> import designer
    >>> print(designer.Q_WRR(1.0).to_frame().round(6))  # doctest: +NORMALIZE_WHITESPACE
              {yes}      {no}
    input
    yes    0.731059  0.268941
    no     0.268941  0.731059
    >>> round(designer.eps_shafer(designer.Q_WRR(1.0)), 12)
    1.0
    """
    return Q_kRR(eps, labels)


def Q_2x3(p: float, q: float, *, labels: Sequence[str] = BINARY) -> Mechanism:
    """Generalised Warner mechanism with "don't know" (Sec. 3, Eq 2): truthful ``p``, lie ``q``.

    Rows ``(p, q, 1 - p - q)`` and ``(q, p, 1 - p - q)`` over ``{yes}``, ``{no}``, ``{yes,no}``.
    ``eps_shafer = ln(p/q)`` and ``eps_walley = ln((1-q)/q)`` (docs/theory.md section 2).

    Parameters
    ----------
    p, q : float
        Probabilities of the true and the false answer, ``p, q >= 0``, ``p + q <= 1``.

    Examples
    --------
    Truthful 0.6, lie 0.2, don't know 0.2; its Shafer loss is ``ln(p / q) = ln 3``:

    >>> import designer
    >>> print(designer.Q_2x3(0.6, 0.2).to_frame())  # doctest: +NORMALIZE_WHITESPACE
           {yes}  {no}  {yes,no}
    input
    yes      0.6   0.2       0.2
    no       0.2   0.6       0.2
    >>> round(designer.eps_shafer(designer.Q_2x3(0.6, 0.2)), 6)
    1.098612
    """
    p = check_real(p, "p", low=0, high=1)
    q = check_real(q, "q", low=0, high=1)
    if p + q > 1 + 1e-12:
        raise InvalidArgumentError(f"p + q must be at most 1 (the rest is the don't-know mass), got {p + q}")
    return _binary(p, q, max(0.0, 1.0 - p - q), labels)


def _binary(p: float, q: float, dont_know: float, labels: Sequence[str]) -> Mechanism:
    pair = check_labels(labels, "labels")
    if len(pair) != 2:
        raise InvalidArgumentError(f"a binary mechanism needs 2 labels, got {len(pair)}")
    y, n = pair
    return Mechanism([[p, q, dont_know], [q, p, dont_know]], inputs=[y, n], frame=[y, n], focal=[1, 2, 3])


def Q_GWRR(eps: float, c: float, *, labels: Sequence[str] = BINARY) -> Mechanism:
    """Optimal generalised Warner mechanism with answer mass ``c = p + q`` (Cor 3.12).

    ``p = c e^eps / (e^eps + 1)``, ``q = c / (e^eps + 1)``, don't-know mass ``1 - c``.

    Parameters
    ----------
    eps : float
        Privacy budget (Shafer semantics), > 0.
    c : float
        Probability of a precise answer, ``0 < c <= 1``.

    Examples
    --------
    At eps = 1 with answer mass ``c = 0.8`` (don't-know mass 0.2), Cor 3.12's optimum:

    >>> import designer
    >>> print(designer.Q_GWRR(1.0, 0.8).to_frame().round(6))  # doctest: +NORMALIZE_WHITESPACE
              {yes}      {no}  {yes,no}
    input
    yes    0.584847  0.215153       0.2
    no     0.215153  0.584847       0.2
    """
    eps = check_epsilon(eps)
    c = check_real(c, "c", low=0, high=1, low_open=True)
    p, q = _representable(eps, 1.0)
    p, q = c * p, c * q
    return _binary(within_budget(p, q, eps), q, 1.0 - c, labels)


def Q_lambda(p: float, q: float, lam: float, *, labels: Sequence[str] = BINARY) -> Mechanism:
    """Warner-style 2 x 2 mechanism obtained from ``Q_2x3(p, q)`` by giving the don't-know mass to
    "yes" with weight ``lam`` and to "no" with ``1 - lam`` (Sec. 3, Walley semantics).

    Row ``yes``: ``(p + lam d, q + (1 - lam) d)``, row ``no``: ``(q + (1 - lam) d, p + lam d)``,
    ``d = 1 - p - q``.

    Examples
    --------
    ``Q_2x3(0.6, 0.2)`` with half the don't-know mass moved to yes and half to no: Warner's design with truthful
    probability 0.7:

    >>> import designer
    >>> print(designer.Q_lambda(0.6, 0.2, 0.5).to_frame())  # doctest: +NORMALIZE_WHITESPACE
           {yes}  {no}
    input
    yes      0.7   0.3
    no       0.3   0.7
    """
    lam = check_real(lam, "lam", low=0, high=1)
    base = Q_2x3(p, q, labels=labels)
    pp, qq, d = base.matrix[0]
    a, b = pp + lam * d, qq + (1 - lam) * d
    y, n = base.inputs
    return Mechanism([[a, b], [b, a]], inputs=[y, n], frame=[y, n], focal=[1, 2])


def _answer_labels(k: int | Sequence[str], what: str) -> tuple[str, ...]:
    """``k`` answers labelled ``"0"``, ``"1"``, ... or the labels given; at least 2."""
    if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
        return tuple(str(i) for i in range(check_int(k, "k", low=2)))
    labels = check_labels(k, "labels")  # type: ignore[arg-type]
    if len(labels) < 2:
        raise InvalidArgumentError(f"{what} needs at least 2 answers")
    return labels


def Q_kRR(eps: float, k: int | Sequence[str]) -> Mechanism:
    """k-ary randomized response: the true answer with ``e^eps / (e^eps + k - 1)``, each other answer
    with ``1 / (e^eps + k - 1)``.

    Parameters
    ----------
    eps : float
        Privacy budget, > 0.
    k : int or sequence of str
        Number of answers (labels ``"0"``, ``"1"``, ...) or the answer labels themselves.

    Returns
    -------
    Mechanism
        Bayesian ``k x k`` mechanism with inputs equal to frame; all privacy losses are ``eps``.

    Examples
    --------
    >>> import designer
    >>> krr = designer.Q_kRR(1.0, ["a", "b", "c"])
    >>> krr.to_frame().round(6).loc["a"].tolist()  # e / (e + 2) on the truth, 1 / (e + 2) elsewhere
    [0.576117, 0.211942, 0.211942]
    """
    eps = check_epsilon(eps)
    labels = _answer_labels(k, "k-ary randomized response")
    n = len(labels)
    p, q = _representable(eps, n - 1)
    p = within_budget(p, q, eps)
    matrix = np.full((n, n), q)
    np.fill_diagonal(matrix, p)
    return Mechanism(matrix, inputs=labels, frame=labels, focal=[1 << i for i in range(n)])


#: The most answer sets :func:`Q_subset_selection` builds (``binom(k, d)`` of them).
MAX_SUBSETS = 1 << 20


def Q_subset_selection(eps: float, k: int | Sequence[str], d: int) -> Mechanism:
    """d-subset selection (Wang et al. 2016; Ye and Barg 2018) as a set-valued mechanism designer can audit.

    A respondent reports a set of ``d`` of the ``k`` answers: each ``d``-subset holding the true answer with
    probability ``e^eps / (binom(k-1, d-1) e^eps + binom(k-1, d))``, each other with ``1 / (...)``. Its answer sets
    are the reported ``d``-subsets (the frame is the answers themselves), so every loss is ``eps`` under Shafer's
    semantics (Def 3.1): each column is ``e^eps`` or 1 times one constant. ``d = 1`` is :func:`Q_kRR`. The best
    ``d`` at the uniform prior is near ``k / (e^eps + 1)``
    (:func:`~designer.closed_forms.subset_selection_best_d`); its share variances are
    :func:`~designer.closed_forms.subset_selection_variance`.

    Parameters
    ----------
    eps : float
        Privacy budget, > 0.
    k : int or sequence of str
        Number of answers (labels ``"0"``, ``"1"``, ...) or the answer labels themselves; at least 2.
    d : int
        Subset size, ``1 <= d < k``.

    Returns
    -------
    Mechanism
        ``k`` inputs, frame equal to the inputs, one focal set per ``d``-subset (in lexicographic order of the
        items they hold); eps-private in exact arithmetic as stored.

    Raises
    ------
    InvalidArgumentError
        If ``d`` is not in ``1..k-1`` or ``binom(k, d)`` exceeds :data:`MAX_SUBSETS`.

    References
    ----------
    S. Wang et al., "Mutual information optimally local private discrete distribution estimation",
    arXiv:1607.08025, 2016. M. Ye, A. Barg, "Optimal schemes for discrete distribution estimation under locally
    differential privacy", IEEE Trans. Inf. Theory 64(8), 2018.

    Examples
    --------
    >>> from designer import Q_subset_selection
    >>> from designer import is_private
    >>> from designer.estimation.shares import estimator_variance
    >>> q = Q_subset_selection(0.5, 6, 2)
    >>> q.matrix.shape, is_private(q, 0.5, exact=True)
    ((6, 15), True)
    >>> round(estimator_variance(q), 4)
    10.9843
    """
    eps = check_epsilon(eps)
    labels = _answer_labels(k, "subset selection")
    n = len(labels)
    d = check_int(d, "d", low=1)
    if d >= n:
        raise InvalidArgumentError(f"subset size d must be below the number of answers {n}, got d = {d}")
    if math.comb(n, d) > MAX_SUBSETS:
        raise InvalidArgumentError(f"{d}-subsets of {n} answers are binom({n}, {d}) = {math.comb(n, d)} answer "
                                   f"sets, more than {MAX_SUBSETS}: choose d nearer 1 or k")
    # (e^eps, 1) / (binom(k-1, d-1) e^eps + binom(k-1, d)) = (e^eps, 1) / (e^eps + m) / binom(k-1, d-1)
    p, q = _representable(eps, (n - d) / d)
    inside, outside = p / math.comb(n - 1, d - 1), q / math.comb(n - 1, d - 1)
    inside = within_budget(inside, outside, eps)
    subsets = [sum(1 << i for i in c) for c in itertools.combinations(range(n), d)]
    mask = np.array(subsets)
    matrix = np.where((mask[None, :] >> np.arange(n)[:, None]) & 1, inside, outside)
    return Mechanism(matrix, inputs=labels, frame=labels, focal=subsets)
