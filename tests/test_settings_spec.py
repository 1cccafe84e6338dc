"""Each setting is described once (rag/settings/spec.py) and everything else is derived from that description.

A dummy retrieval setting added to the description (a RetrievalConfig subclass with one more field)
shows up in the env parser, the CLI, the inspector links, config_label and the Streamlit form, with
its range enforced in each. Every Settings value is parsed strictly, naming the variable, the value
and what it accepts.
"""

from __future__ import annotations

import dataclasses
import json

import click
import pytest
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

from apptest_pages import APP

from rag.cli.options import setting_options, with_options
from rag.settings.config import AnswerConfig, ChunkConfig, ClusterConfig, RetrievalConfig, Settings
from rag.errors import ConfigError
from rag.settings.labels import config_label
from rag.settings.links import inspector_params, parse_inspector_params
from rag.settings.spec import knobs, setting

# One entry: a weight that only RRF uses, between 0 and 2.
Extended = dataclasses.make_dataclass(
    "Extended",
    [("boost", float, setting(0.25, env="RAGSCOPE_BOOST", cli="--boost", link="boost", label="Boost", lo=0.0, hi=2.0,
                              fusions=("rrf",), group="fusion", step=0.25, tag="boost={}", help="A dummy setting"))],
    bases=(RetrievalConfig,),
    frozen=True,
)  # fmt: skip
ExtendedSettings = dataclasses.make_dataclass(
    "ExtendedSettings", [("retrieval", Extended, dataclasses.field(default=Extended()))], bases=(Settings,), frozen=True
)


def test_a_new_setting_is_read_from_the_environment_with_its_range():
    assert ExtendedSettings.from_env({}).retrieval.boost == 0.25
    read = ExtendedSettings.from_env({"RAGSCOPE_BOOST": "1.5", "RAGSCOPE_FUSION": "rrf"}).retrieval
    assert (read.boost, read.fusion) == (1.5, "rrf")
    for raw in ("3", "-0.5", "nan", "inf", "lots"):
        with pytest.raises(ConfigError) as e:
            ExtendedSettings.from_env({"RAGSCOPE_BOOST": raw})
        assert str(e.value) == f"RAGSCOPE_BOOST must be a number from 0 to 2; got {raw!r}"
    with pytest.raises(ConfigError, match=r"Boost \(boost\) must be a number from 0 to 2; got 2.5"):
        Extended(boost=2.5)


def test_a_new_setting_is_a_cli_option_with_its_range():
    @click.command()
    @setting_options(Extended)
    def show(**options: object) -> None:
        click.echo(json.dumps(dataclasses.asdict(with_options(Extended(), options))))

    runner = CliRunner()
    out = runner.invoke(show, ["--boost", "1.75", "--fusion", "rrf", "--k", "3"])
    assert out.exit_code == 0, out.output
    assert {k: json.loads(out.stdout)[k] for k in ("boost", "fusion", "final_k")} == {
        "boost": 1.75,
        "fusion": "rrf",
        "final_k": 3,
    }
    assert "--boost FLOAT" in runner.invoke(show, ["--help"]).stdout
    bad = runner.invoke(show, ["--boost", "nan"])
    assert (
        bad.exit_code != 0
        and "Invalid value for '--boost': the value must be a number from 0 to 2; got 'nan'" in bad.output
    )


def test_a_new_setting_travels_in_links_and_labels():
    config = Extended(fusion="rrf", boost=1.5)
    params = inspector_params("why?", config)
    assert params["boost"] == "1.5"
    assert "boost" not in inspector_params("why?", Extended())  # at its default, links stay short
    assert parse_inspector_params({k: [v] for k, v in params.items()}, Extended()).config == config
    with pytest.raises(ConfigError, match="link parameter boost must be a number from 0 to 2; got '9'"):
        parse_inspector_params({"boost": ["9"]}, Extended())
    assert config_label(config).startswith("rrf k=60, boost=1.5 · ")
    assert "boost" not in config_label(Extended(boost=1.5))  # dbsf: the setting does not apply, so it is not named


def _form_script() -> None:
    import streamlit as st
    from test_settings_spec import Extended

    from ui import forms

    st.session_state["t_config"] = forms.retrieval_form("t", Extended())


def test_a_new_setting_is_in_the_form_disabled_where_it_does_not_apply():
    at = AppTest.from_function(_form_script, default_timeout=30).run()
    assert not at.exception and not at.error
    boost = at.number_input(key="t_boost")
    assert (boost.label, boost.value, boost.max, boost.disabled) == ("Boost", 0.25, 2.0, True)
    assert "Not used now: only for fusion rrf; fusion is dbsf" in boost.help
    # Under dbsf the RRF k and the dense weight do nothing either; the form says so.
    assert at.number_input(key="t_rrf_k").disabled and at.slider(key="t_dense_weight").disabled
    assert "Not used with fusion dbsf: RRF k, Dense weight, Boost." in [c.value for c in at.caption]
    at.selectbox(key="t_fusion").set_value("rrf").run()
    assert not at.number_input(key="t_boost").disabled and not at.number_input(key="t_rrf_k").disabled
    assert at.slider(key="t_dense_weight").disabled  # weighted_rrf only
    at.number_input(key="t_boost").set_value(1.5).run()
    assert at.session_state["t_config"] == Extended(fusion="rrf", boost=1.5)
    # The PRF numbers wait for PRF.
    assert at.number_input(key="t_prf_docs").disabled
    at.checkbox(key="t_prf").check().run()
    assert not at.number_input(key="t_prf_docs").disabled and at.session_state["t_config"].prf


# --- strict parsing of every setting -------------------------------------------------------------------------


def _bad_values(knob) -> list[str]:  # noqa: ANN001
    if knob.kind is bool:
        return ["maybe", "2"]
    if knob.choices:
        return ["bogus"]
    if knob.kind in (int, float):
        bad = ["abc", "nan", "inf", "-inf"] + (["1.5"] if knob.kind is int else [])
        bad += [f"{knob.lo - 1:g}"] if knob.lo is not None else []
        bad += [f"{knob.hi + 1:g}"] if knob.hi is not None else []
        return bad + ([f"{knob.lo:g}"] if knob.lo_open else [])
    return []


@pytest.mark.parametrize(
    "knob",
    [k for cls in (Settings, ChunkConfig, RetrievalConfig, AnswerConfig, ClusterConfig) for k in knobs(cls)],
    ids=lambda k: k.env,
)
def test_every_setting_refuses_a_bad_value_naming_variable_value_and_range(knob):
    assert knob.env, f"{knob.name} has no environment variable"
    for raw in _bad_values(knob):
        with pytest.raises(ConfigError) as e:
            Settings.from_env({knob.env: raw}, secrets_path=None)
        assert str(e.value) == f"{knob.env} must be {knob.allowed}; got {raw!r}"


def test_issue_examples_are_config_errors():
    with pytest.raises(ConfigError, match="RAGSCOPE_MIN_SCORE must be a finite number, or empty for none; got 'abc'"):
        Settings.from_env({"RAGSCOPE_MIN_SCORE": "abc"})
    with pytest.raises(ConfigError, match=r"RAGSCOPE_PRF must be 1 or 0 .*; got 'maybe'"):
        Settings.from_env({"RAGSCOPE_PRF": "maybe"})
    with pytest.raises(ConfigError, match="RAGSCOPE_MAX_UPLOAD_MB must be a whole number from 1 to 10000; got '-1'"):
        Settings.from_env({"RAGSCOPE_MAX_UPLOAD_MB": "-1"})
    good = Settings.from_env(
        {"RAGSCOPE_MIN_SCORE": "0.2", "RAGSCOPE_PRF": "on", "RAGSCOPE_MAX_UPLOAD_MB": "10", "RAGSCOPE_LLM_TIMEOUT": "5"}
    )
    assert (good.retrieval.min_score, good.retrieval.prf, good.max_upload_mb, good.answer.timeout_s) == (
        0.2,
        True,
        10,
        5.0,
    )


def test_secrets_toml_values_are_parsed_the_same_way(tmp_path):
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('RAGSCOPE_CANDIDATES = 40\nragscope_prf = true\nRAGSCOPE_FINAL_K = "7"\n')
    read = Settings.from_env({}, secrets_path=secrets).retrieval
    assert (read.candidates, read.prf, read.final_k) == (40, True, 7)
    secrets.write_text("RAGSCOPE_CANDIDATES = 4000\n")
    with pytest.raises(ConfigError, match="RAGSCOPE_CANDIDATES must be a whole number from 1 to 2000; got 4000"):
        Settings.from_env({}, secrets_path=secrets)


def test_a_bad_setting_stops_the_app_with_the_message(monkeypatch):
    monkeypatch.setenv("RAGSCOPE_MIN_SCORE", "abc")
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert not at.exception
    assert [e.value.replace("\\", "") for e in at.error] == [
        "Configuration error: RAGSCOPE_MIN_SCORE must be a finite number, or empty for none; got 'abc'"
    ]


def test_inspector_ask_and_eval_draw_the_same_form_with_the_same_limits(settings):
    from apptest_pages import open_page

    from rag.eval.qsets import install_sample_set

    install_sample_set(settings.data_dir)  # the Eval tab shows its form once a set exists
    pages = {"inspector": open_page("pages/inspector.py"), "ask": open_page("pages/ask.py", timeout=120)}
    limits = {}
    for prefix, at in (("inspector", pages["inspector"]), ("ask", pages["ask"]), ("eval", pages["ask"])):
        assert not at.exception
        limits[prefix] = {
            key: (w.min, w.max)
            for key in ("candidates", "k", "rrf_k", "prf_docs", "prf_terms", "dense_prf_docs")
            for w in [at.number_input(key=f"{prefix}_{key}")]
        } | {
            "reranker": tuple(at.selectbox(key=f"{prefix}_reranker").options),
            "fusion": tuple(at.selectbox(key=f"{prefix}_fusion").options),
        }
    assert limits["inspector"] == limits["ask"] == limits["eval"]
    assert limits["ask"]["candidates"] == (1, 2000) and limits["ask"]["k"] == (1, 4000)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "foo",
            "RAGSCOPE_RERANKER: unknown reranker 'foo'; use one of none, dense-cosine, score-fusion, sentence-maxsim, maxsim-fusion",
        ),
        ("dense-cosine:0.3", "unknown reranker 'dense-cosine:0.3'"),
        ("score-fusion:1.5", "score-fusion weight must be between 0 and 1; got 1.5"),
        ("sentence-maxsim:x", "the part after ':' must be a number between 0 and 1"),
        ("cross-encoder:", "cross-encoder needs a model"),
    ],
)
def test_a_bad_reranker_name_fails_when_settings_load_like_a_bad_fusion(value, message):
    with pytest.raises(ConfigError, match="cross-encoder:<model name or path>" if value == "foo" else "."):
        Settings.from_env({"RAGSCOPE_RERANKER": value})
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"RAGSCOPE_RERANKER": value})
    assert message in str(caught.value)


def test_every_reranker_form_loads():
    for name in (
        "none",
        "dense-cosine",
        "score-fusion",
        "score-fusion:0.3",
        "sentence-maxsim:1",
        "maxsim-fusion:0.6",
        "cross-encoder:/models/ce",
    ):
        assert Settings.from_env({"RAGSCOPE_RERANKER": name}).retrieval.reranker == name


def test_every_setting_of_the_product_has_its_words_in_settings_toml():
    """The product's own settings are described in rag/settings/settings.toml, each with a label; a table
    naming no field, a key a Spec lacks and a key given twice are refused when the class is read."""
    for cls in (ChunkConfig, RetrievalConfig, AnswerConfig, Settings):
        described = knobs(cls)
        assert described and all(k.label for k in described), cls.__name__
    assert knobs(RetrievalConfig)[0].spec.names == (("dense", "dense only"), ("sparse", "sparse only"))


@pytest.mark.parametrize(
    ("row", "code", "refused"),
    [
        ({"RetrievalConfig": {"no_such_field": {"label": "x"}}}, {}, "do not exist: \\['no_such_field'\\]"),
        ({"Probe": {"size": {"colour": "red"}}}, {}, "unknown keys \\['colour'\\]"),
        ({"Probe": {"size": {"label": "size"}}}, {"label": "Size"}, "\\['label'\\] given twice"),
    ],
)
def test_settings_toml_refuses_what_describes_nothing(monkeypatch, row, code, refused):
    from rag.settings import spec

    probe = dataclasses.make_dataclass("Probe", [("size", int, setting(3, **code))], frozen=True)
    monkeypatch.setattr(spec, "_rows", lambda: row)
    spec.knobs.cache_clear()
    try:
        with pytest.raises(ConfigError, match=refused):
            knobs(RetrievalConfig if "RetrievalConfig" in row else probe)
    finally:
        spec.knobs.cache_clear()
