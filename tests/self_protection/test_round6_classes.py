"""The sixth round's mechanisms (issue 25, the classes ``heldout_corpus_5.yaml`` found open), each
in spellings of our own (``round6_classes.yaml``) beside look-alikes that must stay allowed:
signals that reach every process or are only probes, signal builtins without parentheses, protected
paths appended to a computed home, files other tools run later, MCP servers of other editors,
commands that write through a downloader's or a link farm's options, and version control that
replays other commits.

DATA ONLY: the command strings are decided, never run (the YAML was written with the file editor).
The layout is ``measure_rates.py``'s per-user one.
"""

from __future__ import annotations

import pytest
from dsh_policy.policy.self_protection import agents, processes, staged, vcs

# -- the pieces, each on its own -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "probe"),
    [
        (["kill", "-0", "42"], True),
        (["kill", "-s", "0", "42"], True),
        (["kill", "-SIG0", "42"], True),
        (["pkill", "--signal=0", "-f", "x"], True),
        (["killall5", "-0"], True),
        (["kill", "-9", "42"], False),
        (["kill", "42"], False),
        (["kill", "--", "-0"], False),  # after ``--`` a number is a process group, not a signal
        (["killall5"], False),
    ],
)
def test_only_signal_zero_is_a_probe(argv: list[str], probe: bool) -> None:
    assert processes.probes_only(argv) is probe


@pytest.mark.parametrize(
    ("argv", "targets"),
    [
        (["git", "bisect", "start", "HEAD", "v1.0", "--", "src"], [["v1.0"]]),
        (["git", "bisect", "good"], [["refs/bisect/bad"]]),
        (["git", "bisect", "bad", "abc123"], [["refs/bisect/bad"], ["abc123"]]),
        (["git", "bisect", "run", "make", "test"], [["refs/bisect/bad"]]),
        (["git", "bisect", "reset", "v2"], [["v2"]]),
        (["git", "bisect", "log"], []),
        (["git", "bisect", "visualize"], []),
        (["git", "log", "--bisect"], []),
    ],
)
def test_bisect_moves_to_the_ends_of_its_range(argv: list[str], targets: list[list[str]]) -> None:
    assert vcs.bisect_targets(argv) == targets


@pytest.mark.parametrize(
    ("argv", "targets"),
    [
        (["jj", "new", "root()"], [vcs.EMPTY_TREE]),
        (["jj", "new", "-A", "main"], ["main"]),
        (["jj", "edit", "xyzkpq"], ["xyzkpq"]),
        (["jj", "new", "trunk() | @-"], ["?"]),
        (["jj", "undo"], ["?"]),
        (["jj", "op", "restore", "abc"], ["?"]),
        (["jj", "restore", "--from", "@-"], ["HEAD"]),
        (["jj", "new"], None),
        (["jj", "new", "@"], None),
        (["jj", "new", "-m", "a message"], None),
        (["jj", "new", "--message", "x", "main"], ["main"]),
        (["jj", "restore", "src/app.py"], None),
        (["jj", "log", "-r", "root()"], None),
        (["jj", "op", "log"], None),
    ],
)
def test_jj_names_the_revision_it_gives_the_working_copy(argv: list[str], targets: list[str] | None) -> None:
    assert vcs.jj_targets(argv) == targets


def test_hook_manager_commands_read_each_shared_node_once() -> None:
    # thirty levels of aliases, each listing the one before twice: 2**30 paths, one command
    levels = ["a: &l0 [{run: 'make lint'}]"]
    levels += [f"b{i}: &l{i} [*l{i - 1}, *l{i - 1}]" for i in range(1, 31)]
    assert list(staged.hook_manager_commands("\n".join(levels) + "\n")) == ["make lint"]


def test_pre_commit_args_are_quoted_as_words() -> None:
    hooks = "repos:\n- repo: local\n  hooks:\n"
    text = hooks + "  - {id: x, entry: black, language: python, args: ['a b']}\n"
    assert list(staged.hook_manager_commands(text)) == ["black 'a b'"]
    pattern = hooks + "  - {id: y, entry: 'rm -rf', language: pygrep}\n"
    assert list(staged.hook_manager_commands(pattern)) == []  # a pattern searched for, not run


def test_server_entries_of_yaml_read_each_shared_node_once() -> None:
    levels = ["a: &l0 [{command: npx, args: [docs-mcp]}]"]
    levels += [f"b{i}: &l{i} [*l{i - 1}, *l{i - 1}]" for i in range(1, 31)]
    assert list(agents.file_commands("\n".join(levels) + "\n")) == [["npx", "docs-mcp"]]


def test_a_server_section_counts_only_at_the_top_of_a_document() -> None:
    zed = '{"context_servers": {"x": {"command": {"path": "a"}}}}'
    assert agents.is_mcp_file("/p/.zed/settings.json", zed)
    assert agents.is_mcp_file("/p/agent.yaml", "mcpServers:\n  - name: x\n    command: a\n")
    assert not agents.is_mcp_file("/p/cases.json", '{"content": "{\\"mcpServers\\": {}}"}')
    assert not agents.is_mcp_file("/p/notes.md", "mcpServers: see the docs")
