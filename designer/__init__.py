"""designer: design and audit local-differential-privacy mechanisms with set-valued answers.

An evidential mechanism gives every input a Dempster-Shafer mass function over the answers, so a
respondent may answer with a set ("I don't know", "one of these"). See docs/guide/ for a tour and
``docs/theory.md`` for the mathematics.

The names below are loaded on first use, so that ``import designer`` (and the command line) start fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

#: Public name -> module that defines it.
_EXPORTS = {
    "image": "composition", "power": "composition", "product": "composition",
    "Q_GWRR": "constructors", "Q_WRR": "constructors", "Q_2x3": "constructors", "Q_kRR": "constructors",
    "Q_lambda": "constructors", "Budget": "budget",
    "design": "optimal.engine", "DesignProblem": "optimal.problem", "load_problem": "optimal.problem_toml",
    "DesignResult": "optimal.result",
    "DesignerError": "exceptions", "DesignWarning": "exceptions", "InfeasibleDesignError": "exceptions",
    "InvalidMechanismError": "exceptions", "InvalidProblemError": "exceptions",
    "Mechanism": "mechanism",
    "LossWitness": "privacy", "eps_bel": "privacy", "eps_pl": "privacy", "eps_shafer": "privacy",
    "eps_walley": "privacy", "is_private": "privacy", "privacy_losses": "privacy", "worst_case": "privacy",
    "bel_from_mass": "setfunctions", "commonality_from_mass": "setfunctions", "mass_from_bel": "setfunctions",
    "mass_from_commonality": "setfunctions", "mass_from_pl": "setfunctions", "pl_from_mass": "setfunctions",
    "CertificationError": "exceptions", "SolverError": "exceptions",
    "Loss": "vocabulary", "Objective": "vocabulary", "Semantics": "vocabulary",
    "FitStatus": "results", "Result": "results",
}

__all__ = [
    "Q_GWRR",
    "Q_WRR",
    "Budget",
    "CertificationError",
    "DesignProblem",
    "DesignResult",
    "DesignWarning",
    "DesignerError",
    "FitStatus",
    "InfeasibleDesignError",
    "InvalidMechanismError",
    "InvalidProblemError",
    "Loss",
    "LossWitness",
    "Mechanism",
    "Objective",
    "Q_2x3",
    "Q_kRR",
    "Q_lambda",
    "Result",
    "Semantics",
    "SolverError",
    "bel_from_mass",
    "commonality_from_mass",
    "design",
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'designer' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from .budget import Budget
    from .composition import image, power, product
    from .constructors import Q_GWRR, Q_WRR, Q_2x3, Q_kRR, Q_lambda
    from .exceptions import (
        CertificationError,
        DesignerError,
        DesignWarning,
        InfeasibleDesignError,
        InvalidMechanismError,
        InvalidProblemError,
        SolverError,
    )
    from .mechanism import Mechanism
    from .optimal.engine import design
    from .optimal.problem import DesignProblem
    from .optimal.problem_toml import load_problem
    from .optimal.result import DesignResult
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
    from .results import FitStatus, Result
    from .setfunctions import (
        bel_from_mass,
        commonality_from_mass,
        mass_from_bel,
        mass_from_commonality,
        mass_from_pl,
        pl_from_mass,
    )
    from .vocabulary import Loss, Objective, Semantics
