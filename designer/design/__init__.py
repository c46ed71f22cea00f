"""The design engine: optimal, certified mechanisms for a privacy budget (docs/theory.md, section 5).

``problem`` (what to design, TOML files) -> ``programs`` (sparse LPs) -> ``engine.design`` (choose the
path, solve, clean, symmetrise) -> ``certify`` (exact budget and structure check, repair) -> ``result``.
Around it: ``symmetry`` and ``symmetric`` (size classes), ``precise`` (precise designs for estimation
under WLDP), ``infeasible`` (explanations), ``compare`` (closed forms) and ``sweep`` (grids of designs).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from .certify import Certificate, CertificationError, certify
from .engine import design
from .objectives import objective_value
from .problem import OBJECTIVES, SEMANTICS, DesignProblem
from .problem_toml import load_problem, parse_problem
from .result import DesignResult
from .symmetry import is_symmetric, orbit_average

__all__ = [
    "OBJECTIVES",
    "SEMANTICS",
    "Certificate",
    "CertificationError",
    "DesignProblem",
    "DesignResult",
    "certify",
    "design",
    "is_symmetric",
    "load_problem",
    "objective_value",
    "orbit_average",
    "parse_problem",
]


class _DesignPackage(types.ModuleType):
    """``designer.design`` is both this package and the function: ``from designer import design;
    design(problem)`` designs, as a reader of the README expects, and ``designer.design.problem`` still names the
    module."""

    def __call__(self, *args: Any, **kwargs: Any) -> DesignResult:
        return design(*args, **kwargs)


sys.modules[__name__].__class__ = _DesignPackage
