"""The canonical tool vocabulary: every harness spelling lands on the same name and fields."""

from __future__ import annotations

import shlex

import pytest
from dsh_policy.core.frozen import thaw
from dsh_policy.policy.hooks.protocol.vocabulary import (
    ALIASES,
    CANONICAL_TOOLS,
    CanonicalCall,
    ToolInputError,
    canonicalize,
    patch_paths,
)


def _call(harness, name, args) -> CanonicalCall:  # type: ignore[no-untyped-def]
    result = canonicalize(harness, name, args)
    assert isinstance(result, CanonicalCall), result
    return result


def test_claude_bash_becomes_shell_and_keeps_extra_fields() -> None:
    call = _call("claude-code", "Bash", {"command": "ls -la", "description": "list", "timeout": 5})
    assert (call.name, call.original_name, call.harness) == ("shell", "Bash", "claude-code")
    assert thaw(call.args) == {"command": "ls -la", "description": "list", "timeout": 5}


@pytest.mark.parametrize(
    ("tool", "args", "canonical", "expected"),
    [
        ("Read", {"file_path": "/w/a.py", "limit": 10}, "read_file", {"path": "/w/a.py", "limit": 10}),
        ("Write", {"file_path": "/w/a", "content": "x"}, "write_file", {"path": "/w/a", "content": "x"}),
        (
            "Edit",
            {"file_path": "/w/a", "old_string": "a", "new_string": "b", "replace_all": True},
            "edit_file",
            {"path": "/w/a", "old_string": "a", "new_string": "b", "replace_all": True},
        ),
        (
            "WebFetch",
            {"url": "https://x.test", "prompt": "sum"},
            "web_fetch",
            {"url": "https://x.test", "prompt": "sum"},
        ),
        ("LS", {"path": "/w"}, "list_dir", {"path": "/w"}),
        (
            "NotebookEdit",
            {"notebook_path": "/w/n.ipynb", "new_source": "print(1)", "cell_id": "c1"},
            "edit_file",
            {"path": "/w/n.ipynb", "new_string": "print(1)", "old_string": "", "cell_id": "c1"},
        ),
    ],
)
def test_claude_tools_map_names_and_fields(tool, args, canonical, expected) -> None:  # type: ignore[no-untyped-def]
    call = _call("claude-code", tool, args)
    assert call.name == canonical
    assert thaw(call.args) == expected
    assert set(CANONICAL_TOOLS[canonical]) <= set(expected) | {"content", "old_string", "new_string"}


def test_multi_edit_folds_every_edit_into_new_string() -> None:
    call = _call(
        "claude-code",
        "MultiEdit",
        {
            "file_path": "/w/a",
            "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "SECRET"}],
        },
    )
    assert call.name == "edit_file"
    assert call.args["path"] == "/w/a"
    assert "SECRET" in call.args["new_string"]
    assert len(call.args["edits"]) == 2


def test_codex_argv_is_shell_quoted_so_the_wrapper_is_visible() -> None:
    call = _call("codex", "shell", {"command": ["bash", "-lc", "rm -rf /"], "workdir": "/w"})
    assert call.name == "shell"
    assert call.args["command"] == "bash -lc 'rm -rf /'"
    assert shlex.split(call.args["command"]) == ["bash", "-lc", "rm -rf /"]
    assert call.args["argv"] == ("bash", "-lc", "rm -rf /")
    assert call.args["workdir"] == "/w"


@pytest.mark.parametrize(
    "name", ["Bash", "shell", "local_shell", "container.exec", "shell_command", "exec_command"]
)
def test_every_codex_shell_spelling_is_shell(name: str) -> None:
    assert _call("codex", name, {"command": "echo hi"}).name == "shell"


def test_codex_exec_command_cmd_field_is_the_command() -> None:
    assert _call("codex", "exec_command", {"cmd": "echo hi"}).args["command"] == "echo hi"


def test_codex_apply_patch_lists_every_touched_path() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/a.py\n*** Move to: src/b.py\n@@\n-x\n+y\n"
        "*** Add File: .env\n+KEY=1\n*** Delete File: old.txt\n*** End Patch\n"
    )
    call = _call("codex", "apply_patch", {"command": patch})
    assert call.name == "apply_patch"
    assert call.args["paths"] == ("src/a.py", "src/b.py", ".env", "old.txt")
    assert call.args["patch"] == patch
    assert patch_paths("no headers") == []


def test_mcp_and_unknown_tools_keep_name_and_args() -> None:
    for harness in ("claude-code", "codex", "dsh"):
        call = _call(harness, "mcp__github__create_issue", {"title": "t", "body": {"x": [1, 2]}})
        assert (call.name, call.original_name) == ("mcp__github__create_issue", "mcp__github__create_issue")
        assert thaw(call.args) == {"title": "t", "body": {"x": [1, 2]}}


def test_dsh_harness_is_already_canonical() -> None:
    call = _call("dsh", "read_file", {"path": "/w"})
    assert (call.name, thaw(call.args)) == ("read_file", {"path": "/w"})
    assert ALIASES["dsh"] == {}


@pytest.mark.parametrize(
    ("harness", "tool", "args", "fragment"),
    [
        ("claude-code", "Bash", {}, "missing 'command'"),
        ("claude-code", "Bash", {"command": 7}, "string or a non-empty list"),
        ("codex", "shell", {"command": []}, "non-empty list"),
        ("codex", "shell", {"command": ["ls", 3]}, "non-empty list"),
        ("claude-code", "Read", {"file_path": ["a"]}, "'path' must be a string"),
        ("claude-code", "Read", {"file_path": "a", "path": "b"}, "both 'file_path' and 'path'"),
        ("claude-code", "MultiEdit", {"file_path": "a", "edits": "x"}, "non-empty list"),
        ("claude-code", "MultiEdit", {"file_path": "a", "edits": [{"old_string": 1}]}, "edits[0]"),
        ("codex", "apply_patch", {"command": 3}, "patch text"),
        ("claude-code", "Write", "not an object", "JSON object"),
        ("claude-code", "mcp__s__t", ["a"], "JSON object"),
        ("claude-code", "mcp__s__t", {"x": float("nan")}, "not JSON"),
    ],
)
def test_malformed_known_tool_input_is_an_error_value(harness, tool, args, fragment) -> None:  # type: ignore[no-untyped-def]
    result = canonicalize(harness, tool, args)
    assert isinstance(result, ToolInputError)
    assert fragment in str(result)
    assert tool in str(result)
