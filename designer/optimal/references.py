"""Repair references of a structured design (docs/theory.md 5.8 and 7.2): designs strictly inside the budget and
the structure's bounds that a solver's answer is mixed with when it fails the exact check (section 7.2), built for
the structure where the answer's own row average and the uniform mechanism break it.

- :func:`support_references`: the most truthful designs on the answer's own sets (tried first: a repair keeps the
  answer's sets);
- :func:`constant_reference` and :func:`linear_references`: the constant design of least lie mass and the most
  truthful designs over every allowed set;
- :func:`separating_references`: designs of full rank that pull every pair of inputs apart (tried last).

The references that design (the most truthful ones) are given :func:`designer.optimal.engine.design` by their caller
and call it with a ``truthful`` objective, which needs none of them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..exceptions import DesignerError, DesignWarning
from ..mechanism import Mechanism
from ..vocabulary import Semantics
from .problem import DesignProblem

__all__ = ["CONSTANT_REFERENCE_INPUTS", "LINEAR_REFERENCE_SHARES", "SEPARATING_PROGRAMS", "constant_reference",
           "linear_references", "separating_reference", "separating_references", "shrunk", "support_references"]

#: Up to this many inputs a constant design within the structure is the first repair reference (a linear program
#: over the allowed sets).
CONSTANT_REFERENCE_INPUTS = 12
#: The shares of the budget and of the bounds the linear references are designed at (:func:`linear_references`).
LINEAR_REFERENCE_SHARES = (0.9, 0.99, 0.999)
#: Most linear programs averaged into one separating reference (:func:`separating_reference`): every pair of
#: inputs, answer set and sign up to this many, a seeded draw of them beyond (k = 4 with 5 sets: 60).
SEPARATING_PROGRAMS = 240
#: Up to this many inputs the answer's own sets give references (the size-class route's expansion limit).
SUPPORT_REFERENCE_INPUTS = 16


#: The designer of the references that design: :func:`designer.optimal.engine.design` (passed in by its caller).
Design = Callable[[DesignProblem], Any]


def shrunk(problem: DesignProblem, share: float, **fields: Any) -> DesignProblem:
    """``problem`` (with ``fields``) at ``share`` of its budget and of its inequality bounds (``lie_max`` and
    ``dont_know_max`` shrink with the budget: a solver's answer overshoots a bound by about its tolerance, and a
    reference only a hair inside it would need a large mixing weight to absorb that).

    Examples
    --------
    >>> from designer import DesignProblem
    >>> from designer.optimal.references import shrunk
    >>> problem = DesignProblem(inputs=("a", "b", "c"), epsilon=1.0, dont_know_max=0.2)
    >>> inner = shrunk(problem, 0.9)
    >>> round(inner.epsilon, 3), round(inner.dont_know_max, 3)
    (0.9, 0.18)
    """
    bounded = {key: getattr(problem, key) * share for key in ("lie_max", "dont_know_max") if getattr(problem, key)}
    return problem.replace(epsilon=share * problem.epsilon, **{**bounded, **fields})


def _truthful(problem: DesignProblem, share: float, design: Design, **fields: Any) -> Mechanism | None:
    """The most truthful design of ``problem`` (with ``fields``) at ``share`` of its budget and bounds, by
    ``design``; None when there is none. A reference's own warnings are not the user's design's."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DesignWarning)
            result = design(shrunk(problem, share, objective="truthful", variance_weights=None, contrasts=None,
                                   priors=None, **fields))
    except DesignerError:
        return None
    return result.mechanism


def constant_reference(problem: DesignProblem) -> Mechanism | None:
    """The constant design (one row for every input: loss 0) over the allowed sets whose largest lie mass is least,
    with the don't-know mass fixed or capped as the problem says; None when it breaks the lying bound. A reference
    that meets the structure whatever the solver's answer looks like (the row average of an answer inherits its
    lies; the uniform mechanism needs the singletons)."""
    from scipy.optimize import linprog

    family = [int(a) for a in problem.family()]
    full = (1 << problem.l) - 1
    truth = problem.truth()
    n = len(family) + 1  # the masses, then the largest lie mass t
    cost = np.zeros(n)
    cost[-1] = 1.0
    a_ub = [[float(t >= 0 and not (a >> int(t)) & 1) for a in family] + [-1.0] for t in truth]
    b_ub = [0.0] * len(truth)
    a_eq, b_eq = [[1.0] * len(family) + [0.0]], [1.0]
    bounds: list[tuple[float, float | None]] = [(0.0, None)] * n
    if full in family and problem.dont_know is not None:
        bounds[family.index(full)] = (problem.dont_know, problem.dont_know)
    elif full in family and problem.dont_know_max is not None:
        bounds[family.index(full)] = (0.0, problem.dont_know_max)
    elif problem.dont_know:
        return None
    out = linprog(cost, A_ub=np.array(a_ub), b_ub=b_ub, A_eq=np.array(a_eq), b_eq=b_eq, bounds=bounds, method="highs")
    if out.status != 0 or (problem.lie_max is not None and out.x[-1] > problem.lie_max):
        return None
    row = np.clip(out.x[:-1], 0.0, None)
    keep = row > 0
    row = row[keep] / row[keep].sum()
    return Mechanism(np.tile(row, (problem.k, 1)), inputs=problem.inputs, frame=problem.frame,
                     focal=[a for a, k in zip(family, keep) if k])


def _structured(problem: DesignProblem) -> bool:
    """A variance objective under a structure: a lying bound, a don't-know mass or cap, focal sets (and every input
    labelled, so that lies are counted)."""
    if not problem.objective.minimised or np.any(problem.truth() < 0):
        return False
    return bool(problem.lie_max or problem.dont_know_max or problem.dont_know is not None
                or problem.focal_sets is not None)


def linear_references(problem: DesignProblem, design: Design) -> Iterator[tuple[str, Mechanism]]:
    """For a variance objective under structure (:func:`_structured`): the most truthful designs (a linear program
    over every design, certified by its own route) at ``LINEAR_REFERENCE_SHARES`` of the budget and of the bounds,
    strictly inside both; none where the share leaves no design (a structure near its feasibility threshold), nor
    for other objectives (no recursion)."""
    for share in LINEAR_REFERENCE_SHARES if _structured(problem) else ():
        mechanism = _truthful(problem, share, design)
        if mechanism is not None:
            yield f"most truthful design at {share:g} of the budget and the bounds", mechanism


def separating_references(problem: DesignProblem) -> Iterator[tuple[str, Mechanism]]:
    """The separating designs (:func:`separating_reference`) at ``LINEAR_REFERENCE_SHARES`` of the budget and the
    bounds, for a variance objective under structure (:func:`_structured`): the last references tried (a repair
    with them spreads a residue over every set their programs use)."""
    for share in LINEAR_REFERENCE_SHARES if _structured(problem) else ():
        separating = separating_reference(problem, share)
        if separating is not None:
            yield f"separating design at {share:g} of the budget and the bounds", separating


def separating_reference(problem: DesignProblem, share: float) -> Mechanism | None:
    """A random (seeded) convex combination of the linear program's designs that pull two inputs' masses on one
    answer set apart (each pair, each set, both ways; at most ``SEPARATING_PROGRAMS`` of them, drawn with the same
    seed), at ``share`` of the budget and the bounds; None when that leaves no design or the combination does not
    identify every share. Its weights are unequal because a symmetric program's two pulls of a pair are mirror
    images, whose plain average answers alike for the two inputs.

    Near a structure's feasibility threshold the most truthful design can answer alike for two inputs (``x3``'s
    allowed sets among ``x1``'s), and the conic answer breaks the budget by more than a repair of it can mend: an
    average of feasible designs is feasible (the program is convex), and one that separates every pair in every
    way it can is, but for a coincidence the rank check catches, a design of full rank: a reference the variance
    objective can be finite at."""
    from dataclasses import replace

    from .._internal.solvers import Status, solve_lp
    from .programs import linear_program

    program = linear_program(shrunk(problem, share))
    k, width = program.k, program.family.size
    pulls = [(i, j, s, sign) for i in range(k) for j in range(i + 1, k) for s in range(width) for sign in (1.0, -1.0)]
    rng = np.random.default_rng(0)
    if len(pulls) > SEPARATING_PROGRAMS:
        chosen = rng.choice(len(pulls), SEPARATING_PROGRAMS, replace=False)
        pulls = [pulls[c] for c in sorted(chosen)]
    designs = []
    for i, j, s, sign in pulls:
        gain = np.zeros_like(program.c)
        gain[i * width + s], gain[j * width + s] = -sign, sign  # minimised: sign (M[i, s] - M[j, s]) maximised
        outcome = solve_lp(replace(program, c=gain))
        if outcome.status is not Status.OPTIMAL or outcome.z is None:
            return None  # no design at this share (or the solver failed on it): no reference
        designs.append(program.mechanism(np.asarray(outcome.z, dtype=float)))
    weights = rng.dirichlet(np.ones(len(designs)))  # unequal: the two signs' mirror designs do not cancel
    matrix = np.clip(np.tensordot(weights, np.asarray(designs), axes=1), 0.0, None)
    keep = matrix.sum(axis=0) > 0
    matrix = matrix[:, keep] / matrix[:, keep].sum(axis=1, keepdims=True)
    if np.linalg.matrix_rank(matrix) < k:
        return None
    return Mechanism(matrix, inputs=problem.inputs, frame=problem.frame,
                     focal=[int(a) for a, kept in zip(program.family, keep) if kept])


def support_references(problem: DesignProblem, candidate: Any, design: Design
                       ) -> Iterator[tuple[str, Mechanism]]:
    """The most truthful designs on the answer's own sets, at ``LINEAR_REFERENCE_SHARES`` of the budget and the
    bounds, for a variance objective of a structured SLDP problem (:func:`_structured`): the first references its
    repair tries. A repair with a reference of other sets gives the released design those sets at the mixing weight
    (survey-5-options: 12 answer sets of mass 1e-9 to 4e-8 beside its 7, sets no respondent should be offered and no
    device can draw); one on the answer's sets keeps them. Designed lazily, each only when the one before did not
    serve. (Only for variance objectives: a truthful design's repair would design truthful ones again.)"""
    if (not isinstance(candidate, Mechanism) or problem.semantics is not Semantics.SLDP
            or problem.k > SUPPORT_REFERENCE_INPUTS or not _structured(problem)):
        return
    support = tuple(sorted(int(a) for a in candidate.focal))
    for share in LINEAR_REFERENCE_SHARES:
        mechanism = _truthful(problem, share, design, focal_sets=support)
        if mechanism is not None:
            yield f"most truthful design on the answer's sets at {share:g} of the budget and the bounds", mechanism
