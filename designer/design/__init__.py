"""The design engine: optimal, certified mechanisms for a privacy budget (DESIGN.md 5).

``problem`` (what to design, TOML files) -> ``programs`` (sparse LPs) -> ``certify`` (exact budget check
and repair) -> ``engine.design`` (front end and result).
"""

from .certify import Certificate, CertificationError, certify
from .engine import DesignResult, design, is_symmetric, objective_value, orbit_average
from .problem import OBJECTIVES, SEMANTICS, DesignProblem, load_problem, parse_problem

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
