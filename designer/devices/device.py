"""Randomizing devices a respondent operates unseen: dice, cards, coins, spinners.

A device has ``D`` equally likely outcomes, listed in a fixed order; a mechanism run with it gives each answer
a number of outcomes, so every mass is a multiple of ``1/D``. :meth:`Device.describe` turns a set of outcome
positions into words a respondent can follow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..exceptions import DeviceError

__all__ = ["DEVICE_NAMES", "Device", "DeviceError", "parse_device"]

#: The devices by name (``coins:N``, ``spinner:D`` and ``--denominator D`` take a number).
DEVICE_NAMES = ("die", "dice2", "cards", "coins:N", "spinner:D")
#: Largest grid a device may have (the integer program has k x focal sets variables up to D each).
MAX_DENOMINATOR = 100_000

_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
_SUITS = ("spades", "hearts", "diamonds", "clubs")



def _ranges(values: list[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive integers, as (first, last)."""
    runs: list[tuple[int, int]] = []
    for v in sorted(values):
        if runs and v == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], v)
        else:
            runs.append((v, v))
    return runs


def _span(first: int, last: int, names: tuple[str, ...] | None = None) -> str:
    show = (lambda i: names[i]) if names else (lambda i: str(i + 1))
    return show(first) if first == last else f"{show(first)}-{show(last)}"


@dataclass(frozen=True)
class Device:
    """A device with ``denominator`` equally likely outcomes.

    Attributes
    ----------
    name : str
        ``die``, ``dice2``, ``cards``, ``coins:N``, ``spinner:D`` or ``grid:D``.
    denominator : int
        ``D``, the number of outcomes.

    Examples
    --------
    >>> from designer import devices
    >>> devices.parse_device("dice2"), devices.Device("die", 6).denominator
    (Device(name='dice2', denominator=36), 6)
    """

    name: str
    denominator: int

    @property
    def kind(self) -> str:
        return self.name.split(":")[0]

    def how_to(self) -> str:
        """The one sentence that starts the instructions."""
        return {
            "die": "Roll the die where nobody can see it.",
            "dice2": "Roll both dice (one red, one blue) where nobody can see them.",
            "cards": "Shuffle the deck well and draw one card without showing it.",
            "coins": f"Toss the {self.denominator.bit_length() - 1} coins one after the other, unseen, and read "
                     "them as a number: heads = 1, tails = 0, the first coin the highest digit "
                     f"(0 to {self.denominator - 1}).",
            "spinner": f"Spin the spinner (sectors 1 to {self.denominator}) unseen.",
            "grid": f"Draw a number from 1 to {self.denominator}, each equally likely, unseen.",
        }[self.kind]

    def outcome(self, position: int) -> str:
        """The outcome at ``position`` (0-based) in words."""
        if self.kind == "dice2":
            return f"red {position // 6 + 1}, blue {position % 6 + 1}"
        if self.kind == "cards":
            return f"{_RANKS[position % 13]} of {_SUITS[position // 13]}"
        if self.kind == "coins":
            return str(position)
        return str(position + 1)

    def describe(self, positions: list[int]) -> str:
        """Words for a set of outcome positions, with few cases: for two dice by sums when the positions are
        exactly some sums, otherwise by red/blue ranges; for cards by ranks (any suit) or suit ranges."""
        if not positions:
            return "never"
        if len(positions) == self.denominator:
            return "always"
        if self.kind == "dice2":
            return self._dice(positions)
        if self.kind == "cards":
            return self._cards(positions)
        label = "a number" if self.kind == "coins" else ("a roll of" if self.kind == "die" else "sector")
        first = 0 if self.kind == "coins" else 1
        parts = [f"{a + first}" if a == b else f"{a + first}-{b + first}" for a, b in _ranges(positions)]
        return f"{label} {', '.join(parts)}"

    def _dice(self, positions: list[int]) -> str:
        chosen = set(positions)
        by_sum: dict[int, set[int]] = {}
        for p in range(36):
            by_sum.setdefault(p // 6 + p % 6 + 2, set()).add(p)
        sums = [s for s, cells in by_sum.items() if cells <= chosen]
        if set().union(*(by_sum[s] for s in sums)) == chosen if sums else False:
            return "the dice add up to " + ", ".join(f"{a + 2}" if a == b else f"{a + 2}-{b + 2}"
                                                     for a, b in _ranges([s - 2 for s in sums]))
        cases: list[tuple[int, tuple[int, ...]]] = []
        for red_die in range(6):
            row = tuple(p % 6 for p in positions if p // 6 == red_die)
            if row:
                cases.append((red_die, row))
        merged: list[tuple[list[int], tuple[int, ...]]] = []
        for red_die, row in cases:  # consecutive reds with the same blues form one case
            if merged and merged[-1][1] == row and merged[-1][0][-1] == red_die - 1:
                merged[-1][0].append(red_die)
            else:
                merged.append(([red_die], row))
        words = []
        for reds, row in merged:
            red_words = _span(reds[0], reds[-1])
            blue_words = ("any blue" if len(row) == 6
                          else "blue " + ", ".join(_span(a, b) for a, b in _ranges(list(row))))
            words.append(f"red {red_words} with {blue_words}")
        return "; or ".join(words)

    def _cards(self, positions: list[int]) -> str:
        chosen = set(positions)
        ranks = [r for r in range(13) if all(s * 13 + r in chosen for s in range(4))]
        if {s * 13 + r for r in ranks for s in range(4)} == chosen:
            return "any suit, rank " + ", ".join(_span(a, b, _RANKS) for a, b in _ranges(ranks))
        words = []
        for suit in range(4):
            in_suit = [p % 13 for p in positions if p // 13 == suit]
            if len(in_suit) == 13:
                words.append(f"any {_SUITS[suit][:-1]}")
            elif in_suit:
                words.append(f"{_SUITS[suit]} " + ", ".join(_span(a, b, _RANKS) for a, b in _ranges(in_suit)))
        return "; or ".join(words)


def parse_device(text: str | None = None, denominator: int | None = None) -> Device:
    """``die``, ``dice2``, ``cards``, ``coins:N`` (N fair coins, ``D = 2**N``), ``spinner:D``, or a bare grid
    of ``denominator`` outcomes.

    Examples
    --------
    >>> from designer import devices
    >>> devices.parse_device("coins:3"), devices.parse_device(denominator=12)
    (Device(name='coins:3', denominator=8), Device(name='grid:12', denominator=12))
    """
    if text is None:
        if denominator is None:
            raise DeviceError("give a device (die, dice2, cards, coins:N, spinner:D) or a denominator")
        if not 2 <= denominator <= MAX_DENOMINATOR:
            raise DeviceError(f"the denominator must be an integer in [2, {MAX_DENOMINATOR}], got {denominator}")
        return Device(f"grid:{denominator}", denominator)
    name = text.strip().lower()
    fixed = {"die": 6, "dice2": 36, "cards": 52}
    if name in fixed:
        return Device(name, fixed[name])
    match = re.fullmatch(r"(coins|spinner):(\d+)", name)
    if match:
        value = int(match.group(2))
        d = 2**value if match.group(1) == "coins" else value
        if match.group(1) == "coins" and not 1 <= value <= 16:
            raise DeviceError(f"coins:N takes 1 to 16 coins, got {value}")
        if not 2 <= d <= MAX_DENOMINATOR:
            raise DeviceError(f"{match.group(1)}:{value} gives {d} outcomes; use 2 to {MAX_DENOMINATOR}")
        return Device(name, d)
    raise DeviceError(f"unknown device {text!r}; the devices are {', '.join(DEVICE_NAMES)}")
