"""A released mechanism that carries its guarantee: the mechanism and its certificate, composed together.

:class:`CertifiedMechanism` holds a :class:`~designer.mechanism.Mechanism` and the
:class:`~designer.certificate.Certificate` it was released with. Its :meth:`~CertifiedMechanism.product`,
:meth:`~CertifiedMechanism.power` and :meth:`~CertifiedMechanism.image` build the composed mechanism
(:mod:`designer.composition`) and compose the certificates by the paper's lemmas, semantics by semantics, with the
budgets added as exact rationals (docs/theory.md, section 7):

=============  ==========================================  ====================================
operation      budget of the result                        losses it bounds
=============  ==========================================  ====================================
product        ``eps1 + eps2`` (Lemma 3.3, Lemma 3.15)     Shafer and Walley, where both parts do
power ``n``    ``n eps`` (the same lemmas, ``n - 1`` times)  those of the part
image ``f``    ``eps`` (Lemma 3.4, Lemma 3.16)              those of the part (bel and pl too)
=============  ==========================================  ====================================

The product's bound is attained when one ordered pair of inputs attains both parts' losses (always so for a
power); an image by a one-to-one relabelling keeps the loss. The composed certificate keeps the exact bound as
``budget`` (the composed mechanism in exact arithmetic) and, as ``epsilon``, the smallest float at or above it that
also covers the stored floats: each mass of a product is rounded once (``2**-51`` nats at most, added per rounding
to the parts' float budgets), so the stored mechanism passes the exact check at ``epsilon`` and a file written from
it passes it on reading.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .. import composition
from ..certificate import Certificate
from ..exceptions import CertificationError, InvalidArgumentError, InvalidArgumentTypeError
from ..mechanism import Mechanism
from ..privacy import is_private, worst_case
from ..vocabulary import Loss, Semantics

__all__ = ["CertifiedMechanism", "float_at_least", "image_certificate", "power_certificate", "product_certificate"]

#: The losses the composition lemmas bound for a product (Lemma 3.3: Shafer; Lemma 3.15: Walley).
PRODUCT_LOSSES = (Loss.SHAFER, Loss.WALLEY)


def float_at_least(value: Fraction) -> float:
    """The smallest float ``>= value`` (a finite rational): a float budget that never understates ``value``.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from designer.guarantees.certified import float_at_least
    >>> Fraction(float_at_least(Fraction(1, 10))) >= Fraction(1, 10)  # 0.1 as a double is just above 1/10
    True
    """
    try:
        out = float(value)
    except OverflowError:  # beyond the largest double: only infinity is at or above it
        return math.inf if value > 0 else -sys.float_info.max
    if Fraction(out) < value:
        out = math.nextafter(out, math.inf)
    return out


def _budget(value: float | int | str | Fraction, what: str = "epsilon") -> Fraction:
    """A budget as an exact positive rational (a float is the double it holds)."""
    try:
        out = Fraction(value) if not isinstance(value, bool) else Fraction("nan")
    except (TypeError, ValueError, OverflowError, ZeroDivisionError):
        raise InvalidArgumentError(f"{what} must be a finite number > 0, got {value!r}") from None
    if out <= 0:
        raise InvalidArgumentError(f"{what} must be a finite number > 0, got {value!r}")
    return out


def _common_losses(certificates: Sequence[Certificate], allowed: Sequence[Loss] | None = None) -> tuple[Loss, ...]:
    first = certificates[0].losses
    common = tuple(loss for loss in first if all(loss in c.losses for c in certificates[1:])
                   and (allowed is None or loss in allowed))
    if not common:
        said = "; ".join(" and ".join(loss.value for loss in c.losses) or "none" for c in certificates)
        raise CertificationError(f"the parts certify no loss in common that the composition lemmas bound ({said}): "
                                 "certify every part for the same semantics (sldp, wldp or both)")
    return common


#: What one rounding of a stored mass can add to a loss (nats): a mass ``m (1 + t)`` with ``|t| <= 2**-53`` moves a
#: ratio of masses, or of sums of masses (bel, pl), by at most ``ln((1 + u) / (1 - u)) < 2**-51``.
ROUNDING_ALLOWANCE = Fraction(1, 2**51)


def _composed(parts: Sequence[Certificate], budget: Fraction, losses: tuple[Loss, ...], roundings: int, rule: str,
              arithmetic: str) -> Certificate:
    """A composed certificate: ``budget`` exact (the composed mechanism in exact arithmetic); ``epsilon`` the
    smallest float at or above both it and the parts' float budgets composed the same way plus
    ``roundings`` times :data:`ROUNDING_ALLOWANCE` (what the stored floats of the composed mechanism meet)."""
    if roundings < 0:
        raise InvalidArgumentError(f"roundings must be >= 0, got {roundings}")
    scale = budget / sum((p.exact_budget for p in parts), Fraction(0))  # n for a power, 1 otherwise
    floats = scale * sum((Fraction(p.epsilon) for p in parts), Fraction(0)) + roundings * ROUNDING_ALLOWANCE
    return Certificate(epsilon=float_at_least(max(budget, floats)), losses=losses, budget=budget, parts=tuple(parts),
                       rule=rule, arithmetic=arithmetic)


def product_certificate(*certificates: Certificate, roundings: int = 0) -> Certificate:
    """The certificate of the product of mechanisms certified by ``certificates`` (Lemma 3.3, Lemma 3.15).

    Parameters
    ----------
    *certificates : Certificate
        One per part, at least one.
    roundings : int, default 0
        How many float roundings each stored mass of the composed mechanism went through (1 for
        :func:`designer.composition.product`; 0 when only the guarantee is composed, e.g. for independent draws
        from each part's exact table).

    Returns
    -------
    Certificate
        ``budget`` the exact sum of the parts' budgets (:attr:`Certificate.exact_budget`); ``epsilon`` the
        smallest float at or above it that also covers the stored floats (the parts' float budgets added exactly,
        plus ``roundings`` times ``2**-51``); ``losses`` the Shafer and Walley losses every part bounds;
        ``parts`` the certificates.

    Raises
    ------
    CertificationError
        When the parts bound no loss in common (one Shafer only, another Walley only).

    Examples
    --------
    >>> import designer
    >>> from designer.guarantees.certified import product_certificate
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> certificate = designer.design(problem).certificate
    >>> product_certificate(certificate, certificate).exact_budget  # two answers: the budgets add (Lemma 3.3)
    Fraction(2, 1)
    """
    if not certificates or not all(isinstance(c, Certificate) for c in certificates):
        raise InvalidArgumentTypeError("product_certificate() takes one or more Certificate objects")
    losses = _common_losses(certificates, PRODUCT_LOSSES)
    budget = sum((c.exact_budget for c in certificates), Fraction(0))
    return _composed(certificates, budget, losses, roundings, "the product (Lemma 3.3, Lemma 3.15)",
                     "exact sum of the parts' budgets")


def power_certificate(certificate: Certificate, n: int, *, roundings: int | None = None) -> Certificate:
    """The certificate of ``n`` independent answers of a mechanism certified by ``certificate``: ``n`` times its
    budget, exactly (Lemma 3.3, Lemma 3.15 applied ``n - 1`` times); ``roundings`` defaults to the ``n - 1`` of
    :func:`designer.composition.power`.

    Examples
    --------
    >>> import designer
    >>> from designer.guarantees.certified import power_certificate
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> power_certificate(designer.design(problem).certificate, 3).exact_budget
    Fraction(3, 1)
    """
    if not isinstance(certificate, Certificate):
        raise InvalidArgumentTypeError(f"power_certificate() takes a Certificate, got {type(certificate).__name__}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidArgumentError(f"n must be a whole number >= 1, got {n!r}")
    losses = _common_losses([certificate], PRODUCT_LOSSES)
    return _composed([certificate], n * certificate.exact_budget, losses, n - 1 if roundings is None else roundings,
                     f"the {n}-fold product (Lemma 3.3, Lemma 3.15)", f"exact product of {n} and the part's budget")


def image_certificate(certificate: Certificate, *, roundings: int = 0) -> Certificate:
    """The certificate of a post-processed mechanism: the part's budget and losses (Lemma 3.4, Lemma 3.16; the
    belief and plausibility losses of Lemma 3.2 too, as ``bel(f^-1(E))`` and ``pl(f^-1(E))``). ``roundings``: how
    many float additions the largest merged mass went through (0 for a one-to-one relabelling).

    Examples
    --------
    >>> import designer
    >>> from designer.guarantees.certified import image_certificate
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> image_certificate(designer.design(problem).certificate).epsilon  # post-processing keeps the budget
    1.0
    """
    if not isinstance(certificate, Certificate):
        raise InvalidArgumentTypeError(f"image_certificate() takes a Certificate, got {type(certificate).__name__}")
    return _composed([certificate], certificate.exact_budget, certificate.losses, roundings,
                     "post-processing (Lemma 3.4, Lemma 3.16)", "the part's budget, unchanged")


@dataclass(frozen=True)
class CertifiedMechanism:
    """A mechanism with the certificate it is released with (the guarantee travels with it).

    Build one with :meth:`certify` (an exact check of a mechanism against a budget), :meth:`of` (a design
    result) or by composing certified mechanisms; the constructor itself trusts the pair it is given.

    Attributes
    ----------
    mechanism : Mechanism
        ``k`` inputs, frame of ``l`` labels.
    certificate : Certificate
        Its budget (``epsilon``, nats; :attr:`budget` exactly) and the losses it bounds.

    Examples
    --------
    >>> from designer import CertifiedMechanism
    >>> from designer import Q_GWRR
    >>> q = CertifiedMechanism.certify(Q_GWRR(0.5, 0.8), 0.5)
    >>> q.power(3).budget
    Fraction(3, 2)
    """

    mechanism: Mechanism
    certificate: Certificate

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, Mechanism):
            raise InvalidArgumentTypeError(f"mechanism must be a Mechanism, got {type(self.mechanism).__name__}")
        if not isinstance(self.certificate, Certificate):
            raise InvalidArgumentTypeError(
                f"certificate must be a Certificate, got {type(self.certificate).__name__}")

    @property
    def epsilon(self) -> float:
        """The budget (nats) as a float, never below :attr:`budget`."""
        return self.certificate.epsilon

    @property
    def budget(self) -> Fraction:
        """The budget (nats) as an exact rational."""
        return self.certificate.exact_budget

    @property
    def losses(self) -> tuple[Loss, ...]:
        """The losses the certificate bounds by :attr:`budget`."""
        return self.certificate.losses

    @property
    def semantics(self) -> Semantics:
        """``SLDP``, ``WLDP`` or ``BOTH``: the privacy definitions the certificate states."""
        shafer, walley = Loss.SHAFER in self.losses, Loss.WALLEY in self.losses
        if shafer and walley:
            return Semantics.BOTH
        if walley:
            return Semantics.WLDP
        if shafer:
            return Semantics.SLDP
        raise CertificationError(f"the certificate bounds {[loss.value for loss in self.losses]}, neither the "
                                 "Shafer nor the Walley loss")

    @classmethod
    def certify(cls, mechanism: Mechanism, epsilon: float | Fraction | str, *,
                semantics: str | Semantics = "sldp") -> CertifiedMechanism:
        """Check ``mechanism`` against ``epsilon`` exactly and certify it (Def 3.1, Def 3.13).

        Parameters
        ----------
        mechanism : Mechanism
        epsilon : float, Fraction or str
            The budget (nats, > 0). A float is the double it holds; a Fraction or a string such as ``"1/3"`` is
            that rational, decided through the floats on either side of it.
        semantics : {"sldp", "wldp", "both"}
            The losses to bound: Shafer's, Walley's or both.

        Returns
        -------
        CertifiedMechanism

        Raises
        ------
        CertificationError
            When a loss exceeds the budget (the message names it and its value), or lies within one float of a
            rational budget, where the floats cannot decide it.
        """
        if not isinstance(mechanism, Mechanism):
            raise InvalidArgumentTypeError(f"certify() takes a Mechanism, got {type(mechanism).__name__}")
        chosen = Semantics.parse(semantics, "semantics")
        budget = _budget(epsilon)
        high = float_at_least(budget)
        low = high if not math.isfinite(high) or Fraction(high) == budget else math.nextafter(high, 0.0)
        if not math.isfinite(high) or low <= 0:  # beyond the largest double, or below the least one above 0
            raise InvalidArgumentError(f"epsilon must be a finite number > 0, got {epsilon!r}")
        for loss in chosen.losses:
            if is_private(mechanism, low, semantics=loss, exact=True):
                continue
            value = worst_case(mechanism, loss.value).eps
            if is_private(mechanism, high, semantics=loss, exact=True):
                raise CertificationError(f"the {loss.value} loss {value!r} is within one float of the budget "
                                         f"{budget}: state the budget as a float to decide it")
            raise CertificationError(f"the {loss.value} loss is {value:.6g} > epsilon = {float(budget):.6g}: the "
                                     "mechanism is not private within that budget")
        stated = None if Fraction(high) == budget else budget
        return cls(mechanism, Certificate(epsilon=high, losses=chosen.losses, budget=stated))

    @classmethod
    def of(cls, released: Any) -> CertifiedMechanism:
        """The certified mechanism of a :class:`~designer.optimal.result.DesignResult` (or anything with a
        ``mechanism`` and a ``certificate``); a certified mechanism is returned as it is."""
        if isinstance(released, CertifiedMechanism):
            return released
        mechanism = getattr(released, "mechanism", None)
        certificate = getattr(released, "certificate", None)
        if not isinstance(mechanism, Mechanism) or not isinstance(certificate, Certificate):
            raise InvalidArgumentTypeError(f"expected a design result or a CertifiedMechanism, got "
                                           f"{type(released).__name__} (certify a Mechanism with "
                                           "CertifiedMechanism.certify)")
        return cls(mechanism, certificate)

    def product(self, other: CertifiedMechanism) -> CertifiedMechanism:
        """Both answers of one respondent (:func:`designer.composition.product`): the budgets add exactly
        (Lemma 3.3 for the Shafer loss, Lemma 3.15 for the Walley loss).

        Parameters
        ----------
        other : CertifiedMechanism
            Same inputs as this one.

        Returns
        -------
        CertifiedMechanism
            Frame ``l1 * l2`` (labels ``"a|b"``), budget ``self.budget + other.budget``.
        """
        other = _certified(other, "product")
        return CertifiedMechanism(composition.product(self.mechanism, other.mechanism),
                                  product_certificate(self.certificate, other.certificate, roundings=1))

    def power(self, n: int) -> CertifiedMechanism:
        """``n`` independent answers of one respondent (:func:`designer.composition.power`): ``n`` times the
        budget, exactly (Lemma 3.3, Lemma 3.15); the bound is attained, as one pair attains every factor's loss."""
        certificate = power_certificate(self.certificate, n)
        return CertifiedMechanism(composition.power(self.mechanism, n), certificate)

    def image(self, f: Mapping[Any, Any], *, frame: Sequence[str] | None = None) -> CertifiedMechanism:
        """The mechanism post-processed by the map ``f`` (:func:`designer.composition.image`): the same budget
        (Lemma 3.4, Lemma 3.16)."""
        mech = composition.image(self.mechanism, f, frame=frame)
        # A merged mass is a sum of at most (F - F') + 1 of the part's masses: at most F - F' additions.
        merges = len(self.mechanism.focal) - len(mech.focal)
        return CertifiedMechanism(mech, image_certificate(self.certificate, roundings=merges))

    def describe(self) -> str:
        """One line: the mechanism's size and its guarantee."""
        return f"{self.mechanism.k} inputs, {self.mechanism.l} answers: {self.certificate.describe()}"


def _certified(obj: Any, what: str) -> CertifiedMechanism:
    if not isinstance(obj, CertifiedMechanism):
        raise InvalidArgumentTypeError(f"{what}() composes certified mechanisms, got {type(obj).__name__} (certify a "
                                       "Mechanism with CertifiedMechanism.certify)")
    return obj
