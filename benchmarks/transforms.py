"""Benchmark: bel + pl of every subset for k = 16 rows, against a per-row Python loop over subsets.

Run: ``python benchmarks/transforms.py`` (``make bench``). Prints seconds and the speed-up; the loop
reference is timed at l = 12 only (it is O(3**l) per row: hours at l = 20).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator

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
    ok &= butterfly_table(rng)
    with busy(2):
        print("\nthe same with 2 busy processes on this 2-core machine (a loaded machine)")
        ok &= butterfly_table(rng, sizes=(16, 20))
    mechanism_table(rng)
    print("\ngoals (bel and pl within 1.2x of the butterfly, idle and loaded):", "met" if ok else "NOT met")
    return 0 if ok else 1


def butterfly(mass: np.ndarray) -> np.ndarray:
    """The plain numpy butterfly for bel: one in-place pass per element of the frame."""
    v = mass.copy()
    k, n = v.shape
    for i in range(n.bit_length() - 1):
        view = v.reshape(k, n >> (i + 1), 2, 1 << i)
        view[:, :, 1, :] += view[:, :, 0, :]
    return v


@contextlib.contextmanager
def busy(count: int) -> Iterator[None]:
    """Keep ``count`` processes spinning while the block runs."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(0.5)
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def mechanism_table(rng: np.random.Generator) -> None:
    """``Mechanism.bel()`` / ``pl()`` (focal-set columns scattered into the dense table) beside the array
    functions on the dense table."""
    from designer import Mechanism

    print(f"\nMechanism.bel() / pl() against the array functions on the dense table, k = {K} (best of 5)")
    print(f"{'l':>3} {'focal':>7} {'bel_from_mass':>14} {'.bel()':>9} {'ratio':>6} {'pl_from_mass':>13} {'.pl()':>9} "
          f"{'ratio':>6}")
    for l, count in ((10, 1023), (16, 2000), (16, 65535)):
        focal = np.sort(rng.choice(np.arange(1, 1 << l), size=count, replace=False))
        m = rng.random((K, count))
        mech = Mechanism(m / m.sum(axis=1, keepdims=True), focal=focal)
        dense = mech.mass
        ab, mb = timed(bel_from_mass, dense, repeat=5), timed(mech.bel, repeat=5)
        ap, mp = timed(pl_from_mass, dense, repeat=5), timed(mech.pl, repeat=5)
        print(f"{l:>3} {count:>7} {ab:>14.5f} {mb:>9.5f} {mb / ab:>5.2f}x {ap:>13.5f} {mp:>9.5f} {mp / ap:>5.2f}x")


def butterfly_table(rng: np.random.Generator, sizes: tuple[int, ...] = (12, 16, 20)) -> bool:
    """bel and pl each against the plain butterfly: on dense rows pl is total - bel(complement) (safe there);
    on "tiny" rows, whose only set holding y0 has mass 1e-17 (pl({y0}) = 1e-17 would cancel), pl takes the
    non-cancelling transform."""
    print(f"\nbel and pl against the plain numpy butterfly, k = {K} rows (best of 5)")
    print(f"{'l':>3} {'rows':>7} {'butterfly (s)':>14} {'bel (s)':>9} {'ratio':>6} {'pl (s)':>9} {'ratio':>6}")
    ok = True
    for l in sizes:
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
            ok &= max(b, p) <= 1.2 * base
    return ok


if __name__ == "__main__":
    sys.exit(main())
