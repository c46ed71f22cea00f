"""What the respondent reads (designer.devices.words; the page of designer.release.exports, the platform snippets, the
printed card): answers in plain words, the guarantee as a sentence, "recorded" only when something is sent, the
fixed texts in English, French or German or from a strings file. The page's visible text is read from the HTML
with the scripts and styles removed (what a browser shows before and after the draw)."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal, localcontext
from html import unescape

import pytest

from designer import Mechanism
from designer.cli import main
from designer.devices.words import LANGUAGES, STRINGS, plain_answer, privacy_sentence, read_strings
from designer.exceptions import InvalidArgumentError
from designer.release.exports import export_html, randomizer_for

PROBLEM = """name = "Driving after drinking"
inputs = ["yes", "no"]
epsilon = 1.0
[structure]
dont_know = 0.3333333333333333
[answers]
"Rather not say" = ["yes", "no"]
"""


def visible(page: str) -> str:
    """The text a browser shows: tags, scripts, styles and the head removed."""
    body = page.split("<body>", 1)[1]
    body = re.sub(r"<script.*?</script>", " ", body, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", " ", body))


def data(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="table">(.*?)</script>', page, re.S).group(1))


def _three():
    """Answers {a}, {b}, {a,b} (a set that is not the whole frame) and {a,b,c}."""
    return Mechanism([[0.4, 0.1, 0.2, 0.3], [0.1, 0.4, 0.2, 0.3], [0.15, 0.15, 0.2, 0.5]], inputs=["a", "b", "c"],
                     frame=["a", "b", "c"], focal=[1, 2, 3, 7])


def test_answers_are_words_the_whole_frame_is_i_dont_know_and_a_set_is_one_of():
    assert [plain_answer(s, ("a", "b", "c")) for s in (("a",), ("a", "b"), ("a", "b", "c"))] == [
        "a", "one of: a, b", "I don't know"]
    named = {frozenset(("a", "b")): "a or b, not saying"}
    assert plain_answer(("b", "a"), ("a", "b", "c"), named=named) == "a or b, not saying"
    assert plain_answer(("a", "b", "c"), ("a", "b", "c"), strings=STRINGS["fr"]) == "Je ne sais pas"
    assert plain_answer(("a", "b"), ("a", "b", "c"), strings=STRINGS["de"]) == "eine von: a, b"
    page = export_html(randomizer_for(_three()))
    assert data(page)["words"] == ["a", "b", "one of: a, b", "I don't know"]
    assert data(page)["answers"] == ["{a}", "{b}", "{a,b}", "{a,b,c}"]  # what is sent, what estimate reads


@pytest.mark.parametrize("target", [None, "submit", "post"])
def test_the_page_shows_no_notation_no_budget_and_says_recorded_only_when_sent(target):
    extra = {"submit": {"submit_url": "https://survey.example.org/c"},
             "post": {"post_message": "https://survey.example.org"}, None: {}}[target]
    randomizer = randomizer_for(_three())
    page = export_html(randomizer, question="Which?", **extra)
    text = visible(page)
    assert "{" not in text and "}" not in text
    for word in ("eps", "nats", "sldp", "SHA", randomizer.table.sha256[:16]):
        assert word not in text, word
    assert "at most 4 times as likely" in text  # the mechanism's own loss: 0.4 / 0.1 in column {a}
    assert randomizer.table.epsilon == pytest.approx(math.log(4), rel=1e-15)
    if target is None:
        assert "recorded" not in text and "Nothing is sent from this page" in text and "shown and sent" not in text
    else:
        assert "Only this report is recorded" in text and "Nothing is sent" not in text and "shown and sent" in text
    assert data(page)["sha256"] == randomizer.table.sha256 and data(page)["epsilon"] == randomizer.table.epsilon


@pytest.mark.parametrize("eps", [0.01, 0.5, 1.0, math.log(2), math.log(3), 2.0, 2.302585092994046, 3.0, 7.5, 20.0])
def test_the_privacy_sentence_never_claims_more_than_e_to_the_eps(eps):
    with localcontext() as ctx:
        ctx.prec = 50
        bound = Decimal(eps).exp()
    for lang in LANGUAGES:
        sentence = privacy_sentence(eps, lang=lang)
        number = re.search(r"(\d[\d\u202f,.]*)", sentence).group(1).rstrip(".,")
        plain = number.replace(",", "") if lang == "en" else number.replace("\u202f", "").replace(",", ".")
        value = Decimal(plain)
        assert value >= bound * (1 - Decimal("1e-12")), (lang, sentence)
        assert value - bound < (Decimal("0.1") if bound < 10 else Decimal(1)), (lang, sentence)
        if lang != "en" and value != value.to_integral():
            assert "," in number and "." not in number  # the decimal comma


def test_problem_answers_words_reach_the_page_from_the_toml_and_the_design_file(tmp_path, capsys):
    problem = tmp_path / "dk.toml"
    problem.write_text(PROBLEM)
    pages = []
    design = tmp_path / "dk.json"
    assert main(["design", str(problem), "--out", str(design)]) == 0
    for source in (problem, design):
        out = tmp_path / f"{source.suffix[1:]}.html"
        assert main(["export", str(source), "--to", "html", "--out", str(out)]) == 0
        pages.append(out.read_text())
    capsys.readouterr()
    for page in pages:
        assert data(page)["words"][-1] == "Rather not say" and data(page)["answers"][-1] == "{yes,no}"
        assert "I don't know" not in page


@pytest.mark.parametrize("lang, button, dont_know, ratio", [("fr", "Tirer ma réponse au hasard", "Je ne sais pas",
                                                            "2,8"),
                                                           ("de", "Antwort zufällig ziehen", "Weiß nicht", "2,8"),
                                                           ("en", "Randomize my answer", "I don't know", "2.8")])
def test_lang_gives_the_fixed_texts_in_that_language(tmp_path, capsys, lang, button, dont_know, ratio):
    out = tmp_path / "p.html"
    assert main(["export", "problems/gwrr-dont-know.toml", "--to", "html", "--lang", lang, "--out", str(out)]) == 0
    capsys.readouterr()
    page = out.read_text()
    assert f'<html lang="{lang}">' in page and button in visible(page) and ratio in visible(page)
    assert data(page)["words"] == ["yes", "no", dont_know]
    shown = {k: v for k, v in STRINGS[lang].items() if k in ("how", "legend", "result", "gone", "not_sent")}
    assert all(unescape(v) in visible(page) for v in shown.values())
    snippet = tmp_path / "q.md"
    assert main(["export", "problems/gwrr-dont-know.toml", "--to", "qualtrics", "--lang", lang, "--out",
                 str(snippet)]) == 0
    capsys.readouterr()
    assert button in unescape(snippet.read_text()) and dont_know in snippet.read_text()


@pytest.mark.parametrize("suffix, body", [(".json", '{"draw": "Tirez !", "privacy": "Au plus {ratio} fois."}'),
                                          (".toml", 'draw = "Tirez !"\nprivacy = "Au plus {ratio} fois."\n')])
def test_a_strings_file_overrides_the_fixed_texts(tmp_path, capsys, suffix, body):
    strings = tmp_path / f"s{suffix}"
    strings.write_text(body)
    assert read_strings(strings) == {"draw": "Tirez !", "privacy": "Au plus {ratio} fois."}
    out = tmp_path / "p.html"
    assert main(["export", "problems/gwrr-dont-know.toml", "--to", "html", "--lang", "fr", "--strings",
                 str(strings), "--out", str(out)]) == 0
    capsys.readouterr()
    text = visible(out.read_text())
    assert "Tirez !" in text and "Au plus 2,8 fois." in text and "Votre vraie réponse" in text


@pytest.mark.parametrize("suffix, body, words", [
    (".json", '{"drw": "x"}', "unknown key 'drw'"),
    (".json", '{"privacy": "no number"}', "key 'privacy' must contain {ratio}"),
    (".json", '{"draw": 3}', "expected a table of text keys to strings"),
    (".json", "{not json", "not valid JSON"),
    (".toml", "draw = ", "not valid TOML"),
    (".txt", "draw = 1", "a strings file is .json or .toml"),
])
def test_a_bad_strings_file_is_one_line_naming_it(tmp_path, capsys, suffix, body, words):
    strings = tmp_path / f"s{suffix}"
    strings.write_text(body)
    out = tmp_path / "p.html"
    assert main(["export", "problems/gwrr-dont-know.toml", "--to", "html", "--strings", str(strings), "--out",
                 str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(strings) in err and words in err and not out.exists()
    with pytest.raises(InvalidArgumentError, match=re.escape(words)):
        read_strings(strings)


def test_strings_for_the_module_and_a_missing_file_are_refused(tmp_path, capsys):
    assert main(["export", "problems/gwrr-dont-know.toml", "--strings", str(tmp_path / "none.json"), "--out",
                 str(tmp_path / "m.mjs")]) == 2
    assert "the ES module shows no text" in capsys.readouterr().err
    assert main(["export", "problems/gwrr-dont-know.toml", "--to", "html", "--strings", str(tmp_path / "none.json"),
                 "--out", str(tmp_path / "p.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "none.json" in err and "cannot read" in err


@pytest.mark.parametrize("suffix", [".html", ".md", ".txt"])
def test_the_printed_card_speaks_in_words_with_the_guarantee_as_a_sentence(tmp_path, capsys, suffix):
    problem = tmp_path / "dk.toml"
    problem.write_text(PROBLEM)
    card = tmp_path / f"card{suffix}"
    assert main(["design", str(problem), "--device", "die", "--instructions", str(card)]) == 0
    capsys.readouterr()
    text = visible(card.read_text()) if suffix == ".html" else card.read_text()
    assert "Rather not say" in text and "I don't know" not in text
    assert "{" not in text and "eps" not in text and "nats" not in text
    assert "at most 2.8 times as likely" in text
