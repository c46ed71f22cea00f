"""designer: design and audit local-differential-privacy mechanisms with set-valued answers.

An evidential mechanism gives every input a Dempster-Shafer mass function over the answers, so a
respondent may answer with a set ("I don't know", "one of these"). See the README for a tour.
"""

from __future__ import annotations

from .composition import image, power, product
from .constructors import Q_GWRR, Q_WRR, Q_2x3, Q_kRR, Q_lambda
from .design import DesignProblem, DesignResult, load_problem
from .exceptions import (
    DesignerError,
    DesignWarning,
    InfeasibleDesignError,
    InvalidMechanismError,
    InvalidProblemError,
)
from .mechanism import Mechanism
from .privacy import (
    LossWitness,
    eps_bel,
    eps_pl,
    eps_shafer,
    eps_walley,
    is_private,
    privacy_losses,
    worst_case,
)
from .setfunctions import (
    bel_from_mass,
    commonality_from_mass,
    mass_from_bel,
    mass_from_commonality,
    mass_from_pl,
    pl_from_mass,
)

__version__ = "0.1.0"

__all__ = [
    "Q_GWRR",
    "Q_WRR",
    "DesignProblem",
    "DesignResult",
    "DesignWarning",
    "DesignerError",
    "InfeasibleDesignError",
    "InvalidMechanismError",
    "InvalidProblemError",
    "LossWitness",
    "Mechanism",
    "Q_2x3",
    "Q_kRR",
    "Q_lambda",
    "bel_from_mass",
    "commonality_from_mass",
    "eps_bel",
    "eps_pl",
    "eps_shafer",
    "eps_walley",
    "image",
    "is_private",
    "load_problem",
    "mass_from_bel",
    "mass_from_commonality",
    "mass_from_pl",
    "pl_from_mass",
    "power",
    "privacy_losses",
    "product",
    "worst_case",
]
