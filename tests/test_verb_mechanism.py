"""The front doors of ``designer audit``, ``tradeoff`` and ``credal`` (designer/verbs/audit_verb.py,
tradeoff_verb.py, credal_verb.py) give the commands' outputs, from a file or a Mechanism, and Warner's closed forms."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from designer.cli import main
from designer.exceptions import InvalidArgumentError, InvalidArgumentTypeError
from designer.mechanism import Mechanism
from designer.results import FitStatus, Result, render
from designer.verbs.audit_verb import audit
from designer.verbs.credal_verb import credal
from designer.verbs.tradeoff_verb import tradeoff

ROOT = Path(__file__).resolve().parents[1]
Q2X3 = str(ROOT / "examples" / "mechanisms" / "q2x3.csv")
P = math.e / (1 + math.e)  # Warner at eps = 1 (Ex 3.7)
WARNER = Mechanism([[P, 1 - P], [1 - P, P]], inputs=("yes", "no"), frame=("yes", "no"), focal=[1, 2])


def cli(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out.rstrip("\n")


@pytest.mark.parametrize("verb, command, keywords, flags", [
    (audit, "audit", {}, []),
    (tradeoff, "tradeoff", {}, []),
    (tradeoff, "tradeoff", {"null": "no", "alt": "yes", "kind": "shafer_upper", "points": 5, "fold": 2},
     ["--null", "no", "--alt", "yes", "--kind", "shafer_upper", "--points", "5", "--fold", "2"]),
    (credal, "credal", {}, []),
    (credal, "credal", {"gamble": "yes=1,no=0"}, ["--gamble", "yes=1,no=0"]),
])
def test_every_format_is_the_commands(capsys, verb, command, keywords, flags):
    for source in (Q2X3, Path(Q2X3)):
        result = verb(source, **keywords)
        assert isinstance(result, Result) and result.status is FitStatus.EXACT and result.warnings == ()
        assert json.loads(render(result, "json")) == json.loads(cli(capsys, command, Q2X3, *flags, "--format",
                                                                    "json"))
        assert render(result, "csv") == cli(capsys, command, Q2X3, *flags, "--format", "csv")
        if verb is not audit:  # the audit's first line names the file as given
            assert result.summary() == cli(capsys, command, Q2X3, *flags)
    assert audit(Q2X3).summary() == cli(capsys, "audit", Q2X3)


def test_warners_closed_forms():
    """Warner at eps = 1: every loss is 1 (Def 3.1, 3.13), the test of yes against no has beta = 1 - e alpha up to
    alpha = 1 - p (Thm 3.5: the curve is its bound), and a row's credal set is the point p."""
    report = audit(WARNER).to_dict()
    assert all(report[f"eps_{n}"] == pytest.approx(1.0, abs=1e-12) for n in ("shafer", "walley", "bel", "pl"))
    assert report["release"] is None
    curve = tradeoff(WARNER, null="yes", alt="no", alpha=0.1, kind="shafer_lower")
    alpha, beta, power, bound = curve.rows[0]
    assert alpha == 0.1
    assert beta == pytest.approx(1 - math.e * 0.1, abs=1e-12) == bound and power == pytest.approx(1 - beta)
    assert curve.to_dict()["eps_bound"] == pytest.approx(1.0)
    sets = credal(WARNER, gamble={"yes": 1.0, "no": 0.0})
    assert sets.lower == pytest.approx((P, 1 - P)) and sets.upper == pytest.approx((P, 1 - P))
    assert sets.bel[0].tolist() == pytest.approx([P, 1 - P, 1.0])  # events {yes}, {no}, {yes,no}
    assert sets.table()[0] == ["input", "lower_expectation", "upper_expectation"]
    assert credal(WARNER).table()[0] == ["input", "event", "bel", "pl"]


def test_bad_input_is_one_clear_error(tmp_path):
    for verb in (audit, tradeoff, credal):
        with pytest.raises(InvalidArgumentTypeError, match="Mechanism or the path"):
            verb(3.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"^give both null and alt"):
        tradeoff(WARNER, null="yes")
    with pytest.raises(InvalidArgumentError, match="must be different"):
        tradeoff(WARNER, null="yes", alt="yes")
    with pytest.raises(InvalidArgumentError, match="kind must be one of"):
        tradeoff(WARNER, kind="sideways")
    with pytest.raises(InvalidArgumentError, match="is not a number"):
        credal(WARNER, gamble="yes=x")
    plot = tmp_path / "curve.png"
    plot.write_bytes(b"")
    with pytest.raises(InvalidArgumentError, match="already exists"):
        tradeoff(WARNER, plot=plot)
