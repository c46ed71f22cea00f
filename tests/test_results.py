"""The results base (designer.results): statuses as one enum, the three output formats from one object."""

import json
from dataclasses import dataclass, field

import numpy as np
import pytest

from designer.exceptions import DesignerError
from designer.results import FitStatus, Result, check_level, render


@dataclass(frozen=True)
class Toy(Result):
    shares: tuple[float, ...]
    status: FitStatus = FitStatus.CONVERGED
    warnings: tuple[str, ...] = field(default_factory=tuple)
    title = "Toy shares"

    def __post_init__(self) -> None:
        self._check_status()

    def to_dict(self) -> dict:
        return {"shares": list(self.shares), "status": self.status, "warnings": list(self.warnings)}

    def table(self):
        return ["input", "share", "status"], [[f"x{i}", s, self.status] for i, s in enumerate(self.shares)]


def test_a_status_given_as_a_word_becomes_the_enum_and_a_wrong_word_is_refused():
    toy = Toy((0.25, 0.75), status="separation", warnings=["w"])
    assert toy.status is FitStatus.SEPARATION and toy.status == "separation" and toy.warnings == ("w",)
    with pytest.raises(DesignerError, match="not one of converged"):
        Toy((0.5,), status="fine")


def test_the_three_formats_come_from_one_object():
    toy = Toy((0.25, 1 / 3), warnings=("small sample",))
    assert json.loads(render(toy, "json")) == {"shares": [0.25, 1 / 3], "status": "converged",
                                               "warnings": ["small sample"]}
    csv_lines = render(toy, "csv").splitlines()
    assert csv_lines[0] == "input,share,status" and csv_lines[2] == f"x1,{1 / 3!r},converged"
    text = render(toy, "table")
    assert text.splitlines()[0] == "Toy shares (status: converged)" and "0.333333" in text
    assert text.splitlines()[-1] == "warning: small sample"
    frame = toy.to_frame()
    assert list(frame.columns) == ["input", "share", "status"] and np.allclose(frame["share"], [0.25, 1 / 3])
    with pytest.raises(DesignerError, match="format must be"):
        render(toy, "xml")


def test_a_result_without_intervals_says_so_and_levels_are_checked():
    with pytest.raises(DesignerError, match="no confidence intervals"):
        Toy((0.5,)).conf_int()
    assert check_level(0.9) == 0.9
    for bad in (0, 1, 1.5, "x", None):
        with pytest.raises(DesignerError, match="level must be"):
            check_level(bad)


def test_every_status_is_a_distinct_word():
    words = [s.value for s in FitStatus]
    assert len(set(words)) == len(words)
    assert {"converged", "separation", "not_converged", "not_identified"} <= set(words)
