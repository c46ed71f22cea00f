"""The exported ES module, run in Node: injected words give exactly the answers the certified table assigns (every
boundary of every cumulative count), the platform's CSPRNG draws fit the table (chi-square), and bad calls throw.
The table itself is checked against the budget with Fractions of the counts (not designer's checker)."""

from __future__ import annotations

import json
import shutil
import subprocess
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

from designer import DesignProblem, design
from designer.cli import main
from designer.constructors import Q_2x3
from designer.release.exports import export_js, randomizer_for

NODE = shutil.which("node") or shutil.which("nodejs")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed (.ci/run installs it from Debian)")

RUNNER = """
import { pathToFileURL } from "node:url";
const mod = await import(pathToFileURL(process.argv[2]).href);
const cases = JSON.parse(process.argv[3]);
const draws = Number(process.argv[4]);
const out = { injected: cases.map(([x, words]) => mod.sample(x, words)), draws: {}, errors: [] };
for (const x of mod.inputs) {
  const tally = Object.fromEntries(mod.answers.map((a) => [a, 0]));
  for (let i = 0; i < draws; i++) tally[mod.sample(x)] += 1;
  out.draws[x] = tally;
}
for (const bad of [["nobody", [0]], [mod.inputs[0], [-1]], [mod.inputs[0], [2 ** 32]], [mod.inputs[0], [0.5]],
                   [mod.inputs[0], []]]) {
  try { mod.sample(bad[0], bad[1]); out.errors.push(null); } catch (e) { out.errors.push(e.name); }
}
out.meta = { denominator: mod.denominator, sha256: mod.certificate.sha256, answers: mod.answers, words: mod.words };
console.log(JSON.stringify(out));
"""


def _five():
    five = tuple(f"o{i}" for i in range(5))
    return design(DesignProblem(inputs=five, epsilon=1.5, objective="chi2", dont_know_max=0.2)).mechanism


def _die():
    from designer.devices import grid_design, parse_device

    problem = DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="chi2", dont_know_max=0.3)
    return grid_design(problem, parse_device("die")).mechanism


def _exp(eps: float) -> Fraction:
    with localcontext() as ctx:
        ctx.prec = 60
        return Fraction(Decimal(eps).exp()) * (1 + Fraction(1, 10**50))


@pytest.mark.parametrize("case", ["q2x3-sldp", "q2x3-wldp", "five-options", "die"])
def test_the_module_draws_exactly_from_the_certified_table(tmp_path, case):
    """A float design's table is over 2^53, read as two words W = 2^32 w1 + w2 (each of the 2^53 outcomes 2^11
    numbers long, nothing drawn again); a die design's table is over 6 in lowest terms, one word per draw: the words
    from 3 floor(2^32 / 3) on are drawn again (the test gives such words first), each third floor(2^32 / 3) long."""
    mech, semantics = {"q2x3-sldp": (Q_2x3(0.6, 0.2), "sldp"), "q2x3-wldp": (Q_2x3(0.6, 0.2), "wldp"),
                       "five-options": (_five(), "sldp"), "die": (_die(), "sldp")}[case]
    randomizer = randomizer_for(mech, semantics=semantics, allocation=0.5)
    table = randomizer.table
    bound = _exp(table.epsilon)
    k = table.counts.shape[0]
    assert all(int(table.counts[x, j]) <= bound * int(table.counts[y, j]) for x in range(k) for y in range(k)
               if x != y for j in range(table.counts.shape[1]))
    module = tmp_path / "randomizer.mjs"
    module.write_text(export_js(randomizer))
    assert len(module.read_bytes()) < 8000
    denominator = table.denominator  # a die's sixths in lowest terms
    assert (6 % denominator == 0 and denominator > 2) if case == "die" else denominator == 2**53
    assert table.counts.sum(axis=1).tolist() == [denominator] * k
    width = 1 if case == "die" else 2
    scale = 2 ** (32 * width) // denominator
    rejected = [w for w in (scale * denominator, 2**32 - 1) if scale * denominator <= w < 2**32]
    assert len(rejected) == (2 if case == "die" else 0)

    def words(number):
        return [number >> 32, number & 0xFFFFFFFF] if width == 2 else [number]

    cases, expected = [], []
    for x, label in enumerate(table.inputs):
        cum = [sum(int(c) for c in table.counts[x][:j + 1]) * scale for j in range(table.counts.shape[1])]
        for j in np.flatnonzero(table.counts[x]):
            low = 0 if j == 0 else int(cum[j - 1])
            for w in (low, int(cum[j]) - 1):
                cases.append([label, [*rejected, *words(w)]])
                expected.append(randomizer.answers[j])
    script = tmp_path / "run.mjs"
    script.write_text(RUNNER)
    draws = 40_000
    proc = subprocess.run([NODE, str(script), str(module), json.dumps(cases), str(draws)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["injected"] == expected
    assert out["errors"] == ["RangeError"] * 5
    assert out["meta"] == {"denominator": denominator, "sha256": table.sha256, "answers": list(randomizer.answers),
                           "words": width}
    for x, label in enumerate(table.inputs):
        observed = np.array([out["draws"][label][a] for a in randomizer.answers])
        keep = table.counts[x] > 0
        assert observed[~keep].sum() == 0
        expected_counts = table.counts[x][keep] / denominator * draws
        assert chisquare(observed[keep], expected_counts).pvalue > 1e-6


def test_a_design_is_exported_within_1e_9_of_its_objective(capsys, tmp_path):
    """Device-free designs: the exported table's objective (its counts over 2^53) is within 1e-9 (relative) of the
    design's; over 2^32 with a 2^-24 mix it cost about 1e-8."""
    for name in ("gwrr-dont-know", "survey-5-options", "survey-5-options-utility", "frequency-16"):
        out = tmp_path / f"{name}.json"
        assert main(["export", f"problems/{name}.toml", "--out", str(out), "--force", "--format", "json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["denominator"] == 2**53
        designed, drawn = summary["objective_value"], summary["table_objective_value"]
        assert abs(drawn - designed) <= 1e-9 * abs(designed), name


def test_export_cli(tmp_path, capsys):
    out = tmp_path / "q.js"
    assert main(["export", "examples/mechanisms/q2x3.csv", "--to", "js", "--out", str(out), "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["sha256"] in out.read_text() and summary["answers"] == ["{yes}", "{no}", "{yes,no}"]
    assert main(["export", "examples/mechanisms/q2x3.csv", "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["export", "problems/gwrr-dont-know.toml", "--out", str(tmp_path / "g.js")]) == 0
    assert "\ncertified: 1-private (Shafer loss), checked exactly (" in capsys.readouterr().out


def test_export_of_a_device_design_keeps_its_fractions(tmp_path, capsys):
    """A problem designed on the fly on a spinner of 10, or the file 'design --device' wrote: tenths that are the
    design's own, its objective unchanged by the export; --device with a mechanism file is refused."""
    design_file = tmp_path / "spinner.json"
    assert main(["design", "problems/gwrr-dont-know.toml", "--device", "spinner:10", "--out", str(design_file),
                 "--format", "json"]) == 0
    designed = json.loads(capsys.readouterr().out)
    for source, extra in ((str(design_file), []), ("problems/gwrr-dont-know.toml", ["--device", "spinner:10"])):
        out = tmp_path / f"m{len(extra)}.mjs"
        assert main(["export", source, *extra, "--out", str(out), "--format", "json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        d = summary["denominator"]
        assert 10 % d == 0 and d % 5 == 0 and summary["max_change"] < 1e-15
        assert f"export const denominator = {d};" in out.read_text()
        assert summary["answers"] == designed["columns"]
    assert summary["objective_value"] == summary["table_objective_value"] == pytest.approx(
        designed["objective_value"], abs=1e-12)
    for row, exact in zip(json.loads(out.read_text().split("export const counts = ")[1].split(";")[0]),
                          designed["matrix_exact"]):
        assert [Fraction(c, d) for c in row] == [Fraction(v) for v in exact]
    assert main(["export", str(design_file), "--device", "die", "--out", str(tmp_path / "no.mjs")]) == 2
    assert "--device designs a TOML problem" in capsys.readouterr().err
    page = tmp_path / "spinner.html"
    assert main(["export", "problems/gwrr-dont-know.toml", "--device", "spinner:10", "--show-device", "--to",
                 "html", "--out", str(page)]) == 0
    assert '"says": "The spinner stops at sector"' in page.read_text()
    for flags in (["--to", "js", "--device", "die"], ["--to", "html"]):
        assert main(["export", "problems/gwrr-dont-know.toml", "--show-device", *flags, "--out",
                     str(tmp_path / "no.html")]) == 2
        assert "--show-device is for --to html with --device" in capsys.readouterr().err
    assert main(["export", "problems/gwrr-dont-know.toml", "--device", "spinner:1000", "--show-device", "--to",
                 "html", "--out", str(tmp_path / "no.html")]) == 2
    assert "--show-device: the page shows devices of up to 360 outcomes" in capsys.readouterr().err
