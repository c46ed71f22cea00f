"""Mechanisms a respondent can run: optimal designs on the grid of a die, two dice, cards, coins or a spinner,
certified exactly, with instructions (``docs/theory.md`` section 11)."""

from .device import DEVICE_NAMES, Device, DeviceError, parse_device
from .grid import GridDesign, certify_counts, grid_bound, grid_design
from .instructions import Rule, answer_words, make_rules, render, verify

__all__ = ["DEVICE_NAMES", "Device", "DeviceError", "GridDesign", "Rule", "answer_words", "certify_counts",
           "grid_bound", "grid_design", "make_rules", "parse_device", "render", "verify"]
