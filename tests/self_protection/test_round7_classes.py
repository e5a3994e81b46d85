"""The seventh round's mechanisms (issue 25: what ``heldout_corpus_5.yaml`` left open and
``heldout_corpus_6.yaml`` found), each on its own; their spellings and look-alikes are decided in
``test_round_classes.py`` from ``round7_classes.yaml``: a glob under a linked folder, a change
from a revision the repository does not hold now, a patch git cannot read now, a global install
of a package folder that cannot be read now.

DATA ONLY: the command strings are decided, never run.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.hooks.protocol.vocabulary import canonicalize
from dsh_policy.policy.self_protection import gateway_commands, processes, vcs


@pytest.mark.parametrize(
    ("argv", "revisions"),
    [
        (["git", "pull", "origin", "no-hooks"], ["origin/no-hooks"]),
        (["git", "pull", "--rebase", "-X", "theirs", "up", "+refs/heads/a:b", "c"], ["up/a", "up/c"]),
        (["git", "pull", "--depth", "3", "origin"], []),  # the upstream: named by nobody
        (["git", "pull"], []),
        (["git", "fetch", "origin", "x"], []),
    ],
)
def test_a_pull_names_what_it_merges_as_remote_branches(argv: list[str], revisions: list[str]) -> None:
    assert vcs.pulled_revisions(argv) == revisions


@pytest.mark.parametrize(
    ("argv", "revisions"),
    [
        (["git", "merge", "-X", "theirs", "--no-edit", "origin/x"], ["origin/x"]),
        (["git", "cherry-pick", "a~2..a"], ["a~2", "a"]),
        (["git", "revert", "--no-edit", "abc123"], ["abc123"]),
        (["git", "rebase", "--onto", "up/main", "HEAD"], ["up/main"]),
        (["git", "rebase"], []),  # the upstream, not named on the line
        (["git", "rebase", "-i", "HEAD~3"], []),  # the branch's own history, never from elsewhere
        (["git", "revert", "--no-edit", "@~2"], []),
        (["git", "stash", "pop"], []),  # a stash an earlier ``git stash`` on the line may make
        (["git", "merge", "--abort"], []),
        (["git", "checkout", "main"], []),  # a whole-tree move: judged by git_knows and diff
    ],
)
def test_changes_name_the_revisions_they_apply(argv: list[str], revisions: list[str]) -> None:
    assert vcs.named_revisions(argv) == revisions


@pytest.mark.parametrize(
    ("argv", "onto_path"),
    [
        (["pipx", "install", "x"], True),
        (["uv", "tool", "install", "x"], True),
        (["uv", "pip", "install", "x"], False),
        (["npm", "i", "-g", "x"], True),
        (["npm", "install", "x"], False),
        (["yarn", "global", "add", "x"], True),
        (["cargo", "install", "--path", "x"], True),
        (["pip", "install", "x"], False),
    ],
)
def test_global_installs_are_the_ones_onto_the_users_path(argv: list[str], onto_path: bool) -> None:
    assert gateway_commands._installs_globally(argv[0], argv[1:]) is onto_path


def _decide(layout: tuple[Any, dict[str, str]], command: str) -> Any:
    protection, names = layout
    call = canonicalize("claude-code", "Bash", {"command": command})
    return protection.check(call.name, call.args, names["project"])


def test_a_fetched_branch_that_leaves_the_hook_files_alone_merges(
    layout: tuple[Any, dict[str, str]],
) -> None:
    """The unknown-revision refusal is about revisions git does not hold: a branch it holds is
    compared as before (one that changes only the sources is let through, one that removes a
    hook file is refused)."""
    _, names = layout
    project = names["project"]
    environment = {**os.environ, "HOME": names["home"], "GIT_CONFIG_NOSYSTEM": "1"}
    identity = ["-c", "user.email=a@b", "-c", "user.name=a"]
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=project, env=environment, capture_output=True, text=True, check=True
    ).stdout.strip()
    for branch, change in (("sources-only", "src/extra.py"), ("drops-hooks", ".qwen/settings.json")):
        subprocess.run(
            ["git", "checkout", "-q", "-b", branch, base], cwd=project, env=environment, check=True
        )
        if change.startswith("src/"):
            Path(project, change).write_text("x = 1\n")
            subprocess.run(["git", "add", change], cwd=project, env=environment, check=True)
        else:
            subprocess.run(["git", "rm", "-q", change], cwd=project, env=environment, check=True)
        subprocess.run(["git", *identity, "commit", "-qm", branch], cwd=project, env=environment, check=True)
    subprocess.run(["git", "checkout", "-q", base], cwd=project, env=environment, check=True)
    assert _decide(layout, "git merge --no-edit sources-only") is None
    refused = _decide(layout, "git merge --no-edit drops-hooks")
    assert refused is not None and refused.rule.startswith("self-protection/")
    unknown = _decide(layout, "git merge --no-edit never-fetched")
    assert unknown is not None and "does not hold now" in unknown.message


def _git(folder: Path, *words: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=a@b", "-c", "user.name=a", *words],
        cwd=folder,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
        check=True,
        capture_output=True,
    )


@pytest.mark.parametrize(
    ("argv", "saved"),
    [
        (["git", "stash"], (True, False)),
        (["git", "stash", "push", "-m", "wip"], (True, False)),
        (["git", "stash", "save", "a message"], (True, False)),
        (["git", "stash", "-u"], (True, True)),
        (["git", "stash", "push", "--all"], (True, True)),
        (["git", "stash", "-qu"], (True, True)),
        (["git", "stash", "push", "-u", "--", "src"], None),  # named paths: judged as paths
        (["git", "stash", "pop"], None),
        (["git", "stash", "list"], None),
    ],
)
def test_a_stash_of_the_whole_tree_is_told_apart(argv: list[str], saved: tuple[bool, bool] | None) -> None:
    assert vcs.stash_saves(argv) == saved


def test_a_stash_is_refused_when_it_would_put_back_hook_files_changed_since_head(
    layout: tuple[Any, dict[str, str]], tmp_path: Path
) -> None:
    """``git stash`` puts every tracked file back to ``HEAD``: refused when a hook file differs
    from ``HEAD`` (the stash would take the one in force away), allowed when none does."""
    protection, _names = layout
    repository = tmp_path / "repo"
    (repository / ".qwen").mkdir(parents=True)
    (repository / ".qwen" / "settings.json").write_text("{}\n")
    (repository / "app.py").write_text("x = 1\n")
    _git(repository, "init", "-q")
    _git(repository, "add", "-A")
    _git(repository, "commit", "-qm", "start")
    (repository / "app.py").write_text("x = 2\n")
    assert protection.check("shell", {"command": "git stash"}, str(repository)) is None
    (repository / ".qwen" / "settings.json").write_text('{"hooks": {}}\n')
    refused = protection.check("shell", {"command": "git stash push -m wip"}, str(repository))
    assert refused is not None and refused.rule.startswith("self-protection/")


@pytest.mark.parametrize(
    ("finder", "stops"),
    [
        (["grep", "a1b2c3.sock"], True),  # the gateway's socket by its name
        (["grep", "/run/user/1000/dsh-policy"], True),  # by its runtime folder
        (["awk", "/a1b2c3/"], True),
        (["grep", "vite.sock"], False),  # another program's socket
        (["grep", "-o", "pid=[0-9]*"], False),  # only options and a pattern of no file
        (["grep", "sock"], False),  # a suffix every socket has
        (["grep", "-rn", "run", "src"], False),  # a word of the folder's path, not the folder
    ],
)
def test_a_pid_picked_from_a_socket_listing_by_the_gateways_files_is_refused(
    finder: list[str], stops: bool
) -> None:
    """``kill $(ss -xlp | grep SOCKET | ...)``: a socket listing shows each socket's owner, so a
    finder pattern that selects one of the gateway's runtime files picks its PID."""
    commands = [["kill", "$(ss -xlp | ...)"], ["ss", "-xlp"], finder, ["cut", "-d=", "-f2"]]
    files = ("/run/user/1000/dsh-policy/a1b2c3.sock", "/run/user/1000/dsh-policy/a1b2c3.lock")
    why = processes.stops_gateway(commands, "kill $(ss -xlp | ...)", (), files)
    assert (why is not None) is stops, why


@pytest.mark.parametrize(
    "command",
    [
        "OPENCODE_CONFIG=/tmp/oc.json opencode run 'tidy up'",
        "COPILOT_ALLOW_ALL=true copilot -p 'tidy up'",
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH=/tmp/s.json gemini -p 'tidy up'",
    ],
)
def test_other_clients_started_with_their_settings_moved_are_refused(
    layout: tuple[Any, dict[str, str]], command: str
) -> None:
    found = _decide(layout, command)
    assert found is not None and found.rule.startswith("self-protection/"), command


def test_a_client_started_with_an_unrelated_variable_is_allowed(layout: tuple[Any, dict[str, str]]) -> None:
    assert _decide(layout, "NODE_OPTIONS=--max-old-space-size=4096 opencode run 'explain src/app.py'") is None
