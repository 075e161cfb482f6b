"""Python function tools (`custom_tools:`): schema from the signature, sync and async
functions, errors as results, declared effects, config errors naming file and function,
and a whole team on the fake provider using a function that adds two numbers."""

from __future__ import annotations

import asyncio
import json
import textwrap
import threading
import time
from pathlib import Path

import pytest

import massgen
from massgen.config import load_config
from massgen.core.effects import External, Read
from massgen.core.errors import ConfigError
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.runs.toolboxes import python_toolboxes
from massgen.testing import FakeProvider, Reply, tool_first
from massgen.tools.python import PythonToolbox, effects, tool_from_function

CTX = ToolContext(agent="a1")

ADDER = '''
"""Math tools, the predecessor's way."""


async def two_num_tool(x: int, y: int) -> str:
    """Add two numbers together.

    Args:
        x: First number
        y: Second number
    """
    return f"The sum of {x} and {y} is {x + y}"


def slow_multiply(x: float, y: float = 2.0) -> float:
    """Multiply two numbers."""
    import threading
    return x * y


def broken(x: int) -> int:
    raise RuntimeError("no luck today")
'''


def call(name: str, **arguments) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=json.dumps(arguments))


def write_tools(directory: Path, text: str = ADDER) -> Path:
    file = directory / "tools" / "math_tools.py"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(textwrap.dedent(text))
    return file


def config_file(directory: Path, tools: list[dict], base_url: str = "http://x/v1") -> Path:
    backend = {"type": "chatcompletion", "model": "m1", "base_url": base_url, "api_key": "k"}
    data = {"agents": [{"id": "a1", "backend": {**backend, "custom_tools": tools}}]}
    file = directory / "team.json"
    file.write_text(json.dumps(data))
    return file


def box_for(tmp_path: Path, tools: list[dict]) -> PythonToolbox:
    write_tools(tmp_path)
    return box_for_written(tmp_path, tools)


def box_for_written(tmp_path: Path, tools: list[dict]) -> PythonToolbox:
    boxes = python_toolboxes(load_config(config_file(tmp_path, tools)))
    box = boxes["a1"]
    assert isinstance(box, PythonToolbox)
    return box


# ---------------------------------------------------------------- the schema


def test_schema_comes_from_the_signature_and_the_docstring():
    def area(width: float, height: float = 1.0, unit: str = "m") -> str:
        """Area of a rectangle.

        More words that are not the summary.

        Args:
            width: Width of the rectangle
            height: Its height
        """
        return f"{width * height}{unit}^2"

    tool = tool_from_function(area, "area", preset={"unit": "cm"})
    assert tool.spec.description == "Area of a rectangle."
    params = tool.spec.parameters
    assert params["required"] == ["width"]
    assert set(params["properties"]) == {"width", "height"}  # the preset is hidden
    assert params["properties"]["width"]["type"] == "number"
    assert params["properties"]["width"]["description"] == "Width of the rectangle"
    assert params["additionalProperties"] is False


def test_preset_naming_no_parameter_is_refused():
    with pytest.raises(ValueError, match="nope"):
        tool_from_function(lambda x: x, "f", preset={"nope": 1})


async def test_default_params_are_shown_used_when_absent_and_overridable(tmp_path):
    entry = {
        "name": "mul",
        "path": "tools/math_tools.py",
        "function": "slow_multiply",
        "default_params": {"y": 10.0},
    }
    box = box_for(tmp_path, [entry])
    (spec,) = box.specs()
    assert spec.parameters["properties"]["y"]["default"] == 10.0
    assert spec.parameters["required"] == ["x"]
    assert (await box.call(call("mul", x=3), CTX)).content == "30.0"
    assert (await box.call(call("mul", x=3, y=2), CTX)).content == "6.0"


def test_default_params_naming_no_parameter_is_refused():
    with pytest.raises(ValueError, match="default_params names no parameter of `f`: nope"):
        tool_from_function(lambda x: x, "f", defaults={"nope": 1})


# ---------------------------------------------------------------- calls


async def test_async_and_sync_functions_both_run(tmp_path):
    box = box_for(
        tmp_path,
        [
            {
                "name": ["add", "mul"],
                "path": "tools/math_tools.py",
                "function": ["two_num_tool", "slow_multiply"],
                "category": "math",
            }
        ],
    )
    assert [s.name for s in box.specs()] == ["add", "mul"]
    added = await box.call(call("add", x=2, y=3), CTX)
    assert (added.content, added.is_error) == ("The sum of 2 and 3 is 5", False)
    multiplied = await box.call(call("mul", x=4), CTX)
    assert multiplied.content == "8.0"


async def test_a_sync_function_runs_off_the_event_loop():
    loop_thread = threading.get_ident()
    ran_in: list[int] = []

    def where() -> str:
        ran_in.append(threading.get_ident())
        return "ok"

    box = PythonToolbox([tool_from_function(where, "where")], timeout_seconds=5)
    assert (await box.call(call("where"), CTX)).content == "ok"
    assert ran_in and ran_in[0] != loop_thread


async def test_bad_arguments_an_exception_and_a_timeout_are_error_results():
    def broken(x: int) -> int:
        raise RuntimeError("no luck today")

    async def sleepy() -> str:
        await asyncio.sleep(10)
        return "late"

    box = PythonToolbox(
        [tool_from_function(broken, "broken"), tool_from_function(sleepy, "sleepy")],
        timeout_seconds=0.2,
    )
    wrong = await box.call(call("broken", x="three"), CTX)
    assert wrong.is_error and "x" in wrong.content and "integer" in wrong.content
    raised = await box.call(call("broken", x=3), CTX)
    assert raised.is_error and "RuntimeError: no luck today" in raised.content
    late = await box.call(call("sleepy"), CTX)
    assert late.is_error and "timed out after 0.2s" in late.content


def test_effects_are_external_python_unless_declared():
    def plain(x: int) -> int:
        return x

    @effects(lambda args: (Read(Path(args["path"])),))
    def reader(path: str) -> str:
        return path

    box = PythonToolbox(
        [tool_from_function(plain, "plain"), tool_from_function(reader, "reader")], 5
    )
    assert box.effects(call("plain", x=1), CTX) == (External("python", "plain"),)
    assert box.effects(call("reader", path="/etc/hosts"), CTX) == (Read(Path("/etc/hosts")),)
    with pytest.raises(ValueError):
        box.effects(call("reader"), CTX)


# ---------------------------------------------------------------- config errors


def test_a_missing_file_or_function_is_a_config_error_naming_both(tmp_path):
    write_tools(tmp_path)
    missing = config_file(tmp_path, [{"name": "add", "path": "tools/nope.py", "function": "add"}])
    with pytest.raises(ConfigError) as error:
        load_config(missing)
    assert "agents[0].backend.custom_tools[0].path" in str(error.value)
    assert "tools/nope.py" in str(error.value)
    wrong = config_file(
        tmp_path, [{"name": "add", "path": "tools/math_tools.py", "function": "wrong_add"}]
    )
    with pytest.raises(ConfigError) as error:
        load_config(wrong)
    text = str(error.value)
    assert "custom_tools[0].function" in text and "wrong_add" in text
    assert "math_tools.py" in text and "two_num_tool" in text  # what is there instead


def test_a_file_that_does_not_import_is_a_config_error_when_tools_open(tmp_path):
    write_tools(
        tmp_path,
        "raise RuntimeError('broken at import')\n\ndef add(x: int) -> int:\n    return x\n",
    )
    config = load_config(config_file(tmp_path, [{"name": "add", "path": "tools/math_tools.py"}]))
    with pytest.raises(ConfigError) as error:
        python_toolboxes(config, source="team.json")
    text = str(error.value)
    assert text.startswith("team.json: agents[0].backend.custom_tools[0].path")
    assert "does not import (RuntimeError: broken at import)" in text


def test_a_path_without_a_function_list_uses_the_name(tmp_path):
    write_tools(tmp_path)
    config = load_config(
        config_file(tmp_path, [{"name": ["two_num_tool"], "path": "tools/math_tools.py"}])
    )
    (entry,) = config.agents[0].backend.custom_tools
    assert Path(entry.path).is_absolute()
    assert entry.tools() == (("two_num_tool", "two_num_tool", None),)


def test_a_tool_without_a_path_is_the_predecessors_built_in(tmp_path):
    config = load_config(config_file(tmp_path, [{"name": ["two_num_tool"]}]))
    (entry,) = config.agents[0].backend.custom_tools
    assert Path(entry.path).name == "_basic.py"
    (box,) = python_toolboxes(config, source="team.json").values()
    result = asyncio.run(box.call(ToolCall("c1", "two_num_tool", '{"x": 20, "y": 22}'), CTX))
    assert result.content == "The sum of 20 and 22 is 42"


def test_a_function_that_is_no_built_in_needs_a_path(tmp_path):
    entry = {"name": "two_num_tool", "function": "wrong_two_num_tool"}
    with pytest.raises(ConfigError, match=r"no `path` for `wrong_two_num_tool`.*built-in"):
        load_config(config_file(tmp_path, [entry]))


# ---------------------------------------------------------------- a whole team


def present_selected(request: dict) -> Reply:
    user = request["messages"][-1]["content"]
    return Reply(text="Final. " + user.split("<SELECTED ANSWER", 1)[-1][:200])


# Add with the tool before answering; vote; present the selected answer.
adder_agent = tool_first(
    "two_num_tool", {"x": 1234, "y": 4321}, lambda sum_: f"Result: {sum_}", present_selected
)


def test_a_team_uses_a_custom_tool_and_the_answer_has_its_result(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_tools(tmp_path)
    tool = {
        "name": ["two_num_tool"],
        "category": "math",
        "path": "tools/math_tools.py",
        "function": ["two_num_tool"],
    }
    with FakeProvider(adder_agent) as fake:
        file = config_file(tmp_path, [tool], fake.base_url)
        data = json.loads(file.read_text())
        second = json.loads(json.dumps(data["agents"][0]))
        second.update(id="a2")
        second["backend"]["model"] = "m2"
        data["agents"].append(second)
        file.write_text(json.dumps(data))
        result = massgen.run("What is 1234 + 4321?", config=str(file), logs=False)
    assert result.status == "ok"
    assert "The sum of 1234 and 4321 is 5555" in result.answer


def test_a_hung_sync_function_times_out_without_holding_the_loop_open():
    release = threading.Event()

    def hangs() -> str:
        release.wait(30)
        return "late"

    box = PythonToolbox([tool_from_function(hangs, "hangs")], timeout_seconds=0.2)
    started = time.monotonic()
    try:
        result = asyncio.run(box.call(call("hangs"), CTX))  # closing the loop joins nothing
        assert result.is_error and "timed out after 0.2s" in result.content
        assert time.monotonic() - started < 5
    finally:
        release.set()


def test_a_tool_importing_a_missing_module_is_refused_at_load(tmp_path):
    write_tools(
        tmp_path,
        "from massgen.backend.capabilities import x\n\ndef f(x: int) -> int:\n    return x\n",
    )
    with pytest.raises(ConfigError) as error:
        load_config(config_file(tmp_path, [{"name": "f", "path": "tools/math_tools.py"}]))
    text = str(error.value)
    assert "custom_tools[0].path" in text and "`massgen.backend.capabilities`" in text
    assert "predecessor" in text


def test_a_custom_tool_may_not_take_the_name_of_one_of_ours(tmp_path):
    write_tools(tmp_path)
    tool = {"name": "read_file", "path": "tools/math_tools.py", "function": "two_num_tool"}
    config = load_config(config_file(tmp_path, [tool]))
    with pytest.raises(ConfigError) as error:
        python_toolboxes(config, source="team.json")
    assert "`read_file` has the name of one of massgen's own tools" in str(error.value)


async def test_a_predecessor_tool_file_logging_with_its_logger_config_loads(tmp_path):
    write_tools(
        tmp_path,
        '''
from massgen.logger_config import logger
from massgen.tool._result import ExecutionResult, TextContent


def shout(text: str) -> ExecutionResult:
    """Upper-case the text."""
    logger.info("shouting {}", text)
    return ExecutionResult(output_blocks=[TextContent(data=text.upper())])
''',
    )
    box = box_for_written(tmp_path, [{"name": "shout", "path": "tools/math_tools.py"}])
    assert (await box.call(call("shout", text="hi"), CTX)).content == "HI"


async def test_a_tool_file_in_the_predecessors_package_tree_imports_relatively(tmp_path):
    """The predecessor's own tool files sit in its package (`massgen/tool/<sub>/`) and
    import its result types relatively (`from .._result import ...`); they load here."""
    file = tmp_path / "massgen" / "tool" / "_file_handlers" / "_file_operations.py"
    file.parent.mkdir(parents=True)
    file.write_text(
        "from .._result import ExecutionResult, TextContent\n\n\n"
        "def shout(text: str) -> ExecutionResult:\n"
        '    """Upper-case the text."""\n'
        "    return ExecutionResult(output_blocks=[TextContent(data=text.upper())])\n"
    )
    path = "massgen/tool/_file_handlers/_file_operations.py"
    box = box_for_written(tmp_path, [{"name": "shout", "path": path}])
    assert (await box.call(call("shout", text="hi"), CTX)).content == "HI"
