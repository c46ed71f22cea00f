"""The route of a design (designer/optimal/route.py) is decided once, every route has a row in the engine's table,
and the route decides which program runs; invariant designs go through the same release loop as every design."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

from designer.exceptions import CertificationError, InvalidProblemError
from designer.optimal import DesignProblem, design
from designer.optimal import engine as engine_module
from designer.optimal.route import Decision, Route, check_size, decide

LABELS = tuple(f"a{i}" for i in range(16))


def labels(k: int) -> tuple[str, ...]:
    return LABELS[:k]


#: One problem per route, built here, and the words its path starts with (``DesignResult.path``).
CASES = {
    Route.GENERAL: (DesignProblem(objective="truthful",
                                  inputs=labels(4), epsilon=1.0, prior=[0.4, 0.3, 0.2, 0.1]), {}, "linear program"),
    Route.PRICED: (DesignProblem(objective="truthful", inputs=labels(13), epsilon=1.0, prior=np.arange(1, 14) / 91), {},
                   "linear program, answer sets priced"),
    Route.LAZY: (DesignProblem(objective="truthful",
                               inputs=labels(4), epsilon=1.0, semantics="wldp", prior=[0.4, 0.3, 0.2, 0.1]), {},
                 "linear program, Walley rows generated"),
    Route.PRECISE: (DesignProblem(inputs=labels(4), epsilon=1.0, semantics="wldp", objective="chi2",
                                  prior=[0.4, 0.3, 0.2, 0.1]), {}, "staircase LP vertex"),
    Route.STAIRCASE: (DesignProblem(inputs=labels(5), epsilon=1.0, objective="chi2",
                                    prior=[0.3, 0.25, 0.2, 0.15, 0.1]), {}, "staircase LP"),
    Route.VARIANCE: (DesignProblem(inputs=labels(5), epsilon=1.0, objective="variance",
                                   prior=[0.3, 0.25, 0.2, 0.15, 0.1]), {}, "variance program over staircase patterns"),
    Route.SYMMETRIC: (DesignProblem(objective="truthful",
                                    inputs=labels(12), epsilon=1.0), {}, "symmetric size classes"),
    Route.INVARIANT: (DesignProblem(objective="truthful",
                                    inputs=("a", "b", "c"), epsilon=1.0, prior=[0.5, 0.3, 0.2], invariant=True), {},
                      "invariant linear program + exact table"),
}


def test_the_table_has_a_row_for_every_route():
    assert set(engine_module.ROUTES) == set(Route) and len(Route) == 8
    assert set(CASES) == set(Route)
    for steps in engine_module.ROUTES.values():
        assert all(callable(getattr(steps, f.name)) for f in dataclasses.fields(steps))


@pytest.mark.parametrize("route", list(Route), ids=str)
def test_each_route_is_reached_and_decides_the_program(route, monkeypatch):
    """The decided route's row, and no other, solves the problem (each row's solve step is wrapped to record it)."""
    problem, kwargs, path = CASES[route]
    assert decide(problem, **kwargs).route is route
    called: list[Route] = []
    table = dict(engine_module.ROUTES)
    for r, steps in table.items():
        def record(p, settings, decision, _solve=steps.solve, _r=r):
            called.append(_r)
            return _solve(p, settings, decision)
        table[r] = dataclasses.replace(steps, solve=record)
    monkeypatch.setattr(engine_module, "ROUTES", table)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = design(problem, **kwargs)
    assert called and set(called) == {route}
    assert result.path.startswith(path)
    assert str(result.status) == "optimal" and result.to_dict()["status"] == "optimal"


def test_the_route_follows_the_problem_the_path_and_the_solver():
    sym6 = DesignProblem(objective="truthful", inputs=labels(6), epsilon=1.0)
    assert decide(sym6).route is Route.GENERAL and decide(sym6).symmetric  # small: the full program, averaged
    assert decide(sym6, "symmetric").route is Route.SYMMETRIC
    # path "general" keeps a symmetric problem off the size classes: its sets are priced from 8 answers
    assert decide(DesignProblem(objective="truthful", inputs=labels(12), epsilon=1.0), "general").route is Route.PRICED
    assert decide(DesignProblem(objective="truthful", inputs=labels(7), epsilon=1.0), "general").route is Route.GENERAL
    priced = CASES[Route.PRICED][0]
    assert decide(priced).priceable and decide(priced, solver="CLARABEL").route is Route.GENERAL
    assert decide(priced).fallback is Route.GENERAL
    both = priced.replace(semantics="both")
    assert decide(both).route is Route.PRICED and decide(both).fallback is Route.LAZY
    assert decide(both, solver="clarabel").route is Route.LAZY
    # chi2 under WLDP is precise even when the path asks for size classes
    assert decide(DesignProblem(inputs=labels(12), epsilon=1.0, semantics="wldp", objective="chi2"),
                  "symmetric").route is Route.PRECISE
    with pytest.raises(InvalidProblemError, match="symmetric path needs"):
        decide(CASES[Route.GENERAL][0], "symmetric")


def test_an_invariant_decision_keeps_the_prior_exactly():
    decision = decide(DesignProblem(objective="truthful",
                                    inputs=("a", "b", "c"), epsilon=1.0, prior=[0.3, 0.3, 0.4], invariant=True))
    from fractions import Fraction

    assert decision.prior == (Fraction(3, 10), Fraction(3, 10), Fraction(2, 5))
    assert decision.problem.prior.tolist() == [0.3, 0.3, 0.4]


def test_the_size_check_reads_the_decision():
    frame = tuple(f"f{i}" for i in range(21))
    wide = DesignProblem(objective="truthful",
                         inputs=frame[:3], frame=frame, epsilon=1.0)  # priced up to 20 answers, not 21
    assert decide(wide).route is Route.PRICED
    with pytest.raises(InvalidProblemError, match="2\\*\\*21 candidate sets"):
        check_size(decide(wide))
    check_size(Decision(Route.PRECISE, wide))  # the precise route never builds the 2**l table
    check_size(decide(wide.replace(frame=frame[:20])))


def test_two_routes_of_one_problem_agree():
    """The size-class program and the full program are different LPs with one optimum (docs/theory.md 5.3)."""
    problem = DesignProblem(objective="truthful", inputs=labels(5), epsilon=0.8, semantics="wldp")
    general, symmetric = design(problem, path="general"), design(problem, path="symmetric")
    assert general.path.startswith("linear program") and symmetric.path == "symmetric size classes"
    assert general.objective_value == pytest.approx(symmetric.objective_value, rel=1e-9)


def test_an_invariant_binary_design_is_warners_and_goes_through_the_release_loop(monkeypatch):
    """At a uniform prior Warner's p = e^eps / (1 + e^eps) keeps the prior and is the truthful optimum (Ex 3.7).
    When the first table does not certify, the design is solved again inside the budget, as every design is."""
    problem = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0, invariant=True)
    p = math.e / (1 + math.e)
    honest = design(problem)
    assert honest.objective_value == pytest.approx(p, rel=1e-9)
    assert honest.exact_table is not None and "re-solved" not in honest.path
    real = engine_module.certify_table
    calls: list[float] = []

    def once_refused(matrix, prob, prior, optimum):
        calls.append(optimum)
        if len(calls) == 1:
            raise CertificationError("refused once")
        return real(matrix, prob, prior, optimum)

    monkeypatch.setattr(engine_module, "certify_table", once_refused)
    again = design(problem)
    assert len(calls) == 2 and again.path.endswith("(re-solved at epsilon - 1e-13 to certify)")
    assert again.certificate.epsilon == 1.0 and again.objective_value == pytest.approx(p, rel=1e-9)

    def always_refused(matrix, prob, prior, optimum):
        raise CertificationError("the table's own reason")

    monkeypatch.setattr(engine_module, "certify_table", always_refused)
    with pytest.raises(CertificationError, match=r"^the table's own reason$"):
        design(problem)
