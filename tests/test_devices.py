"""Designs on a device's grid: brute force on small grids, proven optimality and exact certificates for k-ary
problems, instructions read back from their printed words, the CLI contract and the HTML card."""

import itertools
import json
import re
import shutil
import subprocess
import sys
from decimal import Decimal, getcontext
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer.cli import main
from designer.devices import DeviceError, certify_counts, grid_design, make_rules, parse_device, render, verify
from designer.devices.program import snap_count
from designer.exceptions import InfeasibleDesignError
from designer.optimal import DesignProblem, load_problem
from designer.privacy import eps_walley

ROOT = Path(__file__).resolve().parents[1]
EPSILONS = [0.25, 0.5, 1.0, 2.0, 3.0]
getcontext().prec = 80


def _below(a: int, b: int, eps: float) -> bool:
    """a / b <= e^eps, decided with 80 digits (an independent check of the integer certificate)."""
    if a == 0:
        return True
    if b == 0:
        return False
    return Decimal(a) / Decimal(b) <= Decimal(eps).exp()


def _brute(eps, d, semantics, prior, dont_know, with_set):
    """Best truthful objective over every pair of count rows (yes: a, b, c; no: b2, a2, c2) on the grid."""
    cols = 3 if with_set else 2
    rows = [r for r in itertools.product(range(d + 1), repeat=cols) if sum(r) == d
            and (dont_know is None or not with_set or r[2] == dont_know)]
    best = -1.0
    for yes, no in itertools.product(rows, repeat=2):
        ok = True
        if semantics == "sldp":
            ok = all(_below(yes[j], no[j], eps) and _below(no[j], yes[j], eps) for j in range(cols))
        else:  # events {yes}, {no}: pl_x(E) <= e^eps bel_x'(E)
            c_yes, c_no = (yes[2], no[2]) if with_set else (0, 0)
            ok = (_below(yes[0] + c_yes, no[0], eps) and _below(no[0] + c_no, yes[0], eps)
                  and _below(yes[1] + c_yes, no[1], eps) and _below(no[1] + c_no, yes[1], eps))
        if ok:
            best = max(best, (prior * yes[0] + (1 - prior) * no[1]) / d)
    return best


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("semantics", ["sldp", "wldp"])
@pytest.mark.parametrize("case", ["warner", "gwrr", "gwrr-free"])
def test_binary_grid_designs_are_the_brute_force_optimum(eps, semantics, case):
    d, prior = 6, 0.3
    kwargs = {"focal_sets": (1, 2)} if case == "warner" else {"dont_know": 1 / 6} if case == "gwrr" else {}
    problem = DesignProblem(inputs=("yes", "no"), epsilon=eps, semantics=semantics, objective="truthful",
                            prior=np.array([prior, 1 - prior]), **kwargs)
    expected = _brute(eps, d, semantics, prior, 1 if case == "gwrr" else None, case != "warner")
    if expected < 0:  # no grid design (and no continuous one) meets the problem
        with pytest.raises(InfeasibleDesignError):
            grid_design(problem, parse_device("die"), find_within_1pct=False)
        return
    g = grid_design(problem, parse_device("die"), find_within_1pct=False)
    assert g.objective_value == pytest.approx(expected, abs=1e-12)
    assert g.objective_value <= g.continuous_objective_value + 1e-12
    certify_counts(problem, g.counts, d)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_binary_brute_force_on_a_finer_grid(eps):
    problem = DesignProblem(inputs=("yes", "no"), epsilon=eps, objective="truthful", dont_know=2 / 12)
    g = grid_design(problem, parse_device("spinner:12"), find_within_1pct=False)
    assert g.objective_value == pytest.approx(_brute(eps, 12, "sldp", 0.5, 2, True), abs=1e-12)


def _gain_problem(k, semantics, seed):
    rng = np.random.default_rng(seed)
    gain = np.zeros((k, 1 << k))
    for x in range(k):
        for m in range(1, 1 << k):
            gain[x, m] = (1.0 if m == 1 << x else 0.0) + (0.3 * rng.random() if m >> x & 1 else 0.0)
    return DesignProblem(inputs=tuple("abcde"[:k]), epsilon=1.0, semantics=semantics, objective="gain", gain=gain)


@pytest.mark.parametrize("k, device, objective, semantics", [
    (3, "dice2", "truthful", "sldp"), (3, "cards", "gain", "wldp"), (4, "dice2", "gain", "sldp"),
    (4, "cards", "truthful", "wldp"), (5, "dice2", "truthful", "sldp"), (5, "cards", "gain", "sldp")])
def test_kary_grid_designs_are_proven_optimal_and_certified(k, device, objective, semantics):
    if objective == "gain":
        problem = _gain_problem(k, semantics, seed=k)
    else:
        problem = DesignProblem(inputs=tuple("abcde"[:k]), epsilon=1.0, semantics=semantics, objective="truthful")
    g = grid_design(problem, parse_device(device), find_within_1pct=False)
    assert g.optimal
    certify_counts(problem, g.counts, g.device.denominator)
    assert np.all(g.counts.sum(axis=1) == g.device.denominator)
    assert g.objective_value <= g.continuous_objective_value + 1e-9
    # every exact mass times D is the integer count
    for row_exact, row in zip(g.matrix_exact, g.counts):
        assert [Fraction(s) * g.device.denominator for s in row_exact] == [int(c) for c in row]


def _read_rule(device, words):
    """Interpret a printed rule independently: the set of outcome positions it names."""
    if words == "always":
        return set(range(device.denominator))
    out = set()
    if device.kind == "dice2":
        if words.startswith("the dice add up to "):
            sums = set()
            for part in words.removeprefix("the dice add up to ").split(", "):
                a, _, b = part.partition("-")
                sums |= set(range(int(a), int(b or a) + 1))
            return {p for p in range(36) if p // 6 + p % 6 + 2 in sums}
        for case in words.split("; or "):
            m = re.fullmatch(r"red (\d)(?:-(\d))? with (any blue|blue (.+))", case)
            reds = range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1)
            blues = set(range(1, 7))
            if m.group(4):
                blues = set()
                for part in m.group(4).split(", "):
                    a, _, b = part.partition("-")
                    blues |= set(range(int(a), int(b or a) + 1))
            out |= {(r - 1) * 6 + b - 1 for r in reds for b in blues}
        return out
    m = re.fullmatch(r"(?:a roll of|sector|a number) (.+)", words)
    first = 0 if device.kind == "coins" else 1
    for part in m.group(1).split(", "):
        a, _, b = part.partition("-")
        out |= set(range(int(a) - first, int(b or a) - first + 1))
    return out


@pytest.mark.parametrize("device", ["die", "dice2", "coins:4", "spinner:10"])
def test_printed_rules_reproduce_the_counts(device):
    problem = DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful", dont_know_max=0.3)
    dev = parse_device(device)
    g = grid_design(problem, dev, find_within_1pct=False)
    rules = make_rules(dev, g.counts, problem.inputs)
    assert verify(dev, rules, g.counts)
    text = render(dev, rules, g.focal_sets, problem.frame, "text")
    for rule, row in zip(rules, g.counts):
        block = text.split(f"If your true answer is {rule.input!r}:")[1].split("If your")[0]
        seen = set()
        for line in block.strip().splitlines():
            words = re.fullmatch(r"\s*answer .+? if (.+)  \((\d+) of \d+\)", line)
            positions = _read_rule(dev, words.group(1))
            assert len(positions) == int(words.group(2)) and not positions & seen
            seen |= positions
        assert sorted(int(n) for n in re.findall(r"\((\d+) of", block)) == sorted(int(c) for c in row if c)
        assert len(seen) == dev.denominator


def test_off_grid_dont_know_names_the_nearest_values():
    problem = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0, dont_know=0.2)
    with pytest.raises(DeviceError, match=r"7/36.*8/36"):
        grid_design(problem, parse_device("dice2"))


def test_a_symmetric_problem_says_when_its_grid_optimum_is_not_symmetric():
    problem = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0, dont_know=0.2)
    g = grid_design(problem, parse_device("spinner:10"), find_within_1pct=False)
    assert not g.symmetric and any("not symmetric" in n for n in g.notes)
    g = grid_design(DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0), parse_device("cards"),
                    find_within_1pct=False)
    assert g.symmetric and not g.notes


def test_device_parsing():
    assert parse_device("coins:3").denominator == 8 and parse_device("spinner:7").denominator == 7
    assert parse_device(None, 20).denominator == 20
    for bad in ("dice3", "coins:0", "spinner:1"):
        with pytest.raises(DeviceError):
            parse_device(bad)


def test_cli_contract(tmp_path, capsys):
    problem = tmp_path / "p.toml"
    problem.write_text('inputs = ["yes", "no"]\nepsilon = 1.0\nobjective = "truthful"\n[structure]\n'
                       'dont_know = 0.2222222222222222\n')
    code = main(["design", str(problem), "--device", "dice2", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    obj = json.loads(out)
    assert obj["denominator"] == 36 and obj["certified"] is True and obj["certificate"] == "exact"
    assert {"matrix", "objective_value", "continuous_objective_value"} <= set(obj)
    exact = [[Fraction(s) for s in row] for row in obj["matrix_exact"]]
    assert all((v * 36).denominator == 1 for row in exact for v in row)
    assert np.allclose(np.array(exact, dtype=float), obj["matrix"])
    problem.write_text('inputs = ["yes", "no"]\nepsilon = 1.0\n[structure]\ndont_know = 0.2\n')
    code = main(["design", str(problem), "--device", "dice2"])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "7/36" in err and "8/36" in err


def test_html_card_in_a_headless_browser(tmp_path, capsys):
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    card = tmp_path / "card.html"
    problem = tmp_path / "p.toml"
    problem.write_text('inputs = ["yes", "no"]\nepsilon = 1.0\n[structure]\ndont_know = 0.2222222222222222\n')
    assert main(["design", str(problem), "--device", "dice2", "--instructions", str(card)]) == 0
    capsys.readouterr()
    page = card.read_text()
    assert page.count('class="card"') == 2 and "blue 6" in page and "http" not in page
    if browser is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium); the page itself was checked")
    shot = tmp_path / "card.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1000,1100", f"--screenshot={shot}", card.as_uri()], capture_output=True,
                   timeout=120, check=False)
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)
    assert pixels.std() > 0.05


def test_an_integer_program_stops_at_its_node_limit_and_says_so():
    from scipy.optimize import Bounds, LinearConstraint

    from designer.devices.search import run_milp

    # a 40-item knapsack: its root relaxation is not integral, and branch and bound needs thousands of nodes
    rng = np.random.default_rng(1)
    w = rng.integers(10**5, 10**6, 40).astype(float)
    value = w + rng.integers(0, 1000, 40)
    cons = [LinearConstraint(w[None, :], -np.inf, w.sum() / 2)]
    short = run_milp(-value, np.ones(40), Bounds(0, 1), cons, node_limit=10)
    full = run_milp(-value, np.ones(40), Bounds(0, 1), cons)
    assert short.x is not None and not short.proven and short.nodes <= 10
    assert full.proven and full.nodes > 10
    assert value @ full.x >= value @ short.x
    # brute force would take 2^40; the proven optimum is at least every greedy fill and within the capacity
    assert w @ full.x <= w.sum() / 2 + 1e-6


def test_a_grid_design_cut_short_is_not_called_optimal():
    from designer.devices.device import Device
    from designer.devices.grid import _best

    problem = load_problem(ROOT / "problems" / "survey-5-options-utility.toml")
    cut = _best(problem, Device("grid:10", 10), None, node_limit=1)
    assert cut.counts is not None and not cut.proven and cut.nodes == 1
    assert any("not proven" in note and "1 branch-and-bound nodes" in note for note in cut.notes)
    whole = _best(problem, Device("grid:10", 10), None)
    assert whole.proven and whole.nodes > 1 and not any("not proven" in note for note in whole.notes)
    certify_counts(problem, cut.counts, 10)  # a design found before the limit is still certified


def test_the_within_1pct_search_is_bounded_by_nodes_not_by_the_clock(monkeypatch):
    import time

    from designer.devices import grid
    from designer.optimal import design

    problem = load_problem(ROOT / "problems" / "warner.toml")
    continuous = design(problem).objective_value
    # every candidate grid of Warner's design takes one node for the free and one for the symmetric program;
    # 40 outcomes (the 15th candidate) are the first within 1%: 30 nodes
    assert grid._within_1pct(problem, continuous, None, nodes=30) == 40
    assert grid._within_1pct(problem, continuous, None, nodes=28) is None
    clock = iter(range(0, 10**9, 1000))  # a machine so loaded that every look at the clock is 1,000 s later
    monkeypatch.setattr(time, "perf_counter", lambda: float(next(clock)))
    assert grid._within_1pct(problem, continuous, None) == 40


def test_a_device_grid_carries_the_same_certificate_as_every_design():
    from designer.optimal import Certificate
    from designer.vocabulary import Loss

    problem = load_problem(ROOT / "problems" / "gwrr-dont-know-wldp.toml")
    g = grid_design(problem, parse_device("spinner:10"), find_within_1pct=False)
    cert = certify_counts(problem, g.counts, 10)
    assert isinstance(cert, Certificate) and cert == g.certificate
    assert cert.losses == (Loss.WALLEY,) and cert.method == "exact"
    assert cert.repaired is False and cert.mix_weight == 0.0 and cert.reference == ""
    assert cert.arithmetic == "integer counts over 10"
    assert cert.violation == pytest.approx(eps_walley(g.mechanism) - problem.epsilon, abs=1e-12)

    def run(*extra: str) -> dict:
        argv = [sys.executable, "-m", "designer", "design", str(ROOT / "problems" / "gwrr-dont-know.toml"), *extra]
        return json.loads(subprocess.run([*argv, "--format", "json"], capture_output=True, text=True,
                                         check=True).stdout)

    device, designed = run("--device", "spinner:10"), run()
    assert set(device["certificate_detail"]) == set(designed["certificate_detail"])
    assert (device["certified"], device["certificate"]) == (designed["certified"], designed["certificate"])
    summary = device["certificate_detail"]["summary"]
    assert summary == "1-private (Shafer loss), checked exactly (integer counts over 10)"
    assert designed["certificate_detail"]["arithmetic"] == "rational arithmetic"


@settings(max_examples=200, deadline=None)
@given(d=st.sampled_from([6, 10, 16, 20, 36, 52, 100]), data=st.data())
def test_snap_count_reads_a_decimal_as_the_one_multiple_it_rounds(d, data):
    c = data.draw(st.integers(0, d))
    assert snap_count(float(Fraction(c, d)), d) == c
    written = round(c / d, data.draw(st.integers(1, 8)))
    places = -Decimal(repr(written)).as_tuple().exponent  # the decimals as written (0.5 has one)
    near = [m for m in range(d + 1) if abs(Fraction(m, d) - Fraction(repr(written))) <= Fraction(1, 2 * 10**places)]
    expected = near[0] if len(near) == 1 else None
    if abs(written * d - round(written * d)) <= 1e-9:
        expected = round(written * d)
    assert snap_count(written, d) == expected


def test_an_off_grid_dont_know_mass_gets_the_nearest_counts_and_the_devices_that_fit():
    from designer.devices.program import GridProgram

    problem = load_problem(ROOT / "problems" / "gwrr-dont-know.toml")  # dont_know = 0.2
    with pytest.raises(DeviceError) as info:
        GridProgram(problem, 36).milp_parts()
    assert str(info.value) == (
        "an exact don't-know mass of 0.2 is not a multiple of 1/36: the nearest feasible values are 7/36 (0.1944) "
        "or 8/36 (0.2222), written as such (--dont-know 7/36, or dont_know = 0.19444444444444445 in the file); "
        "or use a device whose outcomes divide it: spinner:10, spinner:20, spinner:100")
    quarter = GridProgram(problem.replace(dont_know=0.25), 6)
    assert quarter._dont_know_advice(0.25).endswith(
        "divide it: dice2, cards, spinner:20, coins:4, spinner:100")
    assert quarter._dont_know_advice(1 / 7).endswith("divide it: spinner:7")
    assert "the nearest feasible values are 1/6 (0.1667) or 2/6 (0.3333)" in quarter._dont_know_advice(0.25)


def test_snap_count_on_every_count_of_small_grids_against_brute_force():
    """Every count of grids up to 100 outcomes, rounded to 1-8 decimals: the one multiple of 1/d that rounds to
    the decimal as written, else None (brute force over every count); scientific notation is never read."""
    for d in (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 36, 52, 100):
        for c in range(d + 1):
            for digits in range(1, 9):
                written = round(c / d, digits)
                text = repr(written)
                if abs(written * d - round(written * d)) <= 1e-9:
                    expected = round(written * d)
                elif "e" in text:
                    expected = None
                else:
                    half = Fraction(1, 2 * 10 ** len(text.split(".")[1]))
                    near = [m for m in range(d + 1) if abs(Fraction(m, d) - Fraction(text)) <= half]
                    expected = near[0] if len(near) == 1 else None
                assert snap_count(written, d) == expected, (written, d)
            for tiny in ((c + 0.5) / d * 1e-5, (c + 0.25) / d * 1e-6):
                assert "e" in repr(tiny) and snap_count(tiny, d) is None


def test_the_dont_know_advice_names_every_device_that_fits_and_a_spinner_otherwise():
    from designer.devices.program import GridProgram

    problem = load_problem(ROOT / "problems" / "gwrr-dont-know.toml")
    program = GridProgram(problem.replace(dont_know=0.4), 5)
    assert program._dont_know_advice(0.5).endswith(
        "divide it: die, dice2, cards, spinner:10, spinner:20, coins:4, spinner:100")
    assert program._dont_know_advice(1 / 97).endswith("divide it: spinner:97")


@pytest.mark.parametrize("k", [2, 3, 4])
def test_the_symmetry_rows_hold_exactly_for_tables_invariant_under_every_relabelling(k):
    """Counts that depend only on a set's size and on whether it holds the input are invariant under every
    relabelling of k labels; the rows (a transposition and a k-cycle) must vanish on them and on nothing
    else: moving one count breaks them."""
    from designer.devices.program import GridProgram

    labels = [f"l{i}" for i in range(k)]
    problem = DesignProblem(inputs=tuple(labels), epsilon=1.0, objective="chi2")
    program = GridProgram(problem, 60)
    family = [int(m) for m in program.family]
    table = np.array([[10 * bin(m).count("1") + (5 if m >> x & 1 else 0) for m in family] for x in range(k)])
    rows = program.symmetry_rows().A
    assert np.all(rows @ table.ravel() == 0)
    for x in range(k):
        for j in range(len(family)):
            moved = table.copy()
            moved[x, j] += 1
            assert np.any(rows @ moved.ravel() != 0), (x, family[j])


def test_a_grid_design_keeps_inputs_that_are_not_frame_labels():
    """Inputs u0, u1 answered over the frame yes / no (a gain table): the device design's mechanism names the
    problem's inputs, and its die counts are the best for that gain (2 of 3 faces on the favoured answer at
    eps = 1: 4/6 over 2/6 is 2 < e, 5/6 over 1/6 is 5 > e)."""
    problem = DesignProblem(inputs=("u0", "u1"), frame=("yes", "no"), epsilon=1.0, objective="gain",
                            gain=np.array([[0.0, 1.0, 0.0, 0.5], [0.0, 0.0, 1.0, 0.5]]))
    g = grid_design(problem, parse_device("die"), find_within_1pct=False)
    assert g.mechanism.inputs == ("u0", "u1") and g.mechanism.frame == ("yes", "no")
    assert np.allclose(g.mechanism.matrix, [[4 / 6, 2 / 6], [2 / 6, 4 / 6]], atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(k=st.integers(2, 4), d=st.sampled_from([6, 10, 52]), seed=st.integers(0, 10**6),
       objective=st.sampled_from(["variance", "max_variance"]), dont_know=st.booleans())
def test_the_climbs_variance_of_counts_is_the_mechanisms(k, d, seed, objective, dont_know):
    """The grid search climbs an SLDP variance objective on the count matrix alone (the problem's pieces computed
    once, no Mechanism built per trial): the same number objective_value gives the grid design's Mechanism, at any
    counts a climb may meet (identified or not: inf where a share is lost)."""
    from designer.devices.program import GridProgram, grid_mechanism
    from designer.optimal.objectives import objective_value
    from designer.optimal.share_variance import pieces, scenario_values

    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.ones(k))
    prior = np.maximum(prior, 0.01) / np.maximum(prior, 0.01).sum()
    problem = DesignProblem(inputs=[f"x{i}" for i in range(k)], epsilon=1.0, prior=prior, objective=objective,
                            dont_know_max=0.5 if dont_know else None)
    program = GridProgram(problem, d)
    parts = pieces(problem)
    for _ in range(5):
        counts = np.array([rng.multinomial(d, rng.dirichlet(np.full(program.f, 0.3))) for _ in range(k)])
        fast = float(np.max(scenario_values(problem, counts / d, parts=parts)))
        slow = objective_value(problem, grid_mechanism(problem, program, counts))
        assert fast == pytest.approx(slow, rel=1e-12) or (np.isinf(fast) and np.isinf(slow))
