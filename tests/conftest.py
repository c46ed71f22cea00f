"""Shared test helpers: random mechanisms and brute-force definitions written from docs/theory.md."""

from __future__ import annotations

import math

import numpy as np
import pytest
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


def exact_losses_within(mech, eps: float, losses) -> bool:
    """Whether ``mech`` meets ``eps`` for each loss (``"shafer"``, ``"walley"``), decided in Fractions of its
    stored floats against a 60-digit ``Decimal`` exponential: independent of designer's certifier.

    Shafer (Def 3.1): every focal set's mass ratio between two rows. Walley (Def 3.13): the largest
    ``pl_x(E) / bel_x'(E)`` sits at a singleton ``E`` (pl is subadditive and bel superadditive over disjoint
    events; tests/optimal/test_boundary_violations.py checks this by enumeration), so the singletons decide it.
    """
    from decimal import Decimal, localcontext
    from fractions import Fraction

    with localcontext() as ctx:
        ctx.prec = 60
        bound = Decimal(eps).exp()
    rows = [[Fraction(float(v)) for v in row] for row in mech.matrix]
    focal = [int(f) for f in mech.focal]

    def within(num: Fraction, den: Fraction) -> bool:
        if num == 0:
            return True
        if den == 0:
            return False
        with localcontext() as ctx:
            ctx.prec = 60
            return Decimal(num.numerator) * Decimal(den.denominator) <= bound * Decimal(den.numerator) * Decimal(
                num.denominator)

    names = {str(getattr(loss, "value", loss)).lower() for loss in losses}
    k = len(rows)
    if "shafer" in names:
        for x in range(k):
            for y in range(k):
                if x != y and not all(within(a, b) for a, b in zip(rows[x], rows[y])):
                    return False
    if "walley" in names:
        for i in range(mech.l):
            pl = [sum((v for v, f in zip(row, focal) if f >> i & 1), Fraction(0)) for row in rows]
            single = [sum((v for v, f in zip(row, focal) if f == 1 << i), Fraction(0)) for row in rows]
            for x in range(k):
                for y in range(k):
                    if x != y and not within(pl[x], single[y]):
                        return False
    return True


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A working folder holding copies of examples/ and problems/, as the README's and the guide's commands
    expect (tests/test_api.py, tests/test_docs_commands.py)."""
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for folder in ("examples", "problems"):
        shutil.copytree(root / folder, tmp_path / folder,
                        ignore=shutil.ignore_patterns("output", "designer-ledger.json"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


_REPO = __import__("pathlib").Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _no_ledger_left_in_the_repository():
    """randomize records each release in a budget ledger beside its input (docs/guide/release.md); a test that
    randomizes one of the repository's example files would leave one there, and the next release of that file,
    in any later test, would compose with it. Each test's ledgers beside the repository's files are removed."""
    yield
    for folder in ("examples", "problems"):
        for ledger in (_REPO / folder).rglob("designer-ledger.json"):
            ledger.unlink(missing_ok=True)
