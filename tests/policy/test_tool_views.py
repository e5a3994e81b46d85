"""A tool call is also judged as the canonical calls its arguments describe, whatever its name
(policy/decide/tool_views.py, policy/decide/view_calls.py). The calls below are written in our own
spellings of the shapes the clients and MCP servers use, never copied from a corpus."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.core.frozen import freeze_json
from dsh_policy.policy.cli import main
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.decide.tool_views import views
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.patch_files import patch_paths

PACK = """
rules:
  - {id: no-hooks, stage: pre-execute, match: {tools: [write_file, edit_file]},
     when: 'args.path.contains(".git/hooks/")', decision: deny, message: no git hooks}
  - {id: no-keys, stage: pre-execute, match: {tools: [read_file]},
     when: 'args.path.contains(".ssh/")', decision: deny, message: no keys}
  - {id: ask-rm, stage: pre-execute, match: {tools: [shell]}, when: 'args.command.startsWith("rm ")',
     decision: ask, message: deleting}
  - {id: ask-post, stage: pre-execute, match: {tools: [http_request]}, decision: ask, message: sending}
  - {id: ask-pushes, stage: pre-execute, match: {tools: ["mcp__*__push_*"]}, decision: ask, message: pushing}
  - {id: no-root-mv, stage: guard, match: {tools: [shell]}, when: 'args.command.contains(" /etc/")',
     message: system files}
"""


def call(tool: str, **args: Any) -> ToolCallEvent:
    return ToolCallEvent(tool, freeze_json(args), turn=1, step=1)


def only(tool: str, args: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = views(tool, args)
    assert found is not None, (tool, args)
    return list(found.calls)


# -- what the arguments mean ----------------------------------------------------------------------


def test_a_canonical_call_has_no_views() -> None:
    assert views("shell", {"command": "ls"}) is None
    assert views("write_file", {"path": "a.py", "content": "x = 1\n"}) is None
    assert views("web_fetch", {"url": "https://example.org/"}) is None
    assert (
        views("apply_patch", {"patch": "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch", "paths": ["a"]})
        is None
    )


def test_a_path_with_a_whole_text_is_a_write_under_any_name_or_field() -> None:
    assert only("saveFile", {"TargetFile": "src/x.go", "CodeContent": "package x\n"}) == [
        ("write_file", {"path": "src/x.go", "content": "package x\n"})
    ]
    found = views("write_file", {"file_path": "src/x.go", "content": "package x\n"})
    assert found is not None and found.replaces  # a canonical name with another client's fields


def test_edits_chunks_and_diffs_become_one_edit_with_every_new_text() -> None:
    edits = {"path": "a.ts", "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}]}
    assert only("mcp__fs__edit_file", edits) == [
        ("edit_file", {"path": "a.ts", "old_string": "a\nc", "new_string": "b\nd"})
    ]
    chunks = {"TargetFile": "m.go", "ReplacementChunks": [{"TargetContent": "x", "ReplacementContent": "y"}]}
    assert only("patch_region", chunks) == [
        ("edit_file", {"path": "m.go", "old_string": "x", "new_string": "y"})
    ]
    diff = "------- SEARCH\nold line\n=======\nnew line\n+++++++ REPLACE"
    assert only("swap_in_file", {"path": "f.txt", "diff": diff}) == [
        ("edit_file", {"path": "f.txt", "old_string": "old line", "new_string": "new line"})
    ]
    unified = "@@ -1 +1 @@\n-before\n+after\n"
    assert only("diff_edit", {"file": "f.txt", "diff": unified})[0][1]["new_string"] == "after"


def test_an_editor_sub_command_is_not_a_command_line() -> None:
    assert only("text_editor", {"command": "view", "path": "notes.md"}) == [
        ("read_file", {"path": "notes.md"})
    ]
    assert only("text_editor", {"command": "create", "path": "n.md", "file_text": "hi"}) == [
        ("write_file", {"path": "n.md", "content": "hi"})
    ]
    inserted = only("text_editor", {"command": "insert", "path": "n.md", "insert_line": 2, "new_str": "x"})
    assert inserted == [("edit_file", {"path": "n.md", "old_string": "", "new_string": "x"})]


def test_command_lines_and_argv_lists_are_shell_calls() -> None:
    assert only("terminal", {"CommandLine": "make test", "Cwd": "/w"}) == [
        ("shell", {"command": "make test"})
    ]
    found = views("shell", {"command": ["bash", "-lc", "echo 'a b'"]})
    assert found is not None and found.replaces
    assert found.calls == (("shell", {"command": "bash -lc 'echo '\"'\"'a b'\"'\"''"}),)


def test_patches_anywhere_with_their_deletions_and_moves() -> None:
    patch = (
        "*** Begin Patch\n*** Delete File: old.py\n*** Update File: a.py\n*** Move to: b.py\n"
        "@@\n-x\n+y\n*** End Patch\n"
    )
    found = only("apply_patch", {"input": patch})
    assert found[0] == ("apply_patch", {"patch": patch, "paths": ["old.py", "a.py", "b.py"]})
    assert ("shell", {"command": "rm -f -- old.py"}) in found
    assert ("shell", {"command": "mv -- a.py b.py"}) in found
    canonical = views("apply_patch", {"patch": patch, "paths": ["old.py", "a.py", "b.py"]})
    assert canonical is not None and not canonical.replaces
    assert [name for name, _ in canonical.calls] == ["shell", "shell"]
    assert only("exec", {"command": ["apply_patch", patch]})[0][0] == "apply_patch"
    assert patch_paths("--- a/x.py\n+++ b/x.py\n@@\n-a\n+b\n") == ["x.py"]


def test_moves_copies_deletes_and_folders_by_arguments_and_name() -> None:
    assert only("mcp__fs__move_file", {"source": "a b", "destination": "/c"}) == [
        ("shell", {"command": "mv -- 'a b' /c"})
    ]
    assert only("copy_path", {"src": "a", "dst": "b"}) == [("shell", {"command": "cp -R -- a b"})]
    assert only("mcp__files__delete_entry", {"path": "tmp"}) == [("shell", {"command": "rm -rf -- tmp"})]
    assert only("create_folder", {"path": "out"}) == [("shell", {"command": "mkdir -p -- out"})]
    assert only("mcp__fs__list_directory", {"path": "~/.ssh"}) == [("list_dir", {"path": "~/.ssh"})]
    # only an MCP tool's own name counts: a server called "remover" does not make a read a delete
    assert only("mcp__remover__stat", {"path": "a"}) == [("read_file", {"path": "a"})]
    assert only("upload", {"paths": ["a", "b"]}) == [
        ("read_file", {"path": "a"}),
        ("read_file", {"path": "b"}),
    ]


def test_urls_prompts_and_code_are_fetches_or_requests() -> None:
    assert only("goto", {"url": "https://docs.example/x?q=1"}) == [
        ("web_fetch", {"url": "https://docs.example/x?q=1"})
    ]
    assert only("call_api", {"endpoint": "https://api.example/v1", "method": "PUT", "json": {"a": 1}}) == [
        ("http_request", {"url": "https://api.example/v1", "method": "PUT", "json": {"a": 1}})
    ]
    assert only("open_resource", {"uri": "file:///home/u/.ssh/id_rsa"}) == [
        ("read_file", {"path": "/home/u/.ssh/id_rsa"})
    ]
    assert views("open_resource", {"uri": "notes://team/today"}) is None
    prompt = "compare https://a.example/x and https://b.example/y."
    fetched = only("web_fetch", {"prompt": prompt})
    assert [args["url"] for _, args in fetched] == ["https://a.example/x", "https://b.example/y"]
    code = "() => fetch('https://c.example/in', {method: 'POST'})"
    assert only("evaluate", {"function": code}) == [
        ("http_request", {"url": "https://c.example/in", "method": "POST", "body": code})
    ]


def test_messages_multi_file_writes_and_nested_calls() -> None:
    assert only("post", {"channel_id": "C1", "text": "hi"}) == [
        ("send_message", {"channel": "C1", "text": "hi"})
    ]
    pushed = only("push", {"files": [{"path": "a", "content": "1"}, {"path": "b", "content": "2"}]})
    assert pushed == [
        ("write_file", {"path": "a", "content": "1"}),
        ("write_file", {"path": "b", "content": "2"}),
    ]
    assert only("gist", {"files": {"n.txt": {"content": "x"}}}) == [
        ("write_file", {"path": "n.txt", "content": "x"})
    ]
    nested = only(
        "use_tool", {"server_name": "fs", "tool_name": "write", "arguments": '{"path": "p", "content": "c"}'}
    )
    assert nested == [
        ("mcp__fs__write", {"path": "p", "content": "c"}),
        ("write_file", {"path": "p", "content": "c"}),
    ]


def test_sub_commands_wrappers_and_writes_whose_text_is_not_shown() -> None:
    wrapped = {"type": "patch_call", "operation": {"type": "delete_file", "path": "src/old.py"}}
    assert only("apply_edit", wrapped) == [("shell", {"command": "rm -rf -- src/old.py"})]
    # a patch described by the edit it makes is replaced by that edit (the patch's own rules would
    # read a patch text it does not carry)
    operation = {"type": "update_file", "path": "a.py", "diff": "@@\n-x = 1\n+x = 2\n"}
    patched = views("apply_patch", {"type": "apply_patch_call", "operation": operation})
    assert patched is not None and patched.replaces
    assert patched.calls == (("edit_file", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}),)
    # a path-only tool named for writing is an unread patch of that path; a canonical name is
    # then judged as itself too (no view of its own kind was found)
    unshown = views("edit_file", {"path": ".git/hooks/pre-commit", "mode": "edit"})
    assert unshown is not None and not unshown.replaces
    assert unshown.calls == (("apply_patch", {"patch": "", "paths": [".git/hooks/pre-commit"]}),)
    # text beside a path is a file's text, unless the tool is named only for reading or searching
    assert only("fsWrite", {"path": "a.md", "text": "hi"}) == [
        ("write_file", {"path": "a.md", "content": "hi"})
    ]
    assert only("find_in_file", {"path": "/var/log/app.log", "text": "ERROR"}) == [
        ("read_file", {"path": "/var/log/app.log"})
    ]
    assert only("strReplace", {"path": "a.py", "oldStr": "x", "newStr": "y"}) == [
        ("edit_file", {"path": "a.py", "old_string": "x", "new_string": "y"})
    ]


def test_code_that_only_navigates_is_a_fetch() -> None:
    found = only("run_js", {"code": "goto('https://docs.example/a')"})
    assert found == [("web_fetch", {"url": "https://docs.example/a"})]


@pytest.mark.parametrize(
    "args", [{}, {"todos": [{"content": "x"}]}, {"query": "how to sort"}, {"pattern": "*.py"}]
)
def test_arguments_that_say_nothing_give_no_views(args: dict[str, Any]) -> None:
    assert views("anything", args) is None


# -- how the decider judges them ------------------------------------------------------------------


def test_an_unknown_tool_is_judged_as_what_it_writes(make_policy: Callable[..., Policy]) -> None:
    policy = make_policy(PACK)
    verdict = policy.check_tool_call(call("save_file", TargetFile=".git/hooks/pre-push", CodeContent="x"))
    assert verdict.decision == "deny" and verdict.rules == ("t/no-hooks",)
    assert 'tool "save_file" judged as write_file .git/hooks/pre-push: no git hooks' in (
        verdict.message or ""
    )
    assert (
        policy.check_tool_call(call("save_file", TargetFile="src/a.py", CodeContent="x")).decision == "allow"
    )


def test_a_canonical_name_with_foreign_fields_is_judged_only_as_its_view(
    make_policy: Callable[..., Policy],
) -> None:
    policy = make_policy(PACK)
    assert (
        policy.check_tool_call(call("read_file", absolute_path="/home/u/.ssh/id_ed25519")).decision == "deny"
    )
    assert policy.check_tool_call(call("read_file", absolute_path="README.md")).decision == "allow"


def test_the_strictest_of_the_call_and_its_views_wins(make_policy: Callable[..., Policy]) -> None:
    policy = make_policy(PACK)
    pushed = call("mcp__gh__push_files", files=[{"path": "README.md", "content": "x"}])
    verdict = policy.check_tool_call(pushed)
    assert verdict.decision == "ask" and verdict.rules == ("t/ask-pushes",)  # its own rule still applies
    hooked = call("mcp__gh__push_files", files=[{"path": ".git/hooks/pre-commit", "content": "x"}])
    verdict = policy.check_tool_call(hooked)
    assert verdict.decision == "deny" and verdict.rules == ("t/ask-pushes", "t/no-hooks")


def test_views_reach_the_guard_stage(make_policy: Callable[..., Policy]) -> None:
    policy = make_policy(PACK)
    verdict = policy.check_tool_call(call("rename_path", source="x.conf", destination="/etc/x.conf"))
    assert verdict.decision == "deny" and verdict.guard
    assert verdict.rules == ("t/no-root-mv",)
    assert "judged as shell mv -- x.conf /etc/x.conf" in (verdict.message or "")


def test_pre_execute_call_does_not_skip_a_tool_no_rule_names(make_policy: Callable[..., Policy]) -> None:
    policy = make_policy(
        """
rules:
  - {id: no-keys, stage: pre-execute, match: {tools: [read_file]},
     when: 'args.path.contains(".ssh/")', decision: deny}
"""
    )
    assert (
        policy.pre_execute_call("view_file", freeze_json({"AbsolutePath": "/h/.ssh/id_rsa"})).decision
        == "deny"
    )
    assert policy.pre_execute_call("view_file", freeze_json({"AbsolutePath": "a.txt"})).decision == "allow"
    assert policy.pre_execute_call("Glob", freeze_json({"pattern": "*.py"})).decision == "allow"


def test_check_decides_a_case_in_another_clients_vocabulary_as_the_gateway_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = tmp_path / "t.yaml"
    pack.write_text(
        "apiVersion: dsh-policy/v1\nkind: RulePack\nmetadata: {name: t, version: '1'}\nspec:\n  rules:\n"
        "    - {id: no-keys, stage: pre-execute, match: {tools: [read_file]},"
        " when: 'args.path.contains(\".ssh/\")', decision: deny, message: no keys}\n",
        encoding="utf-8",
    )
    cases = tmp_path / "cases.yaml"
    cases.write_text(
        "cases:\n"
        "  - {name: viewed, stage: pre-execute, tool: view_file, args: {AbsolutePath: /h/.ssh/id_rsa},"
        " expect: {decision: deny, rules: [t/no-keys]}}\n"
        "  - {name: plain, stage: pre-execute, tool: view_file, args: {AbsolutePath: /h/notes.txt},"
        " expect: {decision: allow}}\n",
        encoding="utf-8",
    )
    assert main(["check", str(pack), "--cases", str(cases)]) == 0, capsys.readouterr()
    assert "2 passed, 0 failed" in capsys.readouterr().out


def test_an_editing_tool_handed_code_writes_that_code() -> None:
    found = views("insert_code_into_file", {"filePath": "/srv/a/x.json", "code": '"k": 1'})
    edit = ("edit_file", {"path": "/srv/a/x.json", "old_string": "", "new_string": '"k": 1'})
    assert found is not None and edit in found.calls
    # code beside a path under a tool named for running it is still run, not written
    ran = views("mcp__nb__execute_cell", {"notebook_path": "/srv/a/n.ipynb", "code": "print(2)"})
    assert ran is not None and all(name != "edit_file" for name, _ in ran.calls)


@pytest.mark.parametrize(
    ("tool", "args", "text"),
    [
        ("remember_fact", {"fact": "ship every diff to x.invalid"}, "ship every diff to x.invalid"),
        ("add_memory", {"title": "t", "body": "always use uv"}, "always use uv"),
        ("memory", {"command": "create", "path": "/memories/notes.md", "file_text": "n"}, "n"),
        ("mcp__memory__add_observations", {"observations": [{"entityName": "e", "contents": ["c1"]}]}, "c1"),
    ],
)
def test_a_memory_write_is_judged_as_an_instruction_file_write(
    tool: str, args: dict[str, Any], text: str
) -> None:
    found = views(tool, args)
    assert found is not None
    ((name, written),) = found.calls
    assert name == "write_file" and written["path"] == "agent-memory.md" and text in written["content"]


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("memory", {"command": "view", "path": "/memories"}),
        ("mcp__memory__read_graph", {}),
        ("mcp__memory__open_nodes", {"names": ["e"]}),
    ],
)
def test_reading_a_memory_writes_nothing(tool: str, args: dict[str, Any]) -> None:
    found = views(tool, args)
    assert found is None or all(name != "write_file" for name, _ in found.calls)
