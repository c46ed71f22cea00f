"""The loop the fuzz benchmarks share (fuzz_estimate.py, fuzz_regress.py): draw a case, check it, count what
happened, keep every broken invariant and every exception outside the checked code's documented errors."""

from __future__ import annotations

import collections
import time
import traceback
from collections.abc import Callable


def run(draw: Callable[[], tuple[object, Callable[[], str]]], fits: int, seconds: float
        ) -> tuple[int, float, collections.Counter[str], list[str]]:
    """Up to ``fits`` cases or ``seconds``: ``draw()`` gives a case's label and its check, which returns what
    happened or raises (AssertionError: an invariant broke). Returns the count run, the time, the outcomes and
    the failures."""
    outcomes: collections.Counter[str] = collections.Counter()
    broken: list[str] = []
    start = time.perf_counter()
    done = 0
    while done < fits:
        done += 1
        case, check = draw()
        try:
            outcomes[check()] += 1
        except AssertionError as error:
            broken.append(f"{case}: invariant {error!r}")
        except Exception:  # what the run counts: anything outside the documented errors
            broken.append(f"{case}: exception {traceback.format_exc(limit=3)}")
        if time.perf_counter() - start > seconds:
            break
    return done, time.perf_counter() - start, outcomes, broken
