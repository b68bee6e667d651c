"""Protocol files are checked by a pydantic model (unknown keys refused, errors name file and field); signatures."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialeval.errors import InputError, UnknownNameError
from dialeval.judges import load_protocol
from dialeval.metrics.base import METRICS

GOOD = """\
name: mine
version: 1
scale: {min: 1, max: 5}
answer: {template: "Score: {score}"}
messages:
  - role: user
    content: "Rate {{response}}"
"""


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "mine.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_a_good_file_loads_with_its_answer_shape(tmp_path: Path) -> None:
    p = load_protocol(_write(tmp_path, GOOD))
    assert p.answer is not None and p.answer.slot("score").values == ("1", "2", "3", "4", "5")


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (GOOD + "temprature: 0.3\n", "temprature"),  # an unknown (misspelt) key is refused, not ignored
        (GOOD.replace("version: 1", "version: one"), "version"),
        # pydantic's lax mode took a boolean as a number: "version: true" was version 1, "min: true" a 1-5 scale
        (GOOD.replace("version: 1", "version: true"), "version"),
        (GOOD.replace("min: 1", "min: true"), "scale.min"),
        (GOOD.replace("version: 1", "version: '2'"), "version"),
        (GOOD.replace("scale: {min: 1, max: 5}", "scale: {min: 1}"), "scale.max"),
        (GOOD.replace('answer: {template: "Score: {score}"}', 'answer: {template: "S", decimal: 1}'), "answer.decimal"),
        (GOOD.replace("Score: {score}", "Score: {value}"), "answer.template"),
        (GOOD.replace("scale: {min: 1, max: 5}", "scale: {min: 5, max: 1}"), "scale"),
        # .inf and .nan were an OverflowError and a ValueError traceback; 1e300 enumerated the answers for ever
        (GOOD.replace("max: 5", "max: .inf"), "scale.max"),
        (GOOD.replace("min: 1", "min: .nan"), "scale.min"),
        (GOOD.replace("max: 5", "max: 1e300"), "scale"),
        (GOOD.replace("max: 5", "max: 10002"), "scale"),  # 1-10002: 10,002 answers, one more than the most
        # each was taken: a role the backend refused or read as it liked, outputs "level 1--3", a dialogue's last
        # system turn left out (max_turns -1), and a prompt that never shows the response (one score for all)
        (GOOD.replace("role: user", "role: wizard"), "messages.0.role"),
        (GOOD + "levels: -3\n", "levels"),
        (GOOD + "levels: 10\n", "levels"),
        # a blank label precedes any number: "Score: 4. It has 2 typos." was read as 2
        (GOOD + "labels: ['']\n", "labels"),
        (GOOD + "labels: [score, ' ']\n", "labels"),  # levels of a 0-1 score: a 1-5 scale's scores were all level 10
        (GOOD + "max_turns: -1\n", "max_turns"),
        # max_turns 0 judged the last 7 system turns (the unset default), not none nor all; and a file with no
        # step1_protocol judges no turns, so its max_turns was ignored
        (GOOD.replace("{{response}}", "{{turn_scores}}") + "step1_protocol: cpdscore-detail\nmax_turns: 0\n",
         "max_turns"),
        (GOOD + "max_turns: 3\n", "max_turns"),
        # an integer scale with no whole number on it: "Score: 0.5" was read, and no expected score was given
        (GOOD.replace("{min: 1, max: 5}", "{min: 0.2, max: 0.8}").replace('answer: {template: "Score: {score}"}\n',
                                                                           ""), "scale.integer"),
        (GOOD.replace("Rate {{response}}", "Rate it"), "messages"),
        (GOOD.replace("name: mine", "name: ''"), "name"),
        (GOOD.replace("name: mine", "name: ' '"), "name"),  # it loaded: the signature said "|protocol: |"
        # each was found only when the first item was judged, with no line: a misspelt placeholder, one filled in
        # only for a protocol with dimensions or a step-1 protocol, and a step-1 protocol that does not exist
        (GOOD.replace("{{response}}", "{{response}} {{respones}}"), "messages.0.content"),
        (GOOD.replace("{{response}}", "{{response}} {{aspect}}"), "messages.0.content"),
        (GOOD.replace("{{response}}", "{{turn_scores}}"), "messages.0.content"),
        (GOOD + "step1_protocol: cpdscore-detial\n", "step1_protocol"),
        # step 1 asks one question per turn: these failed at the first item, naming the step-1 protocol's
        # own file (a built-in) and its {{aspect}} / {{n_turns}}
        (GOOD + "step1_protocol: dialogadv\n", "step1_protocol"),
        (GOOD + "step1_protocol: cpdscore-dialogue\n", "step1_protocol"),
        (GOOD + "step1_protocol: mine.yaml\n", "step1_protocol"),  # itself: it would be read for ever
        (GOOD + "step1_protocol: turns.yaml\n", "step1_protocol"),  # no such file: the error named turns.yaml only
        # 0.2-0.8 has no whole value: the grammar allowed no answer (it was "0" and "1", both off the scale)
        (GOOD.replace("{min: 1, max: 5}", "{min: 0.2, max: 0.8, integer: false}"), "answer.decimals"),
        # a placeholder written with spaces, as Jinja allows, was sent as it is: the model saw "{{ context }}"
        (GOOD.replace("{{response}}", "{{response}} after {{ context }}"), "messages.0.content"),
        (GOOD.replace("{{response}}", "{{response }}"), "messages.0.content"),  # it was "no message shows the item"
        # and one no placeholder can be ({{last-turn}}, {{response.text}}) was sent too: the model saw the braces
        (GOOD.replace("{{response}}", "{{response}} after {{last-turn}}"), "messages.0.content"),
        (GOOD.replace("{{response}}", "{{response}} after {{ last turn }}"), "messages.0.content"),
        # dimensions no message names: every dimension got the same prompt, so the same score under each name
        (GOOD + "dimensions: {fluency: reads well, coherence: follows on}\n", "dimensions"),
        # a dimension named "" was no dimension when judged: 'unknown placeholder "{{aspect}}"' at the first item,
        # naming field "messages" and no line; one named " " made a plugin protocol's output name end in a space
        (GOOD.replace("{{response}}", "{{response}} {{aspect}}") + "dimensions: {'': reads well}\n", "dimensions"),
        (GOOD.replace("{{response}}", "{{response}} {{aspect}}") + "dimensions: {' ': reads well}\n", "dimensions"),
        # and in a two-step file they were dropped silently (its outputs: final, turn, interaction)
        (GOOD.replace("{{response}}", "{{turn_scores}}") + "step1_protocol: cpdscore-detail\ndimensions: {a: b}\n",
         "dimensions"),
        # {{reference}} without needs_references: true was filled in with "" for every item without a reference
        # (the run never said so); and a step-1 protocol's turns have no reference, so each was judged without one
        (GOOD.replace("{{response}}", "{{response}} against {{reference}}"), "messages.0.content"),
        (GOOD.replace("{{response}}", "{{response}} against {{reference}}") + "needs_references: false\n",
         "messages.0.content"),
        (GOOD.replace("{{response}}", "{{turn_scores}}") + "step1_protocol: cpdscore-detail-ref\n", "step1_protocol"),
        # fields name a two-step protocol's other scores: a blank label read the answer's last number as the turn
        # score ("Turn Score - 4 and 3" gave 3), and a misspelt key or fields in a file with no step 1 were ignored
        (GOOD.replace("{{response}}", "{{turn_scores}}") + "step1_protocol: cpdscore-detail\nfields: {turn: ['']}\n",
         "fields"),
        (GOOD.replace("{{response}}", "{{turn_scores}}") + "step1_protocol: cpdscore-detail\nfields: {trun: [Turn]}\n",
         "fields"),
        (GOOD + "fields: {turn: [Turn Score]}\n", "fields"),
        # an integer scale (integer: true, the default) with answers written with decimals: the grammar asked for
        # 1.00-5.00, 1.50 was read as a score, and no sampled answer had an expected score (no "1.50" token of 1-5)
        (GOOD.replace('"}', '", decimals: 2}'), "answer.decimals"),
        # braces that are no slot were text the answer had to copy: the grammar held the model to "Score: {3}", and
        # to "Turn: {turn-score} Score: 4", so a misspelt slot's score was never asked for
        (GOOD.replace("Score: {score}", "Score: {{score}}"), "answer.template"),
        (GOOD.replace("Score: {score}", "Turn: {turn-score} Score: {score}"), "answer.template"),
        (GOOD.replace("Score: {score}", "Turn: { turn } Score: {score}"), "answer.template"),
        # a blank definition shown as {{definition}}: the model was asked to judge "fluency: " and never told what
        (GOOD.replace("{{response}}", "{{response}} {{aspect}}: {{definition}}") + "dimensions:\n  fluency: ' '\n",
         "dimensions.fluency"),
    ],
)
def test_errors_name_the_file_and_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, field: str
) -> None:
    monkeypatch.chdir(tmp_path)
    path = _write(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_protocol(path)
    assert err.value.path == str(path) and err.value.field == field
    assert err.value.line is not None, err.value  # and the line of its key, or of its parent's where it is missing
    assert any(part in text.splitlines()[err.value.line - 1] for part in field.split(".")), err.value


def test_placeholders_of_dimensions_and_of_a_second_step_load(tmp_path: Path) -> None:
    """{{aspect}} and {{definition}} are filled in for a protocol with dimensions, {{turn_scores}} for one with a
    step-1 protocol: both load (the check above refuses them elsewhere)."""
    dims = GOOD.replace("{{response}}", "{{response}} {{aspect}}: {{definition}}") + "dimensions: {fluency: reads}\n"
    assert load_protocol(_write(tmp_path, dims)).dimension_names == ("fluency",)
    unshown = GOOD.replace("{{response}}", "{{response}} {{aspect}}") + "dimensions: {fluency: ''}\n"
    assert load_protocol(_write(tmp_path, unshown)).dimension_names == ("fluency",)  # no message shows it
    two_step = GOOD.replace("{{response}}", "{{turn_scores}}") + "step1_protocol: cpdscore-detail\n"
    assert load_protocol(_write(tmp_path, two_step)).step1_protocol == "cpdscore-detail"


@pytest.mark.parametrize("integer", ["true", "false"])
def test_every_answer_and_score_token_is_on_the_scale(tmp_path: Path, integer: str) -> None:
    """Rounded bounds made a 0.5-5.5 scale's answers 0-6 (and its integer score tokens 0-5): the grammar let the
    model answer 6 or 0, read as a score outside the scale. The values on it are the whole numbers 1 to 5."""
    from dialeval.backends.base import Backend, ChatRequest, Completion
    from dialeval.backends.runner import Runner
    from dialeval.judges.judge import Judge

    class Unasked(Backend):
        signature = "unasked"

        def chat(self, request: ChatRequest) -> Completion:
            raise AssertionError("parsing sends no request")

    half = GOOD.replace("{min: 1, max: 5}", f"{{min: 0.5, max: 5.5, integer: {integer}}}")
    p = load_protocol(_write(tmp_path, half))
    assert p.answer is not None and p.answer.slot("score").values == ("1", "2", "3", "4", "5")
    assert p.scale.tokens() == (["1", "2", "3", "4", "5"] if integer == "true" else [])
    judge = Judge(p, Runner(Unasked()))
    assert judge.parse("Score: 6").value is None and judge.parse("Score: 0").value is None


def test_braces_around_no_slot_load_as_the_answer_text(tmp_path: Path) -> None:
    """A JSON answer's braces enclose slots, not a name: they are text the answer holds, as in the template."""
    text = GOOD.replace('"Score: {score}"', "'{\"score\": {score}, \"why\": {why}}'")
    p = load_protocol(_write(tmp_path, text))
    assert p.answer is not None and p.answer.parts[0] == '{"score": ' and p.answer.parts[-1] == "}"
    assert p.answer.read('{"score": 4, "why": 2}') == {"score": "4", "why": "2"}


def test_the_largest_answer_scale_loads(tmp_path: Path) -> None:
    """0-100 with two decimals, 10,001 answers, is the most an answer's grammar takes (and loads)."""
    text = GOOD.replace("{min: 1, max: 5}", "{min: 0, max: 100, integer: false}").replace('"}', '", decimals: 2}')
    p = load_protocol(_write(tmp_path, text))
    assert p.answer is not None and len(p.answer.slot("score").values) == 10_001


def test_an_unknown_protocol_name_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError, match='did you mean "cpdscore-simple"'):
        load_protocol("cpdscore-simpel")


def test_operational_fields_are_not_in_the_signature() -> None:
    """Timeouts, retries, budgets, cache and prices change no score: the signature (and cached scores) stay."""
    cls = METRICS.get("judge:cpdscore-detail")
    base = cls().signature
    for change in ({"timeout": 5.0}, {"max_retries": 0}, {"max_calls": 3}, {"cache": False},
                   {"usd_per_mtok_in": 2.5}, {"api_key_env": "OTHER_KEY"}):
        assert cls(**change).signature == base, change
    for change in ({"mode": "sample"}, {"structured": False}, {"seed": 1}, {"max_tokens": 32}):
        assert cls(**change).signature != base, change
    http = {"backend": "openai-compatible", "base_url": "http://127.0.0.1:1/v1"}
    assert cls(**http, model="a").signature != cls(**http, model="b").signature
    assert cls(**http, model="a", timeout=1.0).signature == cls(**http, model="a").signature
    assert "structured:yes" in base and "mode:distribution" in base and "timeout" not in base
    # the prompt is in the signature through the protocol file's hash
    assert METRICS.get("judge:cpdscore-detail-ref")().signature != base


def test_a_judge_signature_names_each_key_once_and_the_file_by_its_content(tmp_path: Path) -> None:
    """The config's protocol path ("" for a built-in) and the protocol's name were both written "protocol:": the
    signature read "...|base_url:|protocol:|mode:...|protocol:cpdscore-simple|...". The path is out now: the name,
    version and sha256 say which protocol, so one file copied elsewhere gives the same signature."""
    base = METRICS.get("judge:cpdscore-simple")().signature
    keys = [part.split(":", 1)[0] for part in base.split("|")[1:]]
    assert sorted(k for k in set(keys) if keys.count(k) > 1) == []
    assert "|protocol:cpdscore-simple|protocol_version:1|" in base
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    custom = METRICS.get("judge:custom")
    first = custom(protocol=str(_write(a, GOOD)), cache=False).signature
    assert first == custom(protocol=str(_write(b, GOOD)), cache=False).signature
    assert "|protocol:mine|protocol_version:1|protocol_sha256:" in first
    assert first != custom(protocol=str(_write(b, GOOD.replace("Rate", "Judge"))), cache=False).signature


def test_a_step1_protocol_file_edited_in_place_changes_the_signature(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dialogue protocol names its step-1 protocol, here by path: editing that file changed no signature, so
    the score cache answered with the scores of the old prompt."""
    from importlib.resources import files

    monkeypatch.chdir(tmp_path)
    builtin = files("dialeval.judges") / "protocols"
    detail = (builtin / "cpdscore-detail.yaml").read_text(encoding="utf-8")
    (tmp_path / "detail.yaml").write_text(detail)
    dialogue = (builtin / "cpdscore-dialogue.yaml").read_text(encoding="utf-8")
    by_path = dialogue.replace("step1_protocol: cpdscore-detail", "step1_protocol: detail.yaml")
    (tmp_path / "mine.yaml").write_text(by_path)
    custom = METRICS.get("judge:custom")
    before = custom(protocol="mine.yaml", cache=False).signature
    assert "|step1_protocol_sha256:" in before
    (tmp_path / "detail.yaml").write_text(detail.replace("Score", "Rating", 1))
    assert custom(protocol="mine.yaml", cache=False).signature != before


def test_a_step1_protocol_path_is_read_from_the_folder_of_the_file_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``protocols/mine.yaml`` naming ``detail.yaml`` beside it: the path was read from the current folder, so a
    run from anywhere but ``protocols/`` found no file ("no protocol file .../detail.yaml")."""
    from importlib.resources import files

    builtin = files("dialeval.judges") / "protocols"
    folder = tmp_path / "protocols"
    folder.mkdir()
    (folder / "detail.yaml").write_text((builtin / "cpdscore-detail.yaml").read_text(encoding="utf-8"))
    dialogue = (builtin / "cpdscore-dialogue.yaml").read_text(encoding="utf-8")
    by_path = dialogue.replace("step1_protocol: cpdscore-detail", "step1_protocol: detail.yaml")
    (folder / "mine.yaml").write_text(by_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    step2 = load_protocol(Path("../protocols/mine.yaml"))
    assert Path(step2.step1_protocol).resolve() == (folder / "detail.yaml").resolve()
    assert load_protocol(step2.step1_protocol).name == "cpdscore-detail"
    (elsewhere / "detail.yaml").write_text("not: a protocol\n")  # one in the current folder is not read
    assert "|step1_protocol_sha256:" in METRICS.get("judge:custom")(protocol="../protocols/mine.yaml").signature


def test_judge_custom_refuses_a_file_of_several_dimensions(tmp_path: Path) -> None:
    """judge:custom scored the first dimension only, as "judge:custom": the others were never asked, and nothing
    said so. One dimension is still judged (its {{aspect}} filled in)."""
    asks = GOOD.replace("Rate {{response}}", "Rate the {{aspect}} of {{response}}")
    custom = METRICS.get("judge:custom")
    two = _write(tmp_path, asks + "dimensions:\n  fluency: reads well\n  coherence: follows on\n")
    with pytest.raises(InputError) as err:
        custom(protocol=str(two), cache=False)
    assert (err.value.path, err.value.line, err.value.field) == (str(two), 8, "dimensions")  # line 8: GOOD has 7 lines
    assert "2 dimensions (fluency, coherence)" in err.value.message
    one = custom(protocol=str(_write(tmp_path, asks + "dimensions: {fluency: reads well}\n")), cache=False)
    assert one.protocol.dimension_names == ("fluency",)


def test_judge_custom_refuses_a_file_with_levels(tmp_path: Path) -> None:
    """A user's file with ``levels: 10`` (DialogADV's L1-L10 of a 0-1 score) ran as judge:custom, whose outputs are
    the score and the expected score: the levels the file asked for were never written, and nothing said so. Now
    one error names the file, the line of ``levels`` and the field."""
    unit = GOOD.replace("{min: 1, max: 5}", "{min: 0, max: 1, integer: false}")
    leveled = _write(tmp_path, unit + "levels: 10\n")
    with pytest.raises(InputError) as err:
        METRICS.get("judge:custom")(protocol=str(leveled), cache=False)
    assert (err.value.path, err.value.line, err.value.field) == (str(leveled), 8, "levels")  # line 8: GOOD has 7 lines
    assert "levels" in err.value.message


def test_the_signature_names_the_score_parser_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parser changed what it reads from an answer ("Score: -3" was 3, "Score 4" nothing), and the signature
    did not: the score cache served values parsed the old way under the signature of the new. The parser's version
    is in the signature now, so a change to it leaves the old values behind."""
    import dialeval.judges.parse as parse

    sig = METRICS.get("judge:cpdscore-simple")().signature
    assert f"|judge_parser:{parse.PARSER_VERSION}" in sig
    monkeypatch.setattr(parse, "PARSER_VERSION", parse.PARSER_VERSION + 1)
    assert METRICS.get("judge:cpdscore-simple")().signature != sig
