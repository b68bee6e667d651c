"""Protocol files: every bundled protocol loads; mousavi-turn matches the paper's Table 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialeval.errors import InputError
from dialeval.human.protocol import bundled_protocols, load_protocol


def test_bundled_protocols_load() -> None:
    assert bundled_protocols() == [
        "comperdial",
        "comperdial-dialogue",
        "dialogadv",
        "diqad-holistic",
        "lmstyle-sliders",
        "mousavi-turn",
    ]
    scales = {name: [c.answer.scale for c in load_protocol(name).criteria] for name in bundled_protocols()}
    assert scales == {
        "comperdial": ["1-5"],
        "comperdial-dialogue": ["1-5"],
        "dialogadv": ["1-10"] * 4,
        "diqad-holistic": ["0-2"],
        "lmstyle-sliders": ["0-100", "0-100"],
        "mousavi-turn": ["positive|negative"] * 4,
    }


def test_mousavi_turn_follows_table_1() -> None:
    p = load_protocol("mousavi-turn")
    assert p.level == "turn" and p.mode == "absolute" and p.include_ground_truth
    codes = {c.name: {e.code: e.when for e in c.explanations} for c in p.criteria}
    # Table 1 of Mousavi et al. (2022): sub-dimensions per criterion and the answer they explain.
    assert codes == {
        "Appropriateness": {"Coherence": ["positive"], "Incoherence": ["negative"]},
        "Contextualization": {"Genericness": ["negative"], "Hallucination": ["negative"]},
        "Listening": {},
        "Correctness": {"Grammaticality": ["negative"], "Repetition": ["negative"]},
    }
    c = p.criterion("Correctness")
    assert c.check("negative", ["Repetition", "Grammaticality"], "") is None
    assert c.check("dont_know", [], "") == 'free text is required for "I don\'t know"'
    assert c.check("dont_know", [], "not sure") is None
    assert p.criterion("Listening").check("dont_know", [], "") is None  # no explanation asked for Listening


@pytest.mark.parametrize("name", ["comperdial", "comperdial-dialogue"])
def test_comperdial_reasons_are_the_six_axes_of_the_paper(name: str) -> None:
    (criterion,) = load_protocol(name).criteria
    # ComperDial App. A.7.2: "The axes are fluency, consistency, coherence, engagingness, persona
    # consistency, and humanness", marked for low scores.
    assert {e.code: e.when for e in criterion.explanations} == {
        axis: ["1", "2"] for axis in ("fluency", "consistency", "coherence", "engagingness", "persona", "humanness")
    }


def test_diqad_reasons_follow_its_annotation_interface() -> None:
    (criterion,) = load_protocol("diqad-holistic").criteria
    reasons = {e.code: e.when for e in criterion.explanations}
    # DiQAD Fig. 6: reasons for 1 (Incomplete, Less informative, Less proactivity), for 0 (No/wrong answers,
    # Not relevant, Not empathy, Grammatical Error, Not consistent), and the external-verification question.
    assert [c for c, w in reasons.items() if w == ["1"]] == ["incomplete", "less_informative", "less_proactive"]
    assert [c for c, w in reasons.items() if w == ["0"]] == [
        "no_or_wrong_answer", "not_relevant", "not_empathetic", "grammatical_error", "not_consistent"
    ]
    assert reasons["needs_external_verification"] == ["0", "1", "2"]


def test_user_protocol_errors_name_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "mine.yaml"
    bad.write_text("name: x\nversion: one\nlevel: turn\nshort_guidelines: s\ncriteria: []\n")
    with pytest.raises(InputError, match=r'mine.yaml:2: field "version"'):  # the line: it named the field only
        load_protocol(bad)
    with pytest.raises(InputError, match="unknown protocol"):
        load_protocol("mousavi")


MINE = """\
name: mine
version: 1
level: turn
short_guidelines: Rate it.
criteria:
  - name: Quality
    definition: How good it is.
    question: How good is it?
    answer: {type: scale, levels: [1, 2, 3]}
    explanations:
      - {code: dull, label: Dull, when: ["1"]}
"""


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("{type: scale, levels: [1, 2, 3]}", "{type: slider, min: 100, max: 0}",
         "a slider's min must be below its max, got 100 and 0"),
        ("{type: scale, levels: [1, 2, 3]}", "{type: scale, levels: []}", "a scale answer needs two levels or more"),
        ("{type: scale, levels: [1, 2, 3]}", "{type: choice, options: [{value: a, label: A}]}",
         "a choice answer needs two options or more (besides \"I don't know\"), got ['a']"),
        ("levels: [1, 2, 3]", "levels: [1, 2, 2]", "'2' is given twice"),
        ("levels: [1, 2, 3]}", "levels: [1, 2, 3], min: 1}", "min does not apply to a scale answer"),
        ('when: ["1"]', 'when: ["one"]',
         "explanation \"dull\" is offered for 'one', which is no answer of Quality (1-3)"),
    ],
)  # fmt: skip
def test_a_protocol_no_answer_fits_is_refused(tmp_path: Path, old: str, new: str, message: str) -> None:
    """Each of these made a study whose page took no answer (or offered an explanation never shown), or was
    ignored (a slider's levels): study create took them without a word."""
    assert load_protocol(_mine(tmp_path, MINE)).criteria[0].answer.levels == [1, 2, 3]
    with pytest.raises(InputError) as err:
        load_protocol(_mine(tmp_path, MINE.replace(old, new)))
    assert err.value.field.startswith("criteria.0") and err.value.message.startswith(message), str(err.value)


QUALITY = MINE[MINE.index("  - name: Quality"):]


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        (MINE[: MINE.index("criteria:")] + "criteria: []\n", "criteria", "List should have at least 1 item"),
        (MINE + QUALITY, "criteria", 'criterion "Quality" is given twice'),  # their votes mixed
        (MINE.replace("level: turn", "level: turn\nmode: comparative"), "mode",
         "comparative (candidates judged against each other) is not implemented"),  # it rated as absolute does
        (MINE.replace("level: turn", "level: turn\nshow_tag_label: Style"), "show_tag_label",
         "names the tag that show_tag shows"),  # it was ignored
        (MINE.replace("name: Quality", "name: ' '"), "criteria.0.name", "a criterion needs a name"),
        (MINE + "      - {code: dull, label: Again, when: ['2']}\n", "criteria.0",
         'explanation code "dull" is given twice'),
        (MINE.replace("{type: scale, levels: [1, 2, 3]}", "{type: choice, options: [{value: a, label: A}, "
                      "{value: b, label: B, dont_know: true}, {value: c, label: C, dont_know: true}]}"),
         "criteria.0.answer", 'two "I don\'t know" options'),
        (MINE.replace("{type: scale, levels: [1, 2, 3]}", "{type: choice, options: [{value: a, label: A}, "
                      "{value: b, label: B, dont_know: true}]}").replace('"1"', '"a"'),
         "criteria.0.answer", "a choice answer needs two options or more (besides \"I don't know\"), got ['a']"),
    ],
)  # fmt: skip
def test_a_protocol_that_says_one_thing_and_does_another_is_refused(
    tmp_path: Path, text: str, field: str, message: str
) -> None:
    """Each was taken without a word: no criteria, a criterion twice, comparative mode (not implemented), a tag
    label with no tag, a blank name, an explanation code twice, two "I don't know" options, one real option."""
    with pytest.raises(InputError) as err:
        load_protocol(_mine(tmp_path, text))
    assert err.value.field == field and err.value.message.startswith(message), str(err.value)


def _mine(tmp_path: Path, text: str) -> Path:
    (path := tmp_path / "mine.yaml").write_text(text, encoding="utf-8")
    return path


MALFORMED = {
    "not YAML": b"name: mine\nversion: [1\n",
    "a list": b"- name: mine\n",
    "a bad field": b"name: mine\nversion: one\n",
    "a key twice": b"name: mine\nversion: 1\nname: yours\n",  # PyYAML kept "yours", silently
    "a binary file": b"name: mine\n\xff\xfe\x00\x01",
    "a folder": None,
}


@pytest.mark.parametrize("kind", MALFORMED)
def test_a_malformed_human_protocol_fails_as_a_judge_protocol_does(tmp_path: Path, kind: str) -> None:
    """Both kinds of protocol are read by one loader: the same bad file gives the same one-line error."""
    from dialeval.judges import load_protocol as load_judge_protocol

    path = tmp_path / "mine.yaml"
    content = MALFORMED[kind]
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    errors = []
    for load in (load_protocol, load_judge_protocol):
        with pytest.raises(InputError) as err:
            load(path)
        errors.append(err.value)
    human, judge = errors
    assert (human.path, human.line, human.field, human.message) == (judge.path, judge.line, judge.field, judge.message)
    assert human.path == str(path) and "\n" not in str(human), str(human)
    if kind == "a bad field":
        assert human.field == "version"
    if kind == "a key twice":
        assert str(human) == f'{path}:3: field "name": is given twice in one mapping (first on line 1)'


def test_study_create_with_a_malformed_protocol_is_one_line_and_exit_2(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from dialeval.cli import app

    bad = tmp_path / "mine.yaml"
    bad.write_bytes(MALFORMED["not YAML"])
    res = CliRunner().invoke(app, ["study", "create", str(tmp_path / "study"), "--protocol", str(bad)])
    assert res.exit_code == 2, res.output
    # the bracket left open on line 2 of 2 (it said 3, past the end, as a mapping file did not)
    assert res.output.startswith(f"error: {bad}:2: not valid YAML (") and res.output.count("\n") == 1, res.output
    assert not (tmp_path / "study").exists()



def _long(kind: str, n: int) -> str:
    """MINE with a criterion name, or an option value, of ``n`` characters."""
    if kind == "name":
        return MINE.replace("name: Quality", "name: " + "Q" * n)
    choice = "{type: choice, options: [{value: a, label: A}, {value: " + "b" * n + ", label: B}]}"
    return MINE.replace("{type: scale, levels: [1, 2, 3]}", choice).replace('when: ["1"]', 'when: ["a"]')


@pytest.mark.parametrize(
    ("kind", "line", "field", "what"),
    [("name", 6, "criteria.0.name", "a criterion's name"),
     ("value", 9, "criteria.0.answer.options.1.value", "an answer's value")],
)  # fmt: skip
def test_a_name_or_value_longer_than_an_answer_takes_is_refused(
    tmp_path: Path, kind: str, line: int, field: str, what: str
) -> None:
    """``study create`` took a criterion name (or an option value) over 64 characters, after which the app
    refused every answer to it with 422 (its answers take 64 at most); now the loader names file, line and field.
    """
    from typer.testing import CliRunner

    from dialeval.cli import app

    assert load_protocol(_mine(tmp_path, _long(kind, 64))).criteria  # 64 is what an answer takes: fine
    path = _mine(tmp_path, _long(kind, 65))
    res = CliRunner().invoke(app, ["study", "create", str(tmp_path / "study"), "--protocol", str(path)])
    assert res.exit_code == 2, res.output
    assert res.output == (f'error: {path}:{line}: field "{field}": {what} has at most 64 characters (the app takes '
                          "no longer in an answer), got 65\n")  # fmt: skip
    assert not (tmp_path / "study").exists()


def test_the_app_takes_answers_as_long_as_the_protocol_allows() -> None:
    """One constant sets both limits: the protocol's (study create) and the app's (an answer's criterion, value)."""
    from dialeval.human.app import AnswerIn
    from dialeval.human.protocol import MAX_KEY_CHARS

    fields = AnswerIn.model_fields
    assert [fields[f].metadata[0].max_length for f in ("criterion", "value")] == [MAX_KEY_CHARS] * 2


#: MINE as a choice whose third answer is valued "tie" (a rating against the reference: better, worse, the same).
TIED = MINE.replace("{type: scale, levels: [1, 2, 3]}", "{type: choice, options: [{value: better, label: Better}, "
                    "{value: worse, label: Worse}, {value: tie, label: About the same}]}").replace('"1"', '"worse"')


def test_an_answer_valued_tie_is_refused(tmp_path: Path) -> None:
    """The report's majority table (the paper's Table 3) counts an item whose votes tie under "tie": an answer of
    that value was counted with them, so an item one annotator called better and the other worse read "About the
    same" (one of two: "Better 50.0%, About the same 50.0%"), which nobody had answered."""
    from typer.testing import CliRunner

    from dialeval.cli import app

    assert load_protocol(_mine(tmp_path, TIED.replace("value: tie", "value: same"))).criteria[0].answer.options
    path = _mine(tmp_path, TIED)
    res = CliRunner().invoke(app, ["study", "create", str(tmp_path / "study"), "--protocol", str(path)])
    assert res.exit_code == 2, res.output
    # line 9: the answer's flow mapping, where the option is
    assert res.output == (f'error: {path}:9: field "criteria.0.answer.options.2.value": "tie" is what the report '
                          "calls an item whose votes tie (no majority), so the votes for this answer would be counted "
                          "with the ties: give it another value (its label can stay)\n")  # fmt: skip
    assert not (tmp_path / "study").exists()


@pytest.mark.parametrize("score", [".nan", "nan", ".inf", "-inf"])
def test_an_answer_scored_with_no_number_is_refused(tmp_path: Path, score: str) -> None:
    """A score of NaN or an infinity (YAML's .nan, or "nan" read as one) was taken, and `study export --numeric`
    then stopped with a pydantic traceback ("NaN is not a rating") at the first vote for that answer."""
    from typer.testing import CliRunner

    from dialeval.cli import app

    scored = TIED.replace("value: tie", "value: same").replace("label: Worse}", f"label: Worse, score: {score}}}")
    assert load_protocol(_mine(tmp_path, scored.replace(score, "0.5"))).criteria[0].answer.options[1].score == 0.5
    path = _mine(tmp_path, scored)
    res = CliRunner().invoke(app, ["study", "create", str(tmp_path / "study"), "--protocol", str(path)])
    assert res.exit_code == 2, res.output
    number = {".nan": "nan", ".inf": "inf"}.get(score, score)  # as Python prints the float read
    assert res.output == (f'error: {path}:9: field "criteria.0.answer.options.1.score": a score is a finite number '
                          f"(`study export --numeric` writes it as the rating), got {number}\n")  # fmt: skip
    assert not (tmp_path / "study").exists()


@pytest.mark.parametrize(("label", "field", "message"), [
    ('""', "criteria.0.answer.options.0.label", "an answer needs a label: the page shows it on its button"),
    ("' '", "criteria.0.answer.options.0.label", "an answer needs a label: the page shows it on its button"),
    ('"\\u200b\\u2060"', "criteria.0.answer.options.0.label",
     "an answer needs a label: the page shows it on its button"),  # zero-width: str.strip() kept them
    ("Worse", "criteria.0.answer.options.1.label",
     'the label "Worse" is also the label of the answer "better": annotators could not tell the two apart'),
    ('"Worse\\u200b "', "criteria.0.answer.options.1.label",  # they differed in a zero-width space and a space
     'the label "Worse" is also the label of the answer "better": annotators could not tell the two apart'),
])  # fmt: skip
def test_an_answer_without_a_label_of_its_own_is_refused(tmp_path: Path, label: str, field: str, message: str) -> None:
    """A blank label was taken: the page showed a button reading "[1] " and nothing else, and the report's tables
    a blank answer (" 50.0%"); two answers of one label were two buttons no annotator could tell apart."""
    from typer.testing import CliRunner

    from dialeval.cli import app

    path = _mine(tmp_path, TIED.replace("value: tie", "value: same").replace("label: Better", f"label: {label}"))
    res = CliRunner().invoke(app, ["study", "create", str(tmp_path / "study"), "--protocol", str(path)])
    assert res.exit_code == 2, res.output
    assert res.output == f'error: {path}:9: field "{field}": {message}\n'
    assert not (tmp_path / "study").exists()


def test_a_protocol_file_in_json_loads_as_its_yaml_does(tmp_path: Path) -> None:
    """`--protocol mine.json` was "unknown protocol" (only .yaml or .yml were files); JSON is YAML, as a judge
    protocol's file by any suffix is read. The bundled mousavi-turn as JSON: the same protocol."""
    import json
    from importlib.resources import files

    import yaml

    text = (files("dialeval.human") / "protocols" / "mousavi-turn.yaml").read_text(encoding="utf-8")
    (tmp_path / "mine.json").write_text(json.dumps(yaml.safe_load(text), indent=1))
    mine, bundled = load_protocol(tmp_path / "mine.json"), load_protocol("mousavi-turn")
    assert mine.model_copy(update={"source_sha256": ""}) == bundled.model_copy(update={"source_sha256": ""})
    with pytest.raises(InputError, match='unknown protocol "mousavi"; did you mean "mousavi-turn"'):
        load_protocol("mousavi")


def test_an_ordinary_answer_valued_dont_know_is_refused(tmp_path: Path) -> None:
    """The report's majority vote counts every "I don't know" (dont_know: true) under "dont_know": an ordinary answer
    of that value was counted with them, so two annotators' "I can't say" and "Unsure" read as one answer (a majority
    where there was a tie), and `study export` wrote that answer's votes as the other's. The "I don't know" option
    itself may keep that value (mousavi-turn's is "dont_know")."""
    from typer.testing import CliRunner

    from dialeval.cli import app
    from dialeval.human.analysis import majority_votes
    from dialeval.schema import Rating

    # the merge itself: a vote for an ordinary "dont_know" and an "I don't know" vote (read back as dont_know=True)
    # made one answer of two votes against "better"'s one, where each answer has one vote and the item is a tie
    votes = [Rating(item_id="x", dimension="Q", annotator="a1", value="dont_know"),
             Rating(item_id="x", dimension="Q", annotator="a2", value=None, dont_know=True),
             Rating(item_id="x", dimension="Q", annotator="a3", value="better")]  # fmt: skip
    assert majority_votes(votes)[("x", "Q")] == ("dont_know", False)  # why such a protocol may not be loaded
    unsure = TIED.replace("value: tie", "value: dont_know").replace("}]}", "}, {value: unsure, label: Unsure, "
                                                                           "dont_know: true}]}")  # fmt: skip
    assert load_protocol(_mine(tmp_path, unsure.replace("value: dont_know", "value: same"))).criteria[0].answer
    own = unsure.replace("value: dont_know", "value: same").replace("value: unsure", "value: dont_know")
    assert load_protocol(_mine(tmp_path, own)).criteria[0].answer.is_dont_know("dont_know")
    path = _mine(tmp_path, unsure)
    res = CliRunner().invoke(app, ["study", "create", str(tmp_path / "study"), "--protocol", str(path)])
    assert res.exit_code == 2, res.output
    assert res.output == (f'error: {path}:9: field "criteria.0.answer.options.2.value": "dont_know" is what the '
                          "report calls an \"I don't know\" vote, so the votes for this answer would be counted with "
                          "them: give it another value (its label can stay), or dont_know: true if it is that "
                          "option\n")  # fmt: skip
    assert not (tmp_path / "study").exists()


#: What blank_words says of an explanation's label and of its code.
NO_LABEL = "an explanation needs a label: the page shows it beside its box"
NO_CODE = "an explanation needs a code: the report counts the votes that chose it under its code"


@pytest.mark.parametrize(("old", "new", "line", "field", "message"), [
    ("label: Dull", 'label: ""', 11, "criteria.0.explanations.0.label", NO_LABEL),
    ("label: Dull", "label: '  '", 11, "criteria.0.explanations.0.label", NO_LABEL),
    ("code: dull", 'code: " "', 11, "criteria.0.explanations.0.code", NO_CODE),
    ("label: Dull", 'label: "\\u200b"', 11, "criteria.0.explanations.0.label", NO_LABEL),  # a zero-width space
    ("question: How good is it?", 'question: "\\ufeff\\u3164"', 8, "criteria.0.question",
     "a criterion needs a question: the page asks it"),
    ("definition: How good it is.", 'definition: ""', 7, "criteria.0.definition",
     "a criterion needs a definition: the page shows it with the question"),
    ("question: How good is it?", "question: ' '", 8, "criteria.0.question",
     "a criterion needs a question: the page asks it"),
    ("short_guidelines: Rate it.", "short_guidelines: ''", 4, "short_guidelines",
     "give the guidelines annotators see on every page"),
])  # fmt: skip
def test_blank_words_for_annotators_are_refused(
    tmp_path: Path, old: str, new: str, line: int, field: str, message: str
) -> None:
    """An explanation's label, a criterion's definition or question, or the guidelines, empty or only spaces, was
    taken: the page showed a tick box with no words beside it (annotators chose it blind, and the report counted
    it), or a criterion with nothing to go by. The line is the field's own in MINE (line 11 is the explanation's
    flow mapping)."""
    from typer.testing import CliRunner

    from dialeval.cli import app

    assert load_protocol(_mine(tmp_path, MINE)).criteria[0].explanations[0].label == "Dull"
    path = _mine(tmp_path, MINE.replace(old, new))
    res = CliRunner().invoke(app, ["study", "create", str(tmp_path / "study"), "--protocol", str(path)])
    assert res.exit_code == 2, res.output
    assert res.output == f'error: {path}:{line}: field "{field}": {message}\n'
    assert not (tmp_path / "study").exists()


@pytest.mark.parametrize(("value", "message"), [
    ('""', "an answer needs a value: the study stores it as the rating"),
    ('"\\u200b"', "an answer needs a value: the study stores it as the rating"),
    ('"about|same"', 'an answer\'s value may not hold "|": the study stores the answers joined by "|" as the '
                     "rating's scale"),
])  # fmt: skip
def test_an_answer_valued_empty_or_with_a_bar_is_refused(tmp_path: Path, value: str, message: str) -> None:
    """A value "" was taken (stored as the rating, read back as no answer), and one holding "|" made the scale
    string each rating stores ambiguous: options "a|b" and "c" read as "a", "b" and "c" ("a|b|c")."""
    from typer.testing import CliRunner

    from dialeval.cli import app
    from dialeval.human.protocol import Answer, Option

    ambiguous = [Answer(type="choice", options=[Option(value=v, label=v) for v in vs]).scale for vs in
                 (["a|b", "c"], ["a", "b|c"])]  # fmt: skip
    assert ambiguous == ["a|b|c", "a|b|c"]  # why such a protocol may not make a study
    same = TIED.replace("value: tie", "value: same")
    assert load_protocol(_mine(tmp_path, same)).criteria[0].answer.scale == "better|worse|same"
    path = _mine(tmp_path, same.replace("value: same", f"value: {value}"))
    res = CliRunner().invoke(app, ["study", "create", str(tmp_path / "study"), "--protocol", str(path)])
    assert res.exit_code == 2, res.output
    assert res.output == f'error: {path}:9: field "criteria.0.answer.options.2.value": {message}\n'
    assert not (tmp_path / "study").exists()


def test_an_explanation_offered_for_no_answer_is_refused(tmp_path: Path) -> None:
    """An explanation with ``when: []`` was taken, and the page offers an explanation only for the answers its
    ``when`` names: a sub-dimension no annotator could ever choose, reported as chosen by none."""
    from typer.testing import CliRunner

    from dialeval.cli import app

    assert load_protocol(_mine(tmp_path, MINE)).criteria[0].explanations[0].when == ["1"]
    path = _mine(tmp_path, MINE.replace('when: ["1"]', "when: []"))
    res = CliRunner().invoke(app, ["study", "create", str(tmp_path / "study"), "--protocol", str(path)])
    assert res.exit_code == 2, res.output
    assert res.output == (f'error: {path}:11: field "criteria.0.explanations.0.when": an explanation is offered '
                          "only for the answers its when names: name one or more\n")  # fmt: skip
    assert not (tmp_path / "study").exists()


@pytest.mark.parametrize(("text", "line", "field", "message"), [
    (MINE.replace("name: Quality", 'name: "\\u200b"'), 6, "criteria.0.name",
     "a criterion needs a name: the page shows it, the report's tables name its votes by it"),
    (MINE + QUALITY.replace("name: Quality", 'name: "Quality\\u200b"'), 12, "criteria.1.name",
     "a criterion's name 'Quality\\u200b' reads as 'Quality'"),
    (MINE + QUALITY.replace("name: Quality", 'name: "\\ufeffQuality "'), 12, "criteria.1.name",
     "a criterion's name '\\ufeffQuality ' reads as 'Quality'"),
    (TIED.replace("value: tie", 'value: "better\\u2060"'), 9, "criteria.0.answer.options.2.value",
     "an answer's value 'better\\u2060' reads as 'better'"),
    (MINE + '      - {code: "dull\\u00a0", label: Again, when: ["2"]}\n', 12, "criteria.0.explanations.1.code",
     "an explanation's code 'dull\\xa0' reads as 'dull'"),  # a no-break space
])  # fmt: skip
def test_names_that_read_the_same_are_refused(tmp_path: Path, text: str, line: int, field: str, message: str) -> None:
    """A criterion's name was checked with str.strip(), which keeps a zero-width space, and names, answer values and
    codes were told apart as written: a criterion named "\u200b" was taken (a heading with nothing on it), and
    "Quality" and "Quality\u200b" were two criteria whose votes the report kept apart under names that read alike.
    The rule is now free text's (visible()), and names that differ only in invisible characters or spaces are
    refused. The messages write the names as Python's repr() does, so the invisible character shows."""
    from typer.testing import CliRunner

    from dialeval.cli import app

    path = _mine(tmp_path, text)
    res = CliRunner().invoke(app, ["study", "create", str(tmp_path / "study"), "--protocol", str(path)])
    assert res.exit_code == 2, res.output
    assert res.output.startswith(f'error: {path}:{line}: field "{field}": {message}'), res.output
    assert not (tmp_path / "study").exists()


def test_the_page_and_the_server_list_the_same_characters_that_show_nothing() -> None:
    """app.js's SEEN class must exclude exactly protocol._UNSEEN's characters (beside \\p{Z}, Cc and Cf), or the page
    sends an explanation the server refuses (422) or holds back one it takes. Both lists are read from their source:
    the JavaScript escapes (\\uXXXX, \\u{XXXXX}) decoded here, the Python pattern's characters taken as written."""
    import re

    from dialeval.human import protocol

    script = (Path(protocol.__file__).parent / "static" / "app.js").read_text(encoding="utf-8")
    found = re.search(r"const SEEN = /\[\^\\p\{Z\}\\p\{Cc\}\\p\{Cf\}(.*?)\]/u;", script)
    assert found is not None, "app.js's SEEN class is not where this test reads it"
    page = re.sub(r"\\u\{([0-9a-fA-F]+)\}|\\u([0-9a-fA-F]{4})",
                  lambda m: chr(int(m.group(1) or m.group(2), 16)), found.group(1))  # fmt: skip
    assert page == protocol._UNSEEN.pattern.strip("[]")
