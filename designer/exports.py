"""Certified randomizers for the respondent's screen: an ES module that draws exactly from the certified integer
table with the browser's or Node's cryptographic generator (docs/theory.md section 7.5).

The module holds the table of :func:`designer.exact_table.exact_table` (counts over 2^32 per input, certified
within the budget in exact arithmetic) and one function, ``sample(input, randomWords)``: it takes one 32-bit word
from ``crypto.getRandomValues`` (or from ``randomWords``, for tests) and returns the answer whose cumulative counts
bracket it, so every answer has exactly its certified probability; no float, no modulo, no ``Math.random``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .exact_table import DENOMINATOR, ExactTable, exact_table
from .mechanism import Mechanism

__all__ = ["ExportedRandomizer", "export_js", "randomizer_for"]


@dataclass(frozen=True)
class ExportedRandomizer:
    """A table ready to export: the certified table and the answer labels the analyst will receive."""

    table: ExactTable
    answers: tuple[str, ...]


def randomizer_for(mech: Mechanism, *, epsilon: float | None = None, semantics: Any = "sldp",
                   allocation: Any = "uniform") -> ExportedRandomizer:
    """The certified table of ``mech`` for export: set answers under ``sldp`` (labels ``{yes,no}``, which
    ``designer estimate`` reads), precise answers of the credal member ``allocation`` under ``wldp``."""
    from .sampling import precise_distributions
    from .vocabulary import Semantics

    sem = Semantics.parse(semantics, "semantics")
    if sem is Semantics.WLDP:
        table = exact_table(mech, epsilon=epsilon, semantics="wldp",
                            probabilities=precise_distributions(mech, allocation), outputs=tuple(mech.frame))
    else:
        table = exact_table(mech, epsilon=epsilon, semantics=sem)
    return ExportedRandomizer(table=table, answers=table.outputs)


def export_js(randomizer: ExportedRandomizer) -> str:
    """The ES module's text (no dependency; a few KB for 16 inputs)."""
    table = randomizer.table
    certificate = {"method": "exact", "arithmetic": "integer counts over 2^32", "sha256": table.sha256,
                   "mixWeight": table.mix_weight, "maxChange": table.max_change,
                   "losses": [loss.value for loss in table.semantics.losses]}
    from . import __version__

    counts = ",\n  ".join(json.dumps([int(c) for c in row]) for row in table.counts)
    return f"""// A certified randomizer written by designer {__version__} (its docs/theory.md, section 7.5).
// Each row of `counts` sums to `denominator`; an answer's probability is its count / denominator, exactly.
// The table is within eps = {table.epsilon!r} nats ({table.semantics.value}), decided in exact arithmetic.
export const inputs = {json.dumps(list(table.inputs), ensure_ascii=False)};
export const answers = {json.dumps(list(randomizer.answers), ensure_ascii=False)};
export const denominator = {DENOMINATOR};
export const counts = [
  {counts}
];
export const epsilon = {table.epsilon!r};
export const semantics = {json.dumps(table.semantics.value)};
export const certificate = Object.freeze({json.dumps(certificate)});

function word(randomWords) {{
  if (randomWords !== undefined) {{
    const w = randomWords[0];
    if (!Number.isInteger(w) || w < 0 || w >= denominator) {{
      throw new RangeError("randomWords[0] must be an integer in [0, 2^32)");
    }}
    return w;
  }}
  const buffer = new Uint32Array(1);
  globalThis.crypto.getRandomValues(buffer); // the platform's CSPRNG
  return buffer[0];
}}

// The reported answer for a respondent whose true answer is `input`: one uniform 32-bit word, and the answer
// whose cumulative counts bracket it.
export function sample(input, randomWords) {{
  const x = inputs.indexOf(input);
  if (x < 0) {{
    throw new RangeError("unknown input " + JSON.stringify(input) + "; the inputs are " + JSON.stringify(inputs));
  }}
  const w = word(randomWords);
  const row = counts[x];
  let total = 0;
  for (let j = 0; j < row.length; j++) {{
    total += row[j];
    if (w < total) {{
      return answers[j];
    }}
  }}
  throw new Error("the table's rows must sum to the denominator");
}}
"""
