"""The certificate's own machinery, checked piece by piece against arithmetic written here: the exact pass test of
each loss (full and compact mechanisms), the cleaning of solver noise, the mixing, the search for the smallest
mixing weight, the default references and the certificate's sentence. Written for the mutants of
``designer/optimal/certify.py`` that survived the mutation suite (docs/mutation.md)."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from designer import Mechanism
from designer.optimal import DesignProblem
from designer.optimal.symmetric import SymmetricMechanism
from designer.vocabulary import Loss

cert = importlib.import_module("designer.optimal.certify")  # the module: designer.optimal.certify names a function
SHAFER, WALLEY, BOTH = (Loss.SHAFER,), (Loss.WALLEY,), (Loss.SHAFER, Loss.WALLEY)


def _binary_compact(a: float, b: float, d: float) -> SymmetricMechanism:
    """Two inputs: truth a, the other singleton b, don't-know d. Shafer loss ln(a/b), Walley ln((a+d)/b)."""
    return SymmetricMechanism(("yes", "no"), np.array([a, d]), np.array([b, 0.0]))


def _binary_full(a: float, b: float, d: float) -> Mechanism:
    return Mechanism(np.array([[a, b, d], [b, a, d]]), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2, 3])


@pytest.mark.parametrize("make", [_binary_compact, _binary_full], ids=["compact", "full"])
def test_passes_decides_each_loss_on_its_own(make):
    """a = 1/2, b = 1/4, d = 1/4: Shafer ln 2, Walley ln 3. Between them only Shafer passes; each loss is
    decided 1e-12 (relative) on either side of its own value."""
    mech = make(0.5, 0.25, 0.25)
    between = math.log(2.5)
    assert cert.passes(mech, between, SHAFER) is True
    assert cert.passes(mech, between, WALLEY) is False
    assert cert.passes(mech, between, BOTH) is False
    assert cert.passes(mech, math.log(3) * (1 + 1e-12), BOTH) is True
    for losses, value in ((SHAFER, math.log(2)), (WALLEY, math.log(3))):
        assert cert.passes(mech, value * (1 + 1e-12), losses) is True
        assert cert.passes(mech, value * (1 - 1e-12), losses) is False


def test_compact_and_full_passes_agree_on_random_binary_mechanisms():
    rng = np.random.default_rng(5)
    for _ in range(50):
        a, b, d = rng.dirichlet([2, 1, 1])
        if b <= 0:
            continue
        eps = rng.uniform(0.05, 3.0)
        for losses in (SHAFER, WALLEY, BOTH):
            shafer = math.log(max(a / b, b / a))
            walley = math.log(max((a + d) / b, (b + d) / a))
            loss = shafer if losses == SHAFER else walley if losses == WALLEY else max(shafer, walley)
            full, compact = cert.passes(_binary_full(a, b, d), eps, losses), cert.passes(
                _binary_compact(a, b, d), eps, losses)
            assert full == compact, (a, b, d, eps, losses)
            if abs(loss - eps) > 1e-9:
                assert full == (loss < eps), (a, b, d, eps, losses)


def test_clean_solution_clips_noise_and_renormalises_only_what_it_must():
    zero = cert.ZERO_TOL
    cols = np.array([[0.5, 0.5 - zero, zero, -1e-15], [0.3, 0.3, 0.4, 0.0]])
    out = cert.clean_solution(cols)
    assert out[0, 2] > 0 and out[0, 3] == 0.0  # ZERO_TOL itself is kept; a negative is noise
    assert np.array_equal(out[1], cols[1])  # a row summing to 1 is kept bit for bit
    off = np.array([[0.25, 0.25]])  # sums to 0.5: renormalised
    assert np.array_equal(cert.clean_solution(off), [[0.5, 0.5]])
    near = np.array([[0.5, 0.5 + 1e-15]])  # within RENORMALIZE_TOL of 1: untouched
    assert np.array_equal(cert.clean_solution(near), near)
    far = np.array([[0.5, 0.5 + 10 * cert.RENORMALIZE_TOL]])
    assert abs(cert.clean_solution(far).sum() - 1) < 1e-15
    below = np.array([[zero / 2, 1.0]])
    assert cert.clean_solution(below)[0, 0] == 0.0


def test_clean_solution_fixes_the_dont_know_column_exactly():
    cols = np.array([[0.6, 0.2, 0.2000001], [0.0, 0.0, 0.3]])
    out = cert.clean_solution(cols, fixed_full=0.2, full_index=2)
    assert np.all(out[:, 2] == 0.2)
    assert np.allclose(out[0, :2], [0.6, 0.2], rtol=1e-15)
    assert np.all(out[1, :2] == 0.0)  # a row with nothing but don't-know stays so (no division by zero)
    # a fixed mass without its column index, or an index without a mass, is plain cleaning
    assert np.array_equal(cert.clean_solution(cols[:1], fixed_full=0.2), cert.clean_solution(cols[:1]))
    assert np.array_equal(cert.clean_solution(cols[:1], full_index=2), cert.clean_solution(cols[:1]))


def test_clean_solution_sets_forbidden_entries_to_zero():
    cols = np.array([[0.7, 0.3], [0.4, 0.6]])
    out = cert.clean_solution(cols, forbidden=np.array([[False, True], [False, False]]))
    assert np.array_equal(out[0], [1.0, 0.0]) and np.array_equal(out[1], cols[1])


def test_mix_is_the_convex_combination_on_the_union_of_columns():
    a = Mechanism(np.array([[0.7, 0.3], [0.3, 0.7]]), inputs=["y", "n"], frame=["y", "n"], focal=[1, 2])
    b = Mechanism(np.array([[0.4, 0.6], [0.4, 0.6]]), inputs=["y", "n"], frame=["y", "n"], focal=[1, 3])
    t = 0.25
    out = cert.mix(a, b, t)
    expected = {1: [0.75 * 0.7 + 0.25 * 0.4, 0.75 * 0.3 + 0.25 * 0.4], 2: [0.75 * 0.3, 0.75 * 0.7],
                3: [0.25 * 0.6, 0.25 * 0.6]}
    assert [int(m) for m in out.focal] == [1, 2, 3]
    for j, m in enumerate(out.focal):
        assert np.allclose(out.matrix[:, j], expected[int(m)], rtol=0, atol=1e-16)
    assert np.array_equal(cert.mix(a, b, 0.0).matrix[:, :2], a.matrix)
    c = Mechanism(np.array([[0.6, 0.3, 0.1], [0.3, 0.6, 0.1]]), inputs=["y", "n"], frame=["y", "n"], focal=[1, 2, 3])
    e = Mechanism(np.array([[0.45, 0.45, 0.1], [0.45, 0.45, 0.1]]), inputs=["y", "n"], frame=["y", "n"],
                  focal=[1, 2, 3])
    for t in (0.3, 0.7, 1e-9):
        assert np.all(cert.mix(c, e, t, dont_know=0.1).matrix[:, 2] == 0.1)  # exactly, not a rounded average


def test_mix_of_compact_mechanisms_keeps_a_fixed_dont_know_exactly():
    a, b = _binary_compact(0.6, 0.2, 0.2), _binary_compact(0.4, 0.4, 0.2)
    out = cert.mix(a, b, 0.3)
    assert np.allclose(out.A, 0.7 * a.A + 0.3 * b.A) and np.allclose(out.B, 0.7 * a.B + 0.3 * b.B)
    assert cert.mix(a, b, 0.3, dont_know=0.2).A[1] == 0.2
    assert cert.mix(a, b, 0.3, dont_know=0.25).A[1] == 0.25


@pytest.mark.parametrize("threshold", [1e-15, 3e-13, 2.5e-7, 0.04, 0.5, 0.5 + 1e-9, 0.99, 1.0])
def test_smallest_mix_weight_finds_the_threshold_from_above(threshold):
    """The passing weights are [t*, 1]: the answer passes and lies within one bisection step of t*
    (a decade split 2^12 times)."""
    calls = []

    def passes(t: float) -> bool:
        calls.append(t)
        return t >= threshold

    t = cert.smallest_mix_weight(passes)
    assert threshold <= t <= 1.0
    decade = 10 ** math.ceil(math.log10(threshold) - 1e-12)
    assert t - threshold <= decade / 2**12 + 1e-300
    assert max(calls) <= 1.0  # never a weight above 1
    assert cert.smallest_mix_weight(passes, steps=30) - threshold <= decade / 2**30 + 1e-300


def test_smallest_mix_weight_when_only_the_whole_reference_passes():
    assert cert.smallest_mix_weight(lambda t: t >= 1.0) == 1.0
    # a threshold between the last decade tried and 1 is bisected in (0.1, 1]
    t = cert.smallest_mix_weight(lambda t: t >= 0.7)
    assert 0.7 <= t <= 0.7 + 1 / 2**12


def test_bisect_threshold_returns_the_passing_end_within_the_steps():
    for steps in (1, 5, 20):
        t = cert.bisect_threshold(lambda x: x >= 0.3, bad=0.0, good=1.0, steps=steps)
        assert 0.3 <= t <= 0.3 + 1 / 2**steps
    assert cert.bisect_threshold(lambda x: x >= 0.3, bad=0.0, good=1.0) - 0.3 <= 1 / 2**20


def test_default_references_are_the_row_average_and_the_uniform_mechanism():
    m = Mechanism(np.array([[0.5, 0.1, 0.1, 0.3], [0.1, 0.4, 0.2, 0.3], [0.2, 0.2, 0.3, 0.3]]),
                  inputs=["a", "b", "c"], frame=["a", "b", "c"], focal=[1, 2, 4, 7])
    refs = dict(cert.default_references(DesignProblem(objective="truthful", inputs=("a", "b", "c"), epsilon=1.0), m))
    assert list(refs) == ["row average", "uniform mechanism"]
    average = refs["row average"]
    assert np.allclose(average.matrix, np.tile(m.matrix.mean(axis=0), (3, 1)), atol=1e-16)
    assert [int(x) for x in average.focal] == [1, 2, 4, 7]
    uniform = refs["uniform mechanism"]
    assert [int(x) for x in uniform.focal] == [1, 2, 4, 7]
    assert np.allclose(uniform.matrix, np.tile([0.7 / 3, 0.7 / 3, 0.7 / 3, 0.3], (3, 1)), atol=1e-16)
    plain = Mechanism(np.array([[0.8, 0.2], [0.2, 0.8]]), inputs=["y", "n"], frame=["y", "n"], focal=[1, 2])
    refs = dict(cert.default_references(DesignProblem(objective="truthful", inputs=("y", "n"), epsilon=1.0), plain))
    assert [int(x) for x in refs["uniform mechanism"].focal] == [1, 2]
    assert np.array_equal(refs["uniform mechanism"].matrix, [[0.5, 0.5], [0.5, 0.5]])


def test_default_references_of_a_compact_mechanism():
    k = 4
    A, B = np.array([0.4, 0.1, 0.05, 0.15]), np.array([0.2, 0.06, 0.04, 0.0])
    mech = SymmetricMechanism(tuple("abcd"), A, B)
    refs = dict(cert.default_references(DesignProblem(objective="truthful", inputs=tuple("abcd"), epsilon=1.0), mech))
    sizes = np.arange(1, k + 1)
    totals = A + B
    average = refs["row average"]
    assert np.allclose(average.A, sizes * totals / k) and np.allclose(average.B, (k - sizes) * totals / k)
    assert average.eps_shafer() == pytest.approx(0.0, abs=1e-12)
    uniform = refs["uniform mechanism"]
    assert np.allclose(uniform.A, [0.85 / 4, 0, 0, 0.15]) and np.allclose(uniform.B, [0.85 * 3 / 4, 0, 0, 0])


def test_certify_repairs_with_the_smallest_weight_and_says_so():
    """Warner just over eps = 1 (ratio e (1 + 1e-9)): released after mixing in the row average by the
    smallest weight found, which passes while a tenth of it does not."""
    p = math.e * (1 + 1e-9) / (1 + math.e * (1 + 1e-9))
    mech = Mechanism(np.array([[p, 1 - p], [1 - p, p]]), inputs=["y", "n"], frame=["y", "n"], focal=[1, 2])
    problem = DesignProblem(objective="truthful", inputs=("y", "n"), epsilon=1.0)
    released, certificate = cert.certify(mech, problem)
    assert certificate.repaired and certificate.reference == "row average" and certificate.violation > 0
    assert cert.passes(released, 1.0, SHAFER)
    t = certificate.mix_weight
    assert not cert.passes(cert.mix(mech, dict(cert.default_references(problem, mech))["row average"], t / 2),
                           1.0, SHAFER)
    assert certificate.describe() == "1-private (Shafer loss), checked exactly (rational arithmetic)"
    text = certificate.repair
    assert certificate.repair_visible and text.startswith("the solver's answer exceeded the budget by ")
    assert f"so {t:.2g} of the row average (private with room to spare) was mixed in" in text
    budget = math.log(3) * 1.01
    same, plain = cert.certify(_binary_full(0.5, 0.25, 0.25), DesignProblem(objective="truthful",
                                                                            inputs=("yes", "no"), epsilon=budget,
                                                                            semantics="both"))
    assert not plain.repaired and plain.mix_weight == 0.0 and plain.reference == "" and plain.method == "exact"
    assert np.array_equal(same.matrix, _binary_full(0.5, 0.25, 0.25).matrix)
    assert plain.describe() == f"{budget:g}-private (Shafer and Walley losses), checked exactly (rational arithmetic)"
    assert plain.repair == "" and plain.lines() == [f"certified: {plain.describe()}"]


def test_certificate_sentence_when_only_the_exact_check_sees_the_excess():
    c = cert.Certificate(epsilon=1.0, losses=SHAFER, repaired=True, mix_weight=2.5e-9,
                         reference="design at 0.9 of the budget", violation=0.0)
    assert "exceeded the budget by less than float rounding (only the exact check sees it), so" in c.repair
    assert "2.5e-09 of the design at 0.9 of the budget" in c.repair
    assert not c.repair_visible and c.lines() == ["certified: 1-private (Shafer loss), checked exactly (rational "
                                                  "arithmetic)"]
    c = cert.Certificate(epsilon=1.0, losses=WALLEY, repaired=True, mix_weight=0.01, reference="row average",
                         violation=3e-7)
    assert "1-private (Walley loss)" in c.describe() and "by 3e-07 in floats" in c.repair
    assert c.lines()[1] == "repair: " + c.repair
    c = cert.Certificate(epsilon=2.0, losses=SHAFER, repaired=True, mix_weight=2**-24, reference="uniform row")
    assert c.repair.startswith("the table rounded from the mechanism exceeded the budget in its rounding, so 6e-08 of "
                               "the uniform row") and c.repair_visible


def _dk_mech(dk_yes: float, dk_no: float) -> Mechanism:
    return Mechanism(np.array([[0.5, 0.5 - dk_yes, dk_yes], [0.5 - dk_no, 0.5, dk_no]]), inputs=["yes", "no"],
                     frame=["yes", "no"], focal=[1, 2, 3])


def test_structure_ok_holds_a_full_mechanism_to_its_dont_know_bound():
    """dont_know_max = 0.25: a row at the bound passes, one at the next float above fails (either row)."""
    problem = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=5.0, dont_know_max=0.25)
    above = float(np.nextafter(0.25, 1.0))
    assert cert.structure_ok(problem, _dk_mech(0.25, 0.25))
    assert cert.structure_ok(problem, _dk_mech(0.1, 0.0))
    assert not cert.structure_ok(problem, _dk_mech(above, 0.1))
    assert not cert.structure_ok(problem, _dk_mech(0.1, above))
    exact = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=5.0, dont_know=0.25)
    assert cert.structure_ok(exact, _dk_mech(0.25, 0.25))
    assert not cert.structure_ok(exact, _dk_mech(0.25, above))


def test_the_certificate_reports_the_violation_of_the_loss_that_breaks():
    """Shafer ln 2, Walley ln 3: at eps = ln 2.5 under WLDP the answer is over by ln 3 - ln 2.5 (Walley), under
    SLDP it passes with room ln 2 - ln 2.5 < 0; the same for the compact form."""
    for make in (_binary_full, _binary_compact):
        mech = make(0.5, 0.25, 0.25)
        eps = math.log(2.5)
        assert cert.float_loss(mech, WALLEY) == pytest.approx(math.log(3), rel=1e-12)
        assert cert.float_loss(mech, SHAFER) == pytest.approx(math.log(2), rel=1e-12)
        assert cert.float_loss(mech, BOTH) == pytest.approx(math.log(3), rel=1e-12)
        problem = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=eps, semantics="sldp")
        _, certificate = cert.certify(mech, problem)
        assert not certificate.repaired and certificate.violation == pytest.approx(math.log(2) - eps, rel=1e-9)


def _grid_answer(threshold: float, steps: int) -> float:
    """What smallest_mix_weight promises, from its definition: the first decade 10^j (j >= -15) at or above the
    threshold (1 when none below 1 is), then the smallest point at or above the threshold of the grid that
    splits (decade / 10, decade] (or (0, 1]) into 2^steps equal parts."""
    decade = 10.0 ** math.ceil(math.log10(threshold))
    top = decade if decade < 1.0 else 1.0
    bottom = top / 10 if top < 1.0 else 0.0
    unit = (top - bottom) / 2**steps
    return bottom + math.ceil((threshold - bottom) / unit) * unit


@pytest.mark.parametrize("threshold", [3.3e-13, 2.71e-7, 0.0437, 0.123, 0.377, 0.5003, 0.9101])
@pytest.mark.parametrize("steps", [None, 7])
def test_smallest_mix_weight_is_the_first_grid_point_above_the_threshold(threshold, steps):
    kwargs = {} if steps is None else {"steps": steps}
    t = cert.smallest_mix_weight(lambda x: x >= threshold, **kwargs)
    assert t == pytest.approx(_grid_answer(threshold, steps or 12), rel=1e-9)


def test_bisect_threshold_default_is_twenty_halvings():
    """0.32 * 2^20 has fractional part 0.32 < 0.5, so 20 and 21 halvings end on different grid points."""
    t = cert.bisect_threshold(lambda x: x >= 0.32, bad=0.0, good=1.0)
    assert t == pytest.approx(math.ceil(0.32 * 2**20) / 2**20, rel=1e-12)


def _over_by_a_hair(dk: float) -> Mechanism:
    """Two inputs, don't-know mass ``dk``, answer ratio e (1 + 1e-9): over eps = 1 by 1e-9 nats."""
    r = math.e * (1 + 1e-9)
    c = 1.0 - dk
    p, q = c * r / (1 + r), c / (1 + r)
    return Mechanism(np.array([[p, q, dk], [q, p, dk]]), inputs=["yes", "no"], frame=["yes", "no"],
                     focal=[1, 2, 3])


@pytest.mark.parametrize("dk", [0.1, 0.2, 0.3, 0.15, 0.35, 0.7, 1 / 3, 0.123456789])
def test_a_repair_keeps_a_fixed_dont_know_mass_exactly(dk):
    problem = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0, dont_know=dk)
    released, certificate = cert.certify(_over_by_a_hair(dk), problem)
    assert certificate.repaired and certificate.method == "exact"
    assert np.all(released.matrix[:, list(map(int, released.focal)).index(3)] == dk)
    assert cert.structure_ok(problem, released) and cert.passes(released, 1.0, SHAFER)


def test_certify_counts_the_repairs_it_rejected():
    """Both default references repair the answer; an ``accept`` that refuses every repair is told how many."""
    answer = Mechanism(_over_by_a_hair(0.0).matrix[:, :2], inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])
    problem = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0)
    with pytest.raises(cert.CertificationError, match=r"every repair that restores it \(2\) costs more objective"):
        cert.certify(answer, problem, accept=lambda m: False)
    _, certificate = cert.certify(answer, problem)
    assert certificate.method == "exact"


def test_the_mix_forces_the_dont_know_column_where_floats_would_not_keep_it():
    """(1 - t) d + t d is not always d in floats: over these masses, some repair weight t makes it differ,
    and every repair still releases d exactly (the fixed column is written, not mixed)."""
    problem_of = lambda dk: DesignProblem(  # noqa: E731
        objective="truthful", inputs=("yes", "no"), epsilon=1.0, dont_know=dk)
    differs = 0
    for dk in np.linspace(0.05, 0.6, 23):
        dk = float(dk)
        released, certificate = cert.certify(_over_by_a_hair(dk), problem_of(dk))
        t = certificate.mix_weight
        differs += (1 - t) * dk + t * dk != dk
        assert np.all(released.matrix[:, list(map(int, released.focal)).index(3)] == dk)
    assert differs > 0  # the test would see a mix that lost the exact mass


def test_references_get_the_fixed_dont_know_mass_before_they_are_checked():
    """Three inputs: the references' don't-know column is an average of three equal masses, which floats do
    not always return exactly; the reference is given the exact mass before its checks, so every repair
    succeeds."""
    r = math.e * (1 + 1e-9)
    for dk in np.linspace(0.05, 0.6, 23):
        dk = float(dk)
        c = 1.0 - dk
        a, b = c * r / (r + 2), c / (r + 2)
        m = np.array([[a, b, b, dk], [b, a, b, dk], [b, b, a, dk]])
        mech = Mechanism(m, inputs=["x", "y", "z"], frame=["x", "y", "z"], focal=[1, 2, 4, 7])
        problem = DesignProblem(objective="truthful", inputs=("x", "y", "z"), epsilon=1.0, dont_know=dk)
        released, certificate = cert.certify(mech, problem)
        assert certificate.repaired and np.all(released.matrix[:, -1] == dk)


def test_no_reference_that_meets_the_structure_means_no_release():
    """Lies forbidden (lie_max = 0) and a finite budget: the truthful answer is infinitely private-breaking and
    every reference lies, so nothing is released and the message says why."""
    answer = Mechanism(np.eye(2), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])
    problem = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0, lie_max=0.0)
    with pytest.raises(cert.CertificationError,
                       match=r"and no reference mechanism meets the budget and the structure; the mechanism is not"):
        cert.certify(answer, problem)
    _, certificate = cert.certify(_binary_full(0.5, 0.25, 0.25), DesignProblem(objective="truthful",
                                                                               inputs=("yes", "no"), epsilon=2.0))
    assert certificate.repaired is False


def test_one_certificate_class_and_no_form_branches_in_certify():
    """Every released object's certificate is built by the one class (its method a constant nobody writes), and
    certify looks a candidate's form up once instead of branching on its type in each step."""
    import ast
    import pathlib

    import designer

    root = pathlib.Path(designer.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text()
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Certificate":
                assert "method" not in {kw.arg for kw in node.keywords}, path
            if isinstance(node, ast.ClassDef) and node.name == "Certificate":
                assert path.name == "certificate.py", path
            if isinstance(node, ast.Dict):  # no JSON certificate written by hand
                keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
                values = [v.value for v in node.values if isinstance(v, ast.Constant)]
                assert not ("method" in keys and "exact" in values), path
    certify_src = (root / "optimal" / "certify.py").read_text()
    assert "isinstance(" not in certify_src
    with pytest.raises(TypeError) as info:
        cert.float_loss(object(), SHAFER)  # type: ignore[arg-type]
    assert str(info.value) == "certify takes a Mechanism or a SymmetricMechanism, got object"
    full = Mechanism(np.array([[0.75, 0.25], [0.25, 0.75]]), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])
    compact = SymmetricMechanism(("yes", "no"), np.array([0.75, 0.0]), np.array([0.25, 0.0]))
    with pytest.raises(TypeError) as info:
        cert.mix(full, compact, 0.5)
    assert str(info.value) == "mix takes two mechanisms of the same form"


def test_an_exported_table_carries_the_same_certificate_shape_as_a_design():
    from designer.certificate import certificate_fields
    from designer.guarantees.exact_table import exact_table

    warner = Mechanism(np.array([[0.8, 0.2], [0.2, 0.8]]), inputs=["yes", "no"], frame=["yes", "no"],
                       focal=[1, 2])
    table = exact_table(warner, epsilon=math.log(4))
    record = table.certificate_record()
    detail = certificate_fields(table.certificate)["certificate_detail"]
    assert record["method"] == "exact" and set(detail) <= set(record)
    assert record["losses"] == ["shafer"] and record["denominators"] == [2**53, 2**53]
    assert record["sha256"] == table.sha256
    assert record["repaired"] == (table.mix_weight > 0)
    assert "checked exactly" in record["summary"]
