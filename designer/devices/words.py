"""The respondent's words: the fixed texts of the exported page and of the printed card in English, French and
German (or a strings file), each answer in plain words, and the privacy guarantee as a sentence.

A respondent never sees set notation (``{yes,no}``) or a budget in nats: an answer is the problem's ``[answers]``
word for its set where one is given, the label itself for one label, "I don't know" for the whole frame, and
"one of: a, b" for another set. The privacy line states what the budget means for the report (Def 3.1: for every
report, its probability under one true answer is at most ``e^eps`` times its probability under another), with
``e^eps`` rounded up, so the sentence never claims more than the certificate.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..exceptions import InvalidArgumentError

__all__ = ["LANGUAGES", "STRINGS", "plain_answer", "privacy_sentence", "read_strings", "respondent_strings"]

#: The fixed texts, per language; a strings file may override any of them (same keys).
STRINGS: dict[str, dict[str, str]] = {
    "en": {
        "how": "Choose your true answer. It stays on this device: the page draws a random report from it, and only "
               "that report is shown.",
        "how_sent": "Choose your true answer. It stays on this device: the page draws a random report from it, and "
                    "only that report is shown and sent.",
        "legend": "Your true answer", "draw": "Randomize my answer", "result": "Your random report",
        "gone": "Your true answer is no longer on this page.",
        "recorded": "Only this report is recorded, never your true answer.",
        "not_sent": "Nothing is sent from this page: give this report, not your true answer.",
        "send": "Send the report", "sent": "Sent",
        "privacy": "Your privacy: the report is drawn at random, so whatever your true answer, every report is at "
                   "most {ratio} times as likely as it would be with another true answer. Nobody who sees the "
                   "report can be sure of your true answer.",
        "dont_know": "I don't know", "one_of": "one of: {labels}", "list_separator": ", ",
        "die": "The die shows", "dice2": "The dice show", "cards": "The card drawn is", "coins": "The coins read",
        "spinner": "The spinner stops at sector", "grid": "The number drawn is",
        "card_keep": "Keep the outcome to yourself; only your answer is recorded.",
    },
    "fr": {
        "how": "Choisissez votre vraie réponse. Elle reste sur cet appareil : la page en tire une réponse au hasard, "
               "et seule cette réponse est affichée.",
        "how_sent": "Choisissez votre vraie réponse. Elle reste sur cet appareil : la page en tire une réponse au "
                    "hasard, et seule cette réponse est affichée et envoyée.",
        "legend": "Votre vraie réponse", "draw": "Tirer ma réponse au hasard", "result": "Votre réponse tirée",
        "gone": "Votre vraie réponse n'est plus sur cette page.",
        "recorded": "Seule cette réponse est enregistrée, jamais votre vraie réponse.",
        "not_sent": "Rien n'est envoyé depuis cette page : donnez cette réponse, pas votre vraie réponse.",
        "send": "Envoyer la réponse", "sent": "Envoyée",
        "privacy": "Votre vie privée : la réponse est tirée au hasard, donc quelle que soit votre vraie réponse, "
                   "chaque réponse est au plus {ratio} fois plus probable qu'avec une autre vraie réponse. Personne "
                   "ne peut être sûr de votre vraie réponse en la voyant.",
        "dont_know": "Je ne sais pas", "one_of": "l'une de : {labels}", "list_separator": ", ",
        "die": "Le dé indique", "dice2": "Les dés indiquent", "cards": "La carte tirée est",
        "coins": "Les pièces donnent", "spinner": "La roue s'arrête sur le secteur", "grid": "Le nombre tiré est",
        "card_keep": "Gardez le résultat pour vous ; seule votre réponse est enregistrée.",
    },
    "de": {
        "how": "Wählen Sie Ihre wahre Antwort. Sie bleibt auf diesem Gerät: Die Seite zieht daraus eine zufällige "
               "Antwort, und nur diese wird angezeigt.",
        "how_sent": "Wählen Sie Ihre wahre Antwort. Sie bleibt auf diesem Gerät: Die Seite zieht daraus eine "
                    "zufällige Antwort, und nur diese wird angezeigt und gesendet.",
        "legend": "Ihre wahre Antwort", "draw": "Antwort zufällig ziehen", "result": "Ihre gezogene Antwort",
        "gone": "Ihre wahre Antwort ist nicht mehr auf dieser Seite.",
        "recorded": "Nur diese Antwort wird gespeichert, nie Ihre wahre Antwort.",
        "not_sent": "Von dieser Seite wird nichts gesendet: Geben Sie diese Antwort an, nicht Ihre wahre Antwort.",
        "send": "Antwort senden", "sent": "Gesendet",
        "privacy": "Ihre Privatsphäre: Die Antwort wird zufällig gezogen. Was auch immer Ihre wahre Antwort ist, "
                   "jede Antwort ist höchstens {ratio}-mal so wahrscheinlich wie bei einer anderen wahren Antwort. "
                   "Niemand, der die Antwort sieht, kann sich Ihrer wahren Antwort sicher sein.",
        "dont_know": "Weiß nicht", "one_of": "eine von: {labels}", "list_separator": ", ",
        "die": "Der Würfel zeigt", "dice2": "Die Würfel zeigen", "cards": "Die gezogene Karte ist",
        "coins": "Die Münzen zeigen", "spinner": "Das Glücksrad hält bei Feld", "grid": "Die gezogene Zahl ist",
        "card_keep": "Behalten Sie das Ergebnis für sich; nur Ihre Antwort wird notiert.",
    },
}
#: The languages of :data:`STRINGS`.
LANGUAGES = tuple(STRINGS)
#: Texts that must keep their placeholder (a strings file that drops it is refused).
_PLACEHOLDERS = {"privacy": "{ratio}", "one_of": "{labels}"}


def respondent_strings(lang: str = "en", overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The fixed texts in ``lang`` (one of :data:`LANGUAGES`), with ``overrides`` (e.g. from
    :func:`read_strings`) replacing some of them."""
    if lang not in STRINGS:
        raise InvalidArgumentError(f"language must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    out = dict(STRINGS[lang])
    out.update(overrides or {})
    return out


def read_strings(path: str | Path) -> dict[str, str]:
    """A strings file (``.json`` or ``.toml``): an object of text keys (those of :data:`STRINGS`) to strings.
    Raises :class:`~designer.exceptions.InvalidArgumentError` with the file's name for anything else."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgumentError(f"{p}: cannot read the strings file ({exc.__class__.__name__})") from None
    try:
        if p.suffix.lower() == ".toml":
            import tomllib

            data: Any = tomllib.loads(text)
        elif p.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            raise InvalidArgumentError(f"{p}: a strings file is .json or .toml")
    except (ValueError, TypeError) as exc:  # JSONDecodeError and TOMLDecodeError are ValueErrors
        raise InvalidArgumentError(f"{p}: not valid {p.suffix.lstrip('.').upper()} ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise InvalidArgumentError(f"{p}: expected a table of text keys to strings, e.g. draw = \"Draw\"")
    unknown = sorted(set(data) - set(STRINGS["en"]))
    if unknown:
        raise InvalidArgumentError(f"{p}: unknown key {unknown[0]!r}; the keys are {', '.join(STRINGS['en'])}")
    for key, mark in _PLACEHOLDERS.items():
        if key in data and mark not in data[key]:
            raise InvalidArgumentError(f"{p}: key {key!r} must contain {mark}")
    return dict(data)


def plain_answer(members: Sequence[str], frame: Sequence[str], *, named: Mapping[frozenset[str], str] | None = None,
                 strings: Mapping[str, str] | None = None) -> str:
    """An answer set in the respondent's words: its ``[answers]`` word (``named``: set of labels -> word) when
    given, the label for one label, "I don't know" for the whole frame, "one of: a, b" otherwise (in the language
    of ``strings``, default English)."""
    texts = strings or STRINGS["en"]
    word = (named or {}).get(frozenset(members))
    if word is not None:
        return word
    if len(members) == 1:
        return str(members[0])
    if len(members) == len(frame) and set(members) == set(frame):
        return texts["dont_know"]
    return texts["one_of"].replace("{labels}", texts["list_separator"].join(members))


def privacy_sentence(epsilon: float, strings: Mapping[str, str] | None = None, *, lang: str = "en") -> str:
    """The guarantee of a table within ``epsilon`` as a sentence: every report at most ``e^eps`` times as likely
    under one true answer as under another (Def 3.1), ``e^eps`` rounded up (to a tenth below 10, to a whole number
    from 10), written with the language's decimal mark."""
    texts = strings or STRINGS[lang]
    ratio = math.exp(epsilon) if epsilon < 700 else math.inf
    if not math.isfinite(ratio):
        shown = "∞"
    elif ratio < 10:
        shown = f"{math.ceil(ratio * 10 * (1 - 1e-12)) / 10:g}"
    else:
        shown = f"{math.ceil(ratio * (1 - 1e-12)):,}"
    if lang != "en":
        shown = shown.replace(",", "\u202f").replace(".", ",")
    return texts["privacy"].replace("{ratio}", shown)
