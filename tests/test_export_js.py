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
from designer.exports import export_js, randomizer_for

NODE = shutil.which("node") or shutil.which("nodejs")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed (.ci/run installs it from Debian)")

RUNNER = """
import { pathToFileURL } from "node:url";
const mod = await import(pathToFileURL(process.argv[2]).href);
const cases = JSON.parse(process.argv[3]);
const draws = Number(process.argv[4]);
const out = { injected: cases.map(([x, w]) => mod.sample(x, [w])), draws: {}, errors: [] };
for (const x of mod.inputs) {
  const tally = Object.fromEntries(mod.answers.map((a) => [a, 0]));
  for (let i = 0; i < draws; i++) tally[mod.sample(x)] += 1;
  out.draws[x] = tally;
}
for (const bad of [["nobody", [0]], [mod.inputs[0], [-1]], [mod.inputs[0], [2 ** 32]], [mod.inputs[0], [0.5]]]) {
  try { mod.sample(bad[0], bad[1]); out.errors.push(null); } catch (e) { out.errors.push(e.name); }
}
out.meta = { denominator: mod.denominator, sha256: mod.certificate.sha256, answers: mod.answers };
console.log(JSON.stringify(out));
"""


def _five():
    five = tuple(f"o{i}" for i in range(5))
    return design(DesignProblem(inputs=five, epsilon=1.5, objective="chi2", dont_know_max=0.2)).mechanism


def _exp(eps: float) -> Fraction:
    with localcontext() as ctx:
        ctx.prec = 60
        return Fraction(Decimal(eps).exp()) * (1 + Fraction(1, 10**50))


@pytest.mark.parametrize("case", ["q2x3-sldp", "q2x3-wldp", "five-options"])
def test_the_module_draws_exactly_from_the_certified_table(tmp_path, case):
    mech, semantics = {"q2x3-sldp": (Q_2x3(0.6, 0.2), "sldp"), "q2x3-wldp": (Q_2x3(0.6, 0.2), "wldp"),
                       "five-options": (_five(), "sldp")}[case]
    randomizer = randomizer_for(mech, semantics=semantics, allocation=0.5)
    table = randomizer.table
    bound = _exp(table.epsilon)
    k = table.counts.shape[0]
    assert all(int(table.counts[x, j]) <= bound * int(table.counts[y, j]) for x in range(k) for y in range(k)
               if x != y for j in range(table.counts.shape[1]))
    module = tmp_path / "randomizer.mjs"
    module.write_text(export_js(randomizer))
    assert len(module.read_bytes()) < 8000
    cases, expected = [], []
    for x, label in enumerate(table.inputs):
        cum = np.cumsum(table.counts[x])
        for j in np.flatnonzero(table.counts[x]):
            low = 0 if j == 0 else int(cum[j - 1])
            for w in (low, int(cum[j]) - 1):
                cases.append([label, w])
                expected.append(randomizer.answers[j])
    script = tmp_path / "run.mjs"
    script.write_text(RUNNER)
    draws = 40_000
    proc = subprocess.run([NODE, str(script), str(module), json.dumps(cases), str(draws)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["injected"] == expected
    assert out["errors"] == ["RangeError"] * 4
    assert out["meta"] == {"denominator": 2**32, "sha256": table.sha256, "answers": list(randomizer.answers)}
    for x, label in enumerate(table.inputs):
        observed = np.array([out["draws"][label][a] for a in randomizer.answers])
        keep = table.counts[x] > 0
        assert observed[~keep].sum() == 0
        expected_counts = table.counts[x][keep] / 2**32 * draws
        assert chisquare(observed[keep], expected_counts).pvalue > 1e-6


def test_export_cli(tmp_path, capsys):
    out = tmp_path / "q.js"
    assert main(["export", "examples/mechanisms/q2x3.csv", "--to", "js", "--out", str(out), "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["sha256"] in out.read_text() and summary["answers"] == ["{yes}", "{no}", "{yes,no}"]
    assert main(["export", "examples/mechanisms/q2x3.csv", "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["export", "problems/gwrr-dont-know.toml", "--out", str(tmp_path / "g.js")]) == 0
    assert "certified within eps = 1" in capsys.readouterr().out
