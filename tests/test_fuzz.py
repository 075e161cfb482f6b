"""Bad input never produces a traceback: fuzzed config files and command lines each end
in one clear `massgen: error:` line and exit 1 (or are accepted, exit 0).

The configs are random YAML documents built from the schema's own key names (so they get
past the first key and reach the nested validators), random mutations of the shipped
presets, and raw text and bytes. The command lines mix every flag with junk values, and
always carry `--validate`, so no team ever runs.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from massgen import cli
from massgen.config.backend_groups import FLAT_KEYS, GROUPS
from massgen.config.schema import AgentConfig, BackendConfig, MassgenConfig, OrchestratorConfig

PRESETS = sorted((Path(cli.__file__).parent.parent / "configs").rglob("*.yaml"))
KEYS = sorted(
    {
        *MassgenConfig.model_fields,
        *AgentConfig.model_fields,
        *BackendConfig.model_fields,
        # the backend's groups, nested and flat (config/backend_groups.py)
        *(field for model, _ in GROUPS.values() for field in model.model_fields),
        *FLAT_KEYS,
        *OrchestratorConfig.model_fields,
        "agent",
        "command",
        "args",
        "url",
        "name",
        "path",
        "permission",
        "env",
        # the predecessor's shapes, translated before validation (config/predecessor/)
        "text",
        "verbosity",
        "reasoning",
        "display",
        "append_system_prompt",
        "coordination",
        "rules",
        "allow",
        "ask",
        "deny",
        "function",
        "preset_args",
        "command_line_execution_mode",
    }
)
FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=24)
    | st.sampled_from(["openai", "claude", "gemini", "grok", "local", "chatcompletion", "@x"])
)
keys = st.sampled_from(KEYS) | st.text(max_size=12)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=6),
    max_leaves=30,
)


def _run(argv: list[str]) -> tuple[int, str, str]:
    """`massgen ARGV` in-process: its exit code, stdout and stderr; any exception but a
    clean exit escapes and fails the test with its traceback."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exit_:  # argparse: --help, --version, and its own errors
            code = exit_.code if isinstance(exit_.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def _assert_clean(code: int, err: str) -> None:
    assert code in (0, 1), err
    assert "Traceback" not in err
    if code == 1:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("massgen: error: "), err


def _validate(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "fuzzed.yaml"
    path.write_bytes(content)
    code, _, err = _run(["--validate", str(path)])
    _assert_clean(code, err)


def _mutated(document: object, where: int, value: object) -> object:
    """`document` with its `where`-th leaf (counted depth first) replaced by `value`."""
    count = [0]

    def walk(node: object) -> object:
        if isinstance(node, dict):
            return {key: walk(child) for key, child in node.items()}
        if isinstance(node, list):
            return [walk(child) for child in node]
        count[0] += 1
        return value if count[0] - 1 == where else node

    return walk(document)


pytestmark = pytest.mark.usefixtures("in_tmp")


@FUZZ
@given(document=documents)
def test_a_random_config_is_accepted_or_refused_in_one_line(tmp_path, document):
    _validate(tmp_path, yaml.safe_dump(document, allow_unicode=True).encode())


@FUZZ
@given(
    preset=st.sampled_from(PRESETS),
    where=st.integers(min_value=0, max_value=40),
    value=documents,
)
def test_a_preset_with_one_value_changed_is_accepted_or_refused_in_one_line(
    tmp_path, preset, where, value
):
    document = _mutated(yaml.safe_load(preset.read_text()), where, value)
    _validate(tmp_path, yaml.safe_dump(document, allow_unicode=True).encode())


@FUZZ
@given(content=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_raw_bytes_as_a_config_are_refused_in_one_line(tmp_path, content):
    _validate(tmp_path, content)


FLAGS = [
    action.option_strings[0] for action in cli.build_parser()._actions if action.option_strings
]
junk = st.text(max_size=12) | st.sampled_from(["-1", "nan", "1e999", "@examples/", "--", "-"])


@FUZZ
@given(words=st.lists(st.sampled_from(FLAGS) | junk, max_size=8), at=st.integers(0, 8))
def test_a_random_command_line_exits_cleanly(tmp_path, words, at):
    config = tmp_path / "missing.yaml"
    argv = [*words[:at], "--validate", str(config), *words[at:]]
    code, _, err = _run(argv)
    _assert_clean(code, err)
