"""Estimation of shares, fits and survey designs from set-valued answers."""
