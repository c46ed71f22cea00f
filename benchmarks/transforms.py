"""Benchmark: bel + pl of every subset for k = 16 rows, against a per-row Python loop over subsets.

Run: ``python benchmarks/transforms.py`` (``make bench``). Prints seconds and the speed-up; the loop
reference is timed at l = 12 only (it is O(3**l) per row: hours at l = 20).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from designer.setfunctions import bel_from_mass, pl_from_mass

K = 16


def reference_bel_pl(mass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The straightforward way: for each row and each subset E, loop over its subsets / the sets meeting it."""
    k, n = mass.shape
    bel = np.zeros((k, n))
    pl = np.zeros((k, n))
    for r in range(k):
        row = mass[r]
        for E in range(n):
            # subsets of E by the standard sub-mask walk: bel(E) = sum_{B subset E} m(B)
            total, B = 0.0, E
            while True:
                total += row[B]
                if B == 0:
                    break
                B = (B - 1) & E
            bel[r, E] = total
        full = n - 1
        for E in range(n):
            pl[r, E] = bel[r, full] - bel[r, full ^ E]
    return bel, pl


def timed(func, *args, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        func(*args)
        best = min(best, time.perf_counter() - t0)
    return best


def ours(mass: np.ndarray) -> None:
    bel_from_mass(mass)
    pl_from_mass(mass)


def main() -> int:
    rng = np.random.default_rng(0)
    print(f"bel + pl of all subsets, k = {K} rows (best of 3, seconds)")
    print(f"{'l':>3} {'subsets':>10} {'ours (s)':>10} {'loop ref (s)':>13} {'ratio':>8}")
    ok = True
    for l in (12, 16, 20):
        mass = rng.random((K, 1 << l))
        mass[:, 0] = 0
        mass /= mass.sum(axis=1, keepdims=True)
        t = timed(ours, mass, repeat=3 if l < 20 else 2)
        if l == 12:
            ref = timed(reference_bel_pl, mass, repeat=1)
            b, p = reference_bel_pl(mass)
            assert np.allclose(b, bel_from_mass(mass)) and np.allclose(p, pl_from_mass(mass))
            print(f"{l:>3} {1 << l:>10} {t:>10.4f} {ref:>13.2f} {ref / t:>7.0f}x")
            ok &= ref / t >= 100
        else:
            print(f"{l:>3} {1 << l:>10} {t:>10.4f} {'-':>13} {'-':>8}")
            if l == 20:
                ok &= t < 2.0
    print("goals (l=20 under 2 s, >= 100x at l=12):", "met" if ok else "NOT met")
    butterfly_table(rng)
    return 0 if ok else 1


def butterfly(mass: np.ndarray) -> np.ndarray:
    """The plain numpy butterfly for bel: one in-place pass per element of the frame."""
    v = mass.copy()
    k, n = v.shape
    for i in range(n.bit_length() - 1):
        view = v.reshape(k, n >> (i + 1), 2, 1 << i)
        view[:, :, 1, :] += view[:, :, 0, :]
    return v


def butterfly_table(rng: np.random.Generator) -> None:
    """bel and pl each against the plain butterfly: on dense rows pl is total - bel(complement) (safe there);
    on "tiny" rows, whose only set holding y0 has mass 1e-17 (pl({y0}) = 1e-17 would cancel), pl takes the
    non-cancelling transform."""
    print(f"\nbel and pl against the plain numpy butterfly, k = {K} rows (best of 5)")
    print(f"{'l':>3} {'rows':>7} {'butterfly (s)':>14} {'bel (s)':>9} {'ratio':>6} {'pl (s)':>9} {'ratio':>6}")
    for l in (12, 16, 20):
        for kind in ("dense", "tiny"):
            mass = rng.random((K, 1 << l))
            if kind == "tiny":
                mass[:, 1::2] = 0.0  # no set holds y0 ...
                mass[:, 1] = 1e-17  # ... but {y0}, with a mass below the others' rounding
            mass[:, 0] = 0
            mass /= mass.sum(axis=1, keepdims=True)
            repeat = 5 if l < 20 else 3
            base = timed(butterfly, mass, repeat=repeat)
            b = timed(bel_from_mass, mass, repeat=repeat)
            p = timed(pl_from_mass, mass, repeat=repeat)
            print(f"{l:>3} {kind:>7} {base:>14.4f} {b:>9.4f} {b / base:>5.2f}x {p:>9.4f} {p / base:>5.2f}x")


if __name__ == "__main__":
    sys.exit(main())
