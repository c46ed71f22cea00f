"""The design engine: optimal, certified mechanisms for a privacy budget (docs/theory.md, section 5).

``problem`` (what to design, TOML files) -> ``route`` (the route, decided once) -> ``engine.design`` (the
route's row of ``engine.ROUTES``: build and solve its program in ``programs`` / ``solve_steps``, clean,
symmetrise) -> ``certify`` (exact budget and structure check, repair; ``invariant_exact`` for invariant
tables) -> ``result``.
Around it: ``symmetry`` and ``symmetric`` (size classes), ``precise`` (precise designs for estimation
under WLDP), ``infeasible`` (explanations), ``compare`` (closed forms) and ``sweep`` (grids of designs).
"""

from __future__ import annotations

from .certify import Certificate, CertificationError, certify
from .engine import design
from .objectives import objective_value
from .problem import OBJECTIVES, SEMANTICS, DesignProblem
from .problem_toml import load_problem, parse_problem
from .result import DesignResult
from .route import Route, decide
from .symmetry import is_symmetric, orbit_average

__all__ = [
    "OBJECTIVES",
    "SEMANTICS",
    "Certificate",
    "CertificationError",
    "DesignProblem",
    "DesignResult",
    "Route",
    "certify",
    "decide",
    "design",
    "is_symmetric",
    "load_problem",
    "objective_value",
    "orbit_average",
    "parse_problem",
]

