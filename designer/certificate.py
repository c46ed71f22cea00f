"""The certificate every released object carries (docs/theory.md, section 7).

A design (linear program, size classes, precise answers, invariant), a device's grid and an exported table are
each decided within their budget in exact arithmetic before release; :class:`Certificate` records how, in one
shape, and :func:`certificate_fields` writes that shape into JSON. Nothing else writes a certificate by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from ._internal.render import json_number
from .vocabulary import Loss

__all__ = ["Certificate", "certificate_fields"]


@dataclass(frozen=True, kw_only=True)
class Certificate:
    """How a released mechanism or table was shown to meet its budget and its structure.

    Attributes
    ----------
    epsilon : float
        The budget (nats).
    losses : tuple of Loss
        Losses checked: ``(SHAFER,)``, ``(WALLEY,)`` or both (Def 3.1 and its Walley counterpart).
    repaired : bool
        Whether the solver's answer had to be mixed with ``reference`` to pass.
    mix_weight : float
        The weight ``t`` of the reference in the released object (0 when not repaired).
    reference : str
        The reference mixed in, in words ("" when none).
    violation : float or None
        Float loss of the solver's answer minus the budget, before repair (<= 0 when none was needed); ``None``
        for a table rounded from a mechanism, where no solver answer exists.
    arithmetic : str
        What the exact check computed with: ``"rational arithmetic"`` on a design's stored floats, ``"integer
        counts over D"`` on a grid, per-row denominators on an invariant table.
    budget : Fraction or None
        The budget as an exact rational when it is not the float ``epsilon`` itself: a composed certificate's sum
        of its parts' budgets (``epsilon`` is then the smallest float at or above it). ``None``: the budget is
        ``epsilon``, exactly the double it holds (see :attr:`exact_budget`).
    parts : tuple of Certificate
        A composed certificate's parts (the certificates of the composed mechanisms); empty otherwise.
    rule : str
        How the parts were composed, in words with the lemma (``""`` when not composed).
    method : {"exact"}
        Class constant: every certificate decides its losses exactly (rational or integer arithmetic, with a float
        filter of proven error where it cannot change the answer).

    Examples
    --------
    Every released design carries one:

    >>> import designer
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> certificate = designer.design(problem).certificate
    >>> certificate.epsilon, [str(loss) for loss in certificate.losses], certificate.exact_budget
    (1.0, ['shafer'], Fraction(1, 1))
    >>> certificate.describe()
    '1-private (Shafer loss), checked exactly (rational arithmetic)'
    >>> certificate.lines()[0]
    'certified: 1-private (Shafer loss), checked exactly (rational arithmetic)'

    """

    method: ClassVar[str] = "exact"

    epsilon: float
    losses: tuple[Loss, ...]
    repaired: bool = False
    mix_weight: float = 0.0
    reference: str = ""
    violation: float | None = None
    arithmetic: str = "rational arithmetic"
    budget: Fraction | None = None
    parts: tuple[Certificate, ...] = ()
    rule: str = ""

    @property
    def exact_budget(self) -> Fraction:
        """The budget as an exact rational: :attr:`budget` when given, else the double :attr:`epsilon` exactly
        (the value every exact check compares with)."""
        return self.budget if self.budget is not None else Fraction(self.epsilon)

    def describe(self) -> str:
        """One line, what a reader needs first: the budget met, for which losses, and how it was checked
        (``"1-private (Shafer loss), checked exactly (rational arithmetic)"``); a repair is told by :attr:`repair`."""
        names = " and ".join(loss.value.capitalize() for loss in self.losses)
        head = f"{self.epsilon:g}-private ({names} loss{'es' if len(self.losses) > 1 else ''})"
        if self.parts:
            return (f"{head} by {self.rule} of {len(self.parts)} certified "
                    f"mechanism{'s' if len(self.parts) > 1 else ''} ({self.arithmetic}: {self.exact_budget})")
        return f"{head}, checked exactly ({self.arithmetic})"

    @property
    def repair(self) -> str:
        """What the repair did, in words (``""`` when the answer passed as it was): what exceeded the budget and by
        how much, and the weight of the reference mixed in."""
        if not self.repaired:
            return ""
        subject = "the solver's answer"
        if self.violation is None:
            subject, over = "the table rounded from the mechanism", "in its rounding"
        elif self.violation > 0:
            over = f"by {self.violation:.2g} in floats"
        else:
            over = "by less than float rounding (only the exact check sees it)"
        return (f"{subject} exceeded the budget {over}, so {self.mix_weight:.2g} of the {self.reference} (private "
                f"with room to spare) was mixed in (its answer sets may appear with masses of that order)")

    @property
    def repair_visible(self) -> bool:
        """Whether the repair can show in a printed mechanism: the answer exceeded the budget in floats (or was a
        rounded table), or the weight mixed in reaches the 8th decimal the tables print. A repair below float
        rounding changes no printed digit; it stays in the JSON (``certificate_detail.repair``)."""
        return self.repaired and (self.violation is None or self.violation > 0 or self.mix_weight >= 5e-9)

    def lines(self) -> list[str]:
        """The output lines: ``certified: ...`` and, when the repair is visible, ``repair: ...``."""
        return [f"certified: {self.describe()}", *([f"repair: {self.repair}"] if self.repair_visible else [])]


def certificate_fields(certificate: Certificate) -> dict[str, Any]:
    """The JSON fields of a release's certificate, one shape for every released object (a design, a device grid,
    an exported table): ``certified``, ``certificate`` (the method) and ``certificate_detail``. A composed
    certificate's detail also holds ``composition``: the rule, the exact budget (a fraction as text) and the
    parts' details.

    Examples
    --------
    >>> from designer import Loss
    >>> from designer.certificate import Certificate, certificate_fields
    >>> fields = certificate_fields(Certificate(epsilon=1.0, losses=(Loss.SHAFER,)))
    >>> fields["certified"], fields["certificate"], fields["certificate_detail"]["summary"]
    (True, 'exact', '1-private (Shafer loss), checked exactly (rational arithmetic)')
    """
    return {
        "certified": True,
        "certificate": certificate.method,
        "certificate_detail": _detail(certificate),
    }


def _detail(certificate: Certificate) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "losses": [loss.value for loss in certificate.losses],
        "arithmetic": certificate.arithmetic,
        "repaired": certificate.repaired,
        "mix_weight": certificate.mix_weight,
        "reference": certificate.reference,
        "violation_before_repair": json_number(certificate.violation),
        "summary": certificate.describe(),
        "repair": certificate.repair or None,
    }
    if certificate.parts:
        detail["composition"] = {"rule": certificate.rule, "budget_exact": str(certificate.exact_budget),
                                 "parts": [_detail(part) for part in certificate.parts]}
    return detail
