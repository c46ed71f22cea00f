"""designer: design and audit local-differential-privacy mechanisms with set-valued answers.

An evidential mechanism gives every input a Dempster-Shafer mass function over the answers, so a
respondent may answer with a set ("I don't know", "one of these"). The front doors are one function per verb of
the command line (``design``, ``estimate``, ``regress``, ``plan``, ``randomize``, ``export``, ``audit``,
``tradeoff``); the guide, the mathematics (the paper's numbering) and the reference are on the documentation site
named below. ``designer problems`` lists the design problems that come with the package.

The names below are loaded on first use, so that ``import designer`` (and the command line) start fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import DOCS_URL as _DOCS_URL
from ._version import __version__ as __version__

__doc__ = f"{__doc__}\nDocumentation: {_DOCS_URL}\n"  # help(designer) names the site (the one URL constant)

#: The one table of public names: module (under ``designer``) -> the names it gives ``import designer``. The
#: ``TYPE_CHECKING`` imports below say the same for type checkers and IDEs (a test checks that they agree).
_PUBLIC: dict[str, tuple[str, ...]] = {
    "_version": ("show_versions",),
    "budget": ("Budget",),
    "composition": ("image", "power", "product"),
    "constructors": ("Q_GWRR", "Q_WRR", "Q_2x3", "Q_kRR", "Q_lambda", "Q_subset_selection"),
    "exceptions": ("CertificationError", "DataError", "DesignWarning", "DesignerError", "InfeasibleDesignError",
                   "InvalidMechanismError", "InvalidProblemError", "SolverError"),
    "mechanism": ("Mechanism",),
    "optimal.problem": ("DesignProblem",),
    "optimal.problem_toml": ("load_problem",),
    "optimal.result": ("DesignResult",),
    "privacy": ("LossWitness", "eps_bel", "eps_pl", "eps_shafer", "eps_walley", "is_private", "privacy_losses",
                "worst_case"),
    "results": ("FitStatus", "Result"),
    "setfunctions": ("bel_from_mass", "commonality_from_mass", "mass_from_bel", "mass_from_commonality",
                     "mass_from_pl", "pl_from_mass"),
    "vocabulary": ("Loss", "Objective", "Semantics"),
    "guarantees.certified": ("CertifiedMechanism",),
    # the front doors: one function per verb of the command line (designer/verbs/)
    "verbs.design_verb": ("design",),
    "verbs.estimate_verb": ("estimate",),
    "verbs.regress_verb": ("regress",),
    "verbs.plan_verb": ("plan",),
    "verbs.randomize_verb": ("randomize",),
    "verbs.export_verb": ("export",),
    "verbs.audit_verb": ("audit",),
    "verbs.tradeoff_verb": ("tradeoff",),
}

#: Public name -> module that defines it.
_EXPORTS = {name: module for module, names in _PUBLIC.items() for name in names}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'designer' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # pragma: no cover - the same names for type checkers and IDEs (explicit re-exports)
    from ._version import show_versions as show_versions
    from .budget import Budget as Budget
    from .composition import image as image
    from .composition import power as power
    from .composition import product as product
    from .constructors import Q_GWRR as Q_GWRR
    from .constructors import Q_WRR as Q_WRR
    from .constructors import Q_2x3 as Q_2x3
    from .constructors import Q_kRR as Q_kRR
    from .constructors import Q_lambda as Q_lambda
    from .constructors import Q_subset_selection as Q_subset_selection
    from .exceptions import CertificationError as CertificationError
    from .exceptions import DataError as DataError
    from .exceptions import DesignerError as DesignerError
    from .exceptions import DesignWarning as DesignWarning
    from .exceptions import InfeasibleDesignError as InfeasibleDesignError
    from .exceptions import InvalidMechanismError as InvalidMechanismError
    from .exceptions import InvalidProblemError as InvalidProblemError
    from .exceptions import SolverError as SolverError
    from .guarantees.certified import CertifiedMechanism as CertifiedMechanism
    from .mechanism import Mechanism as Mechanism
    from .optimal.problem import DesignProblem as DesignProblem
    from .optimal.problem_toml import load_problem as load_problem
    from .optimal.result import DesignResult as DesignResult
    from .privacy import LossWitness as LossWitness
    from .privacy import eps_bel as eps_bel
    from .privacy import eps_pl as eps_pl
    from .privacy import eps_shafer as eps_shafer
    from .privacy import eps_walley as eps_walley
    from .privacy import is_private as is_private
    from .privacy import privacy_losses as privacy_losses
    from .privacy import worst_case as worst_case
    from .results import FitStatus as FitStatus
    from .results import Result as Result
    from .setfunctions import bel_from_mass as bel_from_mass
    from .setfunctions import commonality_from_mass as commonality_from_mass
    from .setfunctions import mass_from_bel as mass_from_bel
    from .setfunctions import mass_from_commonality as mass_from_commonality
    from .setfunctions import mass_from_pl as mass_from_pl
    from .setfunctions import pl_from_mass as pl_from_mass
    from .verbs.audit_verb import audit as audit
    from .verbs.design_verb import design as design
    from .verbs.estimate_verb import estimate as estimate
    from .verbs.export_verb import export as export
    from .verbs.plan_verb import plan as plan
    from .verbs.randomize_verb import randomize as randomize
    from .verbs.regress_verb import regress as regress
    from .verbs.tradeoff_verb import tradeoff as tradeoff
    from .vocabulary import Loss as Loss
    from .vocabulary import Objective as Objective
    from .vocabulary import Semantics as Semantics
