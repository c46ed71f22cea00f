"""Helpers of every layer: exact arithmetic, files, rendering, validation, solvers."""
