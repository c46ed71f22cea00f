"""Shared test helpers: random mechanisms and brute-force definitions written from docs/theory.md."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from designer import Mechanism


@st.composite
def mass_matrices(draw, k_max: int = 4, l_max: int = 6, k_min: int = 2, l_min: int = 1):
    """A random dense (k, 2**l) mass matrix with exact zeros (some sets unused by some rows)."""
    k = draw(st.integers(k_min, k_max))
    l = draw(st.integers(l_min, l_max))
    n = 1 << l
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    style = draw(st.sampled_from(["dense", "sparse", "integers", "bayesian"]))
    m = rng.random((k, n))
    if style == "sparse":
        m *= rng.random((k, n)) < 0.35
    elif style == "integers":
        m = rng.integers(0, 4, size=(k, n)).astype(float)
    elif style == "bayesian":
        singletons = np.zeros(n, dtype=bool)
        singletons[[1 << i for i in range(l)]] = True
        m *= singletons
    m[:, 0] = 0.0
    for i in range(k):
        if m[i].sum() == 0:
            m[i, rng.integers(1, n)] = 1.0
    return m / m.sum(axis=1, keepdims=True)


@st.composite
def mechanisms(draw, **kwargs):
    return Mechanism(draw(mass_matrices(**kwargs)))


def brute_bel(m_row, E):
    return sum(m_row[B] for B in range(len(m_row)) if B & ~E == 0)


def brute_pl(m_row, E):
    return sum(m_row[B] for B in range(len(m_row)) if B & E)


def brute_commonality(m_row, E):
    return sum(m_row[B] for B in range(len(m_row)) if B & E == E)


def brute_loss(mass, kind):
    """The four losses by direct enumeration over ordered pairs and sets (docs/theory.md section 2)."""
    k, n = mass.shape
    f = {
        "shafer": (lambda r, E: mass[r, E], lambda r, E: mass[r, E]),
        "bel": (lambda r, E: brute_bel(mass[r], E), lambda r, E: brute_bel(mass[r], E)),
        "pl": (lambda r, E: brute_pl(mass[r], E), lambda r, E: brute_pl(mass[r], E)),
        "walley": (lambda r, E: brute_pl(mass[r], E), lambda r, E: brute_bel(mass[r], E)),
    }[kind]
    sets = range(1, n - 1) if kind == "walley" else range(1, n)
    best = 1.0
    for x in range(k):
        for x2 in range(k):
            if x == x2:
                continue
            for E in sets:
                a, b = f[0](x, E), f[1](x2, E)
                if a == 0 and b == 0:
                    continue
                if b == 0:
                    return math.inf
                best = max(best, a / b)
    return math.log(best)
