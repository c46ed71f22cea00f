"""Recorded answers as the field writes them, mapped to the mechanism's columns: the one mapper every command
and function uses (``estimate``, ``regress``, ``randomize``, :func:`designer.estimation.shares.response_columns`).

An answer may be written

* as a set, the way designer writes it: ``{yes}``, ``{yes,no}`` (labels in any order, spaces ignored);
* as a bare frame label: ``yes`` means the set ``{yes}``;
* in the card's words (:func:`answer_words`): ``I don't know`` for the whole frame, ``one of: a, b`` for a
  set; the whole frame also as ``don't know``, ``dont know``, ``do not know`` or ``DK``;
* in words the design names itself: an ``[answers]`` table of the problem file (``"Weiss nicht" = ["yes",
  "no"]``), carried into the mechanism's JSON file (key ``answers``).

Words are matched without regard to case, surrounding or repeated spaces, or a typographic apostrophe,
unless two columns would then read alike (then only the exact spelling counts).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.validation import parse_set
from ..exceptions import DataError, InvalidArgumentError
from ..mechanism import Mechanism

__all__ = ["DONT_KNOW_WORDS", "MISSING_CELLS", "AnswerVocabulary", "absent_rows", "answer_codes", "answer_words",
           "answer_words_of", "describe_unknown", "fold_word"]

#: Cells that mean "no answer" in an answers file (empty, R's NA, spreadsheet and database spellings).
MISSING_CELLS = ("", "NA", "N/A", "NaN", "nan", "NULL", "null", "#N/A")

#: Words for the whole frame (the "don't know" answer), besides the card's "I don't know".
DONT_KNOW_WORDS = ("don't know", "dont know", "do not know", "dk")


def answer_words(members: Sequence[str], frame: Sequence[str]) -> str:
    """What a respondent says for the set ``members``: the label itself, "I don't know" for the whole frame,
    or "one of: a, b" (the words printed on a device's card).

    Examples
    --------
    >>> from designer.estimation.answers import answer_words
    >>> answer_words(("yes",), ("yes", "no")), answer_words(("yes", "no"), ("yes", "no"))
    ('yes', "I don't know")
    >>> answer_words(("yes", "no"), ("yes", "no", "maybe"))
    'one of: yes, no'
    """
    if len(members) == 1:
        return members[0]
    if len(members) == len(frame):
        return "I don't know"
    return "one of: " + ", ".join(members)


def fold_word(text: str) -> str:
    """The loose form of a word: case-folded, typographic apostrophes plain, spaces collapsed.

    Examples
    --------
    >>> from designer.estimation.answers import fold_word
    >>> fold_word("  Don\u2019t   KNOW ")
    "don't know"
    """
    return re.sub(r"\s+", " ", str(text).replace("\u2019", "'").replace("\u2018", "'")).strip().casefold()


class AnswerVocabulary:
    """How recorded answers name the columns of ``mechanism`` (see the module docstring).

    Parameters
    ----------
    mechanism : Mechanism
    words : mapping of str to sequence of str, optional
        Extra words, each for one focal set given by its frame labels (an ``[answers]`` table).
    precise : bool
        Answers are frame labels (WLDP: precise answers); codes are frame indices, ``(l,)``, instead of columns.

    Examples
    --------
    The columns of ``Q_2x3(0.6, 0.2)`` (``{yes}``, ``{no}``, ``{yes,no}``) named by the sets, the bare labels, the
    card's words and a survey's own word for "don't know" (-1: not an answer):

    >>> import designer
    >>> from designer.estimation.answers import AnswerVocabulary
    >>> words = AnswerVocabulary(designer.Q_2x3(0.6, 0.2), {"Weiss nicht": ["yes", "no"]})
    >>> words.columns(["{yes}", "no", "I don't know", "weiss  NICHT", "maybe"]).tolist()
    [0, 1, 2, 2, -1]
    """

    def __init__(self, mechanism: Mechanism, words: Mapping[str, Sequence[str]] | None = None, *,
                 precise: bool = False) -> None:
        self.mechanism = mechanism
        self.precise = precise
        frame = mechanism.frame
        sets: list[tuple[str, ...]] = ([(x,) for x in frame] if precise
                                       else [tuple(s) for s in mechanism.focal_sets])
        self.names = [("{" + ",".join(s) + "}") for s in sets]
        by_set = {frozenset(s): j for j, s in enumerate(sets)}
        exact: dict[str, int] = {}
        loose: dict[str, set[int]] = {}

        def add(word: str, j: int) -> None:
            exact.setdefault(word.strip(), j)
            loose.setdefault(fold_word(word), set()).add(j)

        for j, s in enumerate(sets):
            add(self.names[j], j)
            add(answer_words(s, frame), j)
            if len(s) == 1:
                add(s[0], j)
            if len(s) == len(frame) and len(frame) > 1:
                for word in DONT_KNOW_WORDS:
                    add(word, j)
        for word, labels in (words or {}).items():
            j = by_set.get(frozenset(labels), -1)
            if j < 0:
                raise InvalidArgumentError(f"answer word {word!r}: {{{','.join(labels)}}} is not an answer of the "
                                           f"mechanism ({', '.join(self.names)})")
            if word.strip() in exact and exact[word.strip()] != j:
                raise InvalidArgumentError(f"answer word {word!r} already means {self.names[exact[word.strip()]]}")
            exact[word.strip()] = j
            loose.setdefault(fold_word(word), set()).add(j)
        self._exact = exact
        self._loose = {w: next(iter(js)) for w, js in loose.items() if len(js) == 1}
        self._by_set = by_set

    def column(self, text: Any) -> int:
        """The column (frame index when ``precise``) of one written answer, or ``-1``."""
        s = str(text).strip()
        j = self._exact.get(s)
        if j is not None:
            return j
        j = self._loose.get(fold_word(s))
        if j is not None:
            return j
        if s.startswith("{") and s.endswith("}"):
            try:
                return self._by_set.get(frozenset(parse_set(s)), -1)
            except ValueError:
                return -1
        return -1

    def columns(self, values: Iterable[Any]) -> NDArray[np.int64]:
        """Columns of many answers, shape ``(n,)``; ``-1`` marks an answer of no column. Each distinct written
        form is looked up once."""
        items = list(values) if not isinstance(values, np.ndarray) else values
        try:
            arr = np.asarray(items, dtype=object)
            text = arr.astype(str) if arr.ndim == 1 else None
        except ValueError:  # label tuples (of different lengths)
            text = None
        if text is None:  # label tuples, each written as the set {a,b}
            text = np.array(["{" + ",".join(map(str, v)) + "}" if isinstance(v, tuple | list | set | frozenset)
                             else str(v) for v in items], dtype=str)
        if text.size == 0:
            return np.zeros(0, dtype=np.int64)
        unique, inverse = np.unique(text, return_inverse=True)
        mapped = np.array([self.column(u) for u in unique], dtype=np.int64)
        return mapped[inverse.ravel()]

    def describe(self) -> str:
        """The accepted spellings, for an error message."""
        frame = self.mechanism.frame
        forms = ", ".join(self.names)
        extra = " (or the bare label, e.g. " + repr(frame[0]) + ")"
        if not self.precise and any(len(s) == len(frame) for s in self.mechanism.focal_sets) and len(frame) > 1:
            extra += ", \"don't know\" for " + "{" + ",".join(frame) + "}"
        return forms + extra


def answer_words_of(obj: Any, source: str) -> dict[str, tuple[str, ...]]:
    """The ``answers`` object of a parsed mechanism JSON file (word -> frame labels), ``{}`` without one; read by
    :func:`designer.release.files.open_mechanism_file` with the rest of the file.

    Examples
    --------
    >>> from designer.estimation.answers import answer_words_of
    >>> answer_words_of({"answers": {"Weiss nicht": ["yes", "no"]}}, "m.json")
    {'Weiss nicht': ('yes', 'no')}
    """
    raw = obj.get("answers") if isinstance(obj, dict) else None
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, list) and all(isinstance(x, str) for x in v)
                                            for v in raw.values()):
        raise InvalidArgumentError(f"{source}: key 'answers' must map each word to a list of frame labels, "
                                   "e.g. {\"Weiss nicht\": [\"yes\", \"no\"]}")
    return {str(k): tuple(v) for k, v in raw.items()}


def describe_unknown(values: Any, codes: NDArray[np.int64], vocabulary: AnswerVocabulary) -> tuple[int, str]:
    """``(position, message)`` of the first answer of no column (position 0-based in ``values``).

    Examples
    --------
    >>> import designer
    >>> from designer.estimation.answers import AnswerVocabulary, describe_unknown
    >>> words = AnswerVocabulary(designer.Q_2x3(0.6, 0.2))
    >>> values = ["{yes}", "no", "maybe"]
    >>> position, message = describe_unknown(values, words.columns(values), words)
    >>> position, message.split(":")[0]
    (2, "'maybe' is not an answer of the mechanism")
    """
    bad = np.flatnonzero(codes < 0)
    pos = int(bad[0])
    value = values.iloc[pos] if hasattr(values, "iloc") else values[pos]  # a tuple of labels stays one value
    what = "a label of the frame (WLDP answers are precise)" if vocabulary.precise else "an answer of the mechanism"
    shown = repr(str(value)) if isinstance(value, str) else repr(value)  # np.str_ as plain text
    split = isinstance(value, str) and value.count("{") != value.count("}")
    hint = "; in a CSV file a set answer with a comma needs quotes: \"{a,b}\"" if split else ""
    return pos, (f"{shown} is not {what}: write {vocabulary.describe()}; {bad.size} such row(s){hint}")


def absent_rows(path: str, line: int, chunk: Mapping[str, Any], names: list[str], answers: str, missing: str, *,
                unit: str = "line") -> NDArray[np.bool_]:
    """The rows of a chunk (its first at ``line``) without a value in one of ``names``; with ``missing="error"``
    the first such row is an error naming the file (``path``), its line (``unit`` the word for it: ``row`` for a
    data frame's rows) and its column (an answer, or a value).

    Examples
    --------
    Three answers, one of them empty (left out with ``missing="drop"``):

    >>> import numpy as np
    >>> from designer.estimation.answers import absent_rows
    >>> chunk = {"response": np.array(["{yes}", "", "{no}"], dtype=object)}
    >>> absent_rows("answers.csv", 2, chunk, ["response"], "response", "drop").tolist()
    [False, True, False]
    >>> absent_rows("answers.csv", 2, chunk, ["response"], "response", "error")
    Traceback (most recent call last):
    ...
    designer.exceptions.DataError: answers.csv: line 3: no answer in column 'response' (1 such row(s) in this part ...
    """
    absent = np.zeros(len(chunk[names[0]]), dtype=bool)
    for name in names:
        gap = np.isin(np.asarray(chunk[name], dtype=object), MISSING_CELLS)
        if gap.any() and missing == "error":
            what = "answer" if name == answers else "value"
            raise DataError(f"{path}: {unit} {line + int(np.flatnonzero(gap)[0])}: no {what} in column "
                            f"{name!r} ({int(gap.sum())} such row(s) in this part of the file); fill them in, or "
                            "drop them (--missing drop)")
        absent |= gap
    return absent


def answer_codes(path: str, values: Any, first_line: int, vocabulary: Any, skip: Any = None, *, unit: str = "line"
                 ) -> NDArray[np.int64]:
    """Columns of recorded answers by :class:`AnswerVocabulary`, the ``skip`` positions left out; an unknown answer
    is one error line naming the file and its line (``first_line`` is the file line of
    ``values[0]``; ``unit`` the word for it: ``row`` for a data frame's rows).

    Examples
    --------
    >>> import designer
    >>> from designer.estimation.answers import AnswerVocabulary, answer_codes
    >>> words = AnswerVocabulary(designer.Q_2x3(0.6, 0.2))
    >>> answer_codes("answers.csv", ["{yes}", "no", "I don't know"], 2, words).tolist()
    [0, 1, 2]
    >>> answer_codes("answers.csv", ["{yes}", "maybe"], 2, words)
    Traceback (most recent call last):
    ...
    designer.exceptions.DataError: answers.csv: line 3: 'maybe' is not an answer of the mechanism: ...
    """
    values = np.asarray(values, dtype=object)
    codes = vocabulary.columns(values)
    if skip is not None:
        codes[np.asarray(skip, dtype=bool)] = 0
    if np.any(codes < 0):
        pos, message = describe_unknown(values, codes, vocabulary)
        raise DataError(f"{path}: {unit} {first_line + pos}: {message}")
    return np.asarray(codes if skip is None else codes[~np.asarray(skip, dtype=bool)], dtype=np.int64)
