"""The order a release's rows are written in: a uniformly random permutation, drawn from the operating system's
CSPRNG or, in a seeded simulation, from the seed (docs/theory.md section 7.8).

A permutation is the order of ``n`` independent uniform 64-bit keys, drawn again whenever two keys are equal: the
keys are exchangeable, so given that they are distinct every order is equally likely, exactly. Data larger than
memory is shuffled in two passes: each row goes to one of ``B`` buckets (``B`` a power of two, each bucket the top
bits of a uniform key, so exactly uniform), each bucket is then permuted uniformly, and the buckets are written one
after the other. The bucket labels are independent and identically distributed, so given the buckets' sizes every
assignment of rows to positions is equally likely: the result is a uniform permutation of all the rows.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

#: The spawn key of the shuffle's stream in a seeded simulation (the answers are drawn from the seed itself).
SHUFFLE_KEY = 0x73687566  # "shuf"


class KeySource(Protocol):
    name: str

    def uint64(self, n: int) -> NDArray[np.uint64]: ...


class WordKeys:
    """Uniform 64-bit keys, each two 32-bit words of a random source of the draws
    (:class:`~designer.guarantees.exact_table.OsRandom` or :class:`~designer.guarantees.exact_table.SeededRandom`)."""

    def __init__(self, words: Any) -> None:
        self.words, self.name = words, words.name

    def uint64(self, n: int) -> NDArray[np.uint64]:
        pairs = self.words.words(2 * n).astype(np.uint64).reshape(n, 2)
        return (pairs[:, 0] << np.uint64(32)) | pairs[:, 1]


def os_keys() -> WordKeys:
    """Uniform 64-bit keys from ``os.urandom``: nothing to replay."""
    from ..guarantees.exact_table import OsRandom

    return WordKeys(OsRandom())


def keys_for(seed: Any, *path: int) -> KeySource:
    """The key source of a release: the operating system's when ``seed`` is ``None``, else the seed's stream
    ``(SHUFFLE_KEY, *path)`` (a seed sequence's child, apart from the stream the answers are drawn from)."""
    from ..guarantees.exact_table import SeededRandom

    if seed is None:
        return os_keys()
    if isinstance(seed, np.random.SeedSequence):
        sequence = np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, SHUFFLE_KEY, *path))
    else:
        sequence = np.random.SeedSequence(seed, spawn_key=(SHUFFLE_KEY, *path))
    return WordKeys(SeededRandom(sequence))


def uniform_permutation(n: int, keys: KeySource) -> NDArray[np.int64]:
    """A uniformly random permutation of ``range(n)``: the order of ``n`` uniform 64-bit keys, all drawn again
    while two are equal (probability below ``n**2 / 2**65``; docs/theory.md section 7.8).

    Examples
    --------
    >>> from designer.release.shuffle import uniform_permutation, os_keys, keys_for
    >>> sorted(uniform_permutation(5, os_keys()).tolist())
    [0, 1, 2, 3, 4]
    >>> uniform_permutation(5, keys_for(7)).tolist() == uniform_permutation(5, keys_for(7)).tolist()
    True
    """
    if n < 2:
        return np.arange(n, dtype=np.int64)
    while True:
        k = keys.uint64(n)
        order = np.argsort(k, kind="stable")
        ordered = k[order]
        if not np.any(ordered[1:] == ordered[:-1]):
            return order.astype(np.int64)


def bucket_count(rows: int, bucket_rows: int) -> int:
    """The number of buckets (a power of two) for about ``rows`` rows, at most about ``bucket_rows`` each."""
    need = max(1, -(-max(rows, 1) // max(bucket_rows, 1)))
    return 1 << (need - 1).bit_length()


def bucket_labels(n: int, buckets: int, keys: KeySource) -> NDArray[np.int64]:
    """Each of ``n`` rows' bucket, uniform over ``range(buckets)`` (a power of two: the keys' top bits)."""
    if buckets == 1:
        return np.zeros(n, dtype=np.int64)
    bits = buckets.bit_length() - 1
    return (keys.uint64(n) >> np.uint64(64 - bits)).astype(np.int64)
