"""Designs for non-compliance within a budget (designer.planning.noncompliance_design).

The search's closed-form variance is checked against the general plan of several groups (the stacked latent-class
information of designer.planning.split); the optimum against a brute-force grid over the same family and the
textbook designs made private; every returned mechanism is certified in exact arithmetic.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from designer.estimation.groups import Noncompliance
from designer.planning.noncompliance_design import (
    _edges,
    binary,
    binary_variance,
    design_for_noncompliance,
    textbook_within_budget,
)
from designer.planning.split import SplitDesign, split_variances
from designer.privacy import is_private


@pytest.mark.parametrize("rule", ["carriers:no", "everyone:no", "everyone:yes"])
def test_closed_form_variance_is_the_general_plans(rule):
    rng = np.random.default_rng(5)
    parsed = Noncompliance.parse(rule)
    for _ in range(20):
        a, b = rng.uniform(0.05, 0.95, size=(2, 2))
        f = float(rng.uniform(0.1, 0.9))
        prior, share = float(rng.uniform(0.1, 0.9)), float(rng.uniform(0.0, 0.5))
        design = SplitDesign(mechanisms={"1": binary(a[0], b[0]), "2": binary(a[1], b[1])},
                             fractions=np.array([f, 1 - f]), rule=parsed, share=share)
        general = float(split_variances(design, [prior, 1 - prior])[0])
        assert binary_variance([(a[0], b[0]), (a[1], b[1])], [f, 1 - f], parsed, prior, share) == \
            pytest.approx(general, rel=1e-8)


def _grid_best(eps: float, rule: Noncompliance, prior: float, share: float) -> float:
    """The smallest variance over a grid of the same family: a in 13 points, b on 7 points of its edge interval
    (b <= a), splits in 19 points."""
    points = []
    for a in np.linspace(1e-6, 1 - 1e-6, 13):
        low, high = _edges(a, eps)
        high = min(high, a)
        points += [(a, low + t * (high - low)) for t in np.linspace(0, 1, 7)]
    best = math.inf
    for g1, g2 in itertools.combinations_with_replacement(points, 2):
        for f in np.linspace(0.05, 0.95, 19):
            best = min(best, binary_variance([g1, g2], [f, 1 - f], rule, prior, share))
    return best


@pytest.mark.parametrize(("eps", "rule", "textbook"), [(1.0, "carriers:no", (2 / 12, 10 / 12)),
                                                       (2.0, "everyone:no", (0.3, 0.7))])
def test_the_design_beats_a_grid_and_the_textbook_and_is_certified(eps, rule, textbook):
    design = design_for_noncompliance(eps, rule, prior=0.3, share=0.2, starts=10)
    for mech in design.mechanisms.values():
        assert is_private(mech, eps, semantics="sldp", exact=True)
        assert mech.matrix[1, 0] <= mech.matrix[0, 0]  # yes keeps pointing to the trait
    assert design.variance <= _grid_best(eps, design.rule, 0.3, 0.2) * (1 + 1e-9)
    _, textbook_variance = textbook_within_budget(textbook, rule, eps, prior=0.3, share=0.2)
    assert design.variance < textbook_variance
    groups = [(m.matrix[0, 0], m.matrix[1, 0]) for m in design.mechanisms.values()]
    assert design.variance == pytest.approx(binary_variance(groups, design.fractions, design.rule, 0.3, 0.2),
                                            rel=1e-9)


def test_textbook_design_at_a_large_budget_is_the_textbook_design():
    """At eps = 30 the lie detector's textbook design needs no noise; with halves its variance is RRuni's formula
    with n_g = n / 2."""
    p, prior, share = (2 / 12, 10 / 12), 0.3, 0.2
    mechs, variance = textbook_within_budget(p, "carriers:no", 30.0, prior=prior, share=share)
    assert mechs["1"].matrix[1, 0] == pytest.approx(1 - p[0], abs=1e-9)
    lam = [prior * (1 - share) + (1 - prior) * (1 - pg) for pg in p]
    expected = sum(lg * (1 - lg) / 0.5 for lg in lam) / (p[1] - p[0]) ** 2
    assert variance == pytest.approx(expected, rel=1e-6)


def test_bad_requests_are_refused():
    from designer.exceptions import DesignerError

    for kwargs in ({"epsilon": 0.0}, {"epsilon": 1.0, "rule": "carriers:maybe"}, {"epsilon": 1.0, "prior": 1.0},
                   {"epsilon": 1.0, "rule": "carriers:yes"}):
        with pytest.raises(DesignerError):
            design_for_noncompliance(**kwargs, starts=1)


@pytest.mark.heavy
def test_readme_table_is_the_scripts_output():
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    script = root / "examples" / "noncompliance_designs.py"
    spec = importlib.util.spec_from_file_location("noncompliance_designs", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table = module.table()
    assert table in (root / "README.md").read_text()
    assert table in (root / "docs" / "theory.md").read_text()


def test_reversed_answers_allowed_reach_the_grid_of_the_whole_polygon():
    """keep_meaning=False searches every eps-private binary pair (b above a too): certified, at most the best of a
    grid over the whole polygon, and no worse than with yes kept as the revealing answer."""
    eps, prior, share = 1.5, 0.3, 0.2
    rule = Noncompliance.parse("carriers:no")
    free = design_for_noncompliance(eps, rule, prior=prior, share=share, starts=10, keep_meaning=False)
    kept = design_for_noncompliance(eps, rule, prior=prior, share=share, starts=10)
    for mech in free.mechanisms.values():
        assert is_private(mech, eps, semantics="sldp", exact=True)
    e = math.exp(eps)
    points = [(a, b) for a in np.linspace(1e-6, 1 - 1e-6, 9) for b in np.linspace(0, 1, 21)
              if a / e <= b <= a * e and 1 - (1 - a) * e <= b <= 1 - (1 - a) / e]
    best = min(binary_variance([g1, g2], [f, 1 - f], rule, prior, share)
               for g1, g2 in itertools.combinations_with_replacement(points, 2) for f in np.linspace(0.05, 0.95, 7))
    assert free.variance <= best * (1 + 1e-9) and free.variance <= kept.variance * (1 + 1e-9)


def test_closed_form_variance_of_three_groups_is_the_general_plans():
    """Two groups identify exactly (the prevalence's variance then depends on the trait's column only through the
    determinant); three over-identify, and every term of the information counts."""
    rng = np.random.default_rng(8)
    for rule in ("carriers:no", "everyone:no"):
        parsed = Noncompliance.parse(rule)
        for _ in range(10):
            a, b = rng.uniform(0.05, 0.95, size=(2, 3))
            f = rng.dirichlet(np.ones(3))
            prior, share = float(rng.uniform(0.1, 0.9)), float(rng.uniform(0.05, 0.5))
            mechs = {str(g): binary(a[g], b[g]) for g in range(3)}
            general = float(split_variances(SplitDesign(mechanisms=mechs, fractions=f, rule=parsed, share=share),
                                            [prior, 1 - prior])[0])
            groups = [(a[g], b[g]) for g in range(3)]
            assert binary_variance(groups, f, parsed, prior, share) == pytest.approx(general, rel=1e-8)
