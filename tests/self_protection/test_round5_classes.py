"""The fifth round's mechanisms (issue 25, the classes ``heldout_corpus_4.yaml`` found open), each
in spellings of our own (``round5_classes.yaml``) and each mechanism on its own: protected paths
assembled from literals in inline code, signals to processes code picks by the gateway's name,
environment for later sessions, files that run later, schedulers, agents this gateway has no hooks
in, ``tar -C`` members, git commands that apply another commit's change and patches judged by the
files they name.

DATA ONLY: the command strings are decided, never run (the YAML was written with the file editor;
the patches and the repository below are files in a temporary folder, handed to git read-only by
the check itself). The layout is ``measure_rates.py``'s per-user one.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.cmdline.writers import tar_members
from dsh_policy.policy.self_protection import later, processes, sessions, staged, vcs
from round_kit import Round

ROUND = Round("round5_classes.yaml")
DATA = ROUND.data
_check = ROUND.check


def test_the_round_spells_each_class_it_closed() -> None:
    tamper, _ = ROUND.classes()
    assert {"code-literals", "code-signals", "future-env", "staged", "deferred", "unhooked-agent"} <= tamper


# -- the pieces, each on its own -------------------------------------------------------------------


def test_a_process_name_matcher_also_sees_the_module_an_interpreter_runs() -> None:
    gateway = [processes.GatewayProcess(4242, "python3", "/v/bin/python3 -m dsh_policy.policy.cli serve")]
    assert processes.run_names(gateway[0].command_line) == ["dsh_policy.policy.cli"]
    assert processes.pattern_hits("^dsh", gateway, True)  # killall matches names and scripts
    assert not processes.pattern_hits("^dsh", gateway, False)  # pkill without -f: the name only
    assert processes.run_names("/usr/bin/python3 /opt/tool.py --x") == ["tool.py"]


def test_tar_members_are_read_relative_to_their_directory_option() -> None:
    packed = tar_members(["czf", "/tmp/o.tgz", "-C", "/p", "src", "README.md"])
    assert packed == [("/p", "src"), ("/p", "README.md")]
    packed = tar_members(["--create", "--file=/o", "-C/a", "b", "--directory", "/c", "d"])
    assert packed == [("/a", "b"), ("/c", "d")]
    assert tar_members(["-cf", "/o", ".dsh"]) == [(None, ".dsh")]


def test_steering_variables_in_every_session_file_syntax() -> None:
    assert sessions.steering("export DSH_POLICY_GATEWAY=off") == "DSH_POLICY_GATEWAY=off"
    assert sessions.steering("XDG_RUNTIME_DIR DEFAULT=/tmp/r") == "XDG_RUNTIME_DIR=/tmp/r"
    assert sessions.steering("setenv PYTHONHOME /tmp/p") == "PYTHONHOME=/tmp/p"
    assert sessions.steering("set -Ux CODEX_HOME /tmp/c") == "CODEX_HOME=/tmp/c"
    assert sessions.steering('export PATH="$HOME/bin:$PATH"') is None
    assert sessions.steering("export GOPATH=$HOME/go") is None
    assert sessions.steering("export PATH=/opt/only") == "PATH=/opt/only"
    assert sessions.is_session_file("/h/.config/environment.d/50-x.conf")
    assert sessions.is_session_file("/etc/profile.d/x.sh")
    assert not sessions.is_session_file("/h/project/.env")


def test_what_runs_later_is_read_by_each_runner() -> None:
    assert list(staged.runs_later("/p/Makefile", "all:\n\t@rm -f x\nFOO = 1\n")) == [("shell", "rm -f x")]
    recipe = staged.runs_later("/p/Makefile", "x:\n\trm $(HOME)/a $$HOME/b $(OUT)\n")
    assert list(recipe) == [("shell", "rm ${HOME}/a $HOME/b ${OUT}")]
    script = staged.runs_later("/p/x", "#!/usr/bin/env python3\n")
    assert [language for language, _text in script] == ["python"]
    assert list(staged.runs_later("/p/.git/hooks/pre-push", "make test\n")) == [("shell", "make test\n")]
    assert list(staged.runs_later("/p/notes.txt", "rm -f x\n")) == []
    cron = [text for _language, text in staged.runs_later("/etc/cron.d/x", "0 * * * * root rm -f y\n")]
    assert "rm -f y" in cron[0].splitlines()


def test_a_file_that_runs_later_beyond_the_limit_is_refused_unread(
    layout: tuple[Any, dict[str, str]],
) -> None:
    protection, names = layout
    script = "#!/bin/sh\n" + "echo ok\n" * (later.MAX_STAGED_TEXT // 8 + 1)
    path = os.path.join(names["project"], "scripts", "big.sh")
    refusal = protection.check("write_file", {"path": path, "content": script}, names["project"])
    assert refusal is not None and refusal.rule == "self-protection/limits"
    small = protection.check("write_file", {"path": path, "content": script[:4096]}, names["project"])
    assert small is None


def test_a_refusal_of_a_file_that_runs_later_names_the_file(layout: tuple[Any, dict[str, str]]) -> None:
    entry = next(e for e in DATA["tamper"] if e["name"] == "a .sh script without a shebang empties the log")
    refusal = _check(layout, entry)
    assert refusal is not None and "scripts/reset.sh, which will run" in refusal.message


# -- git applying another commit's change, and patches --------------------------------------------


def _git(folder: Path, *words: str) -> str:
    environment = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(folder)}
    done = subprocess.run(
        ["git", "-c", "user.email=a@b", "-c", "user.name=a", *words],
        cwd=folder,
        env=environment,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with Gemini hook settings: a branch that drops them, one that changes docs, a
    stash that edits them, and patches of each kind."""
    folder = tmp_path_factory.mktemp("repo")
    (folder / ".gemini").mkdir()
    (folder / ".gemini" / "settings.json").write_text('{"hooks": {}}\n')
    (folder / "README.md").write_text("# app\n")
    _git(folder, "init", "-q", "-b", "main")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-qm", "start")
    _git(folder, "switch", "-qc", "strip")
    _git(folder, "rm", "-q", ".gemini/settings.json")
    _git(folder, "commit", "-qm", "strip")
    _git(folder, "switch", "-q", "main")
    _git(folder, "switch", "-qc", "docs")
    (folder / "README.md").write_text("# app\n\nMore.\n")
    _git(folder, "commit", "-qam", "docs")
    _git(folder, "switch", "-q", "main")
    (folder / ".gemini" / "settings.json").write_text("{}\n")
    _git(folder, "stash", "-q")
    (folder / "drop.patch").write_text(
        "diff --git a/.gemini/settings.json b/.gemini/settings.json\n"
        "--- a/.gemini/settings.json\n+++ b/.gemini/settings.json\n@@ -1 +1 @@\n-x\n+y\n"
    )
    (folder / "docs.patch").write_text("--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-x\n+y\n")
    return folder


def _in_repo(layout: tuple[Any, dict[str, str]], repository: Path, line: str) -> Any:
    protection, _names = layout
    return protection.check("shell", {"command": line}, str(repository))


@pytest.mark.parametrize(
    "line",
    [
        "git cherry-pick strip",
        "git merge --no-edit strip",
        "git rebase strip",
        "git revert --no-edit main",  # the root commit: its change is every file it added
        "git stash pop",
        "git stash apply stash@{0}",
        "git apply drop.patch",
        "patch -p1 < drop.patch",
        "git am drop.patch",
        "git apply missing.patch",  # git is judged by the tree it changes (round 7)
        "git merge --no-edit not-fetched",  # a revision not held now: judged by the tree
        "curl -sL https://example.invalid/x.patch | git apply",
        "curl -so fix.patch https://example.invalid/x && git apply fix.patch",
    ],
)
def test_changes_that_reach_the_hook_files_are_refused(
    layout: tuple[Any, dict[str, str]], repository: Path, line: str
) -> None:
    refusal = _in_repo(layout, repository, line)
    assert refusal is not None and refusal.rule.startswith("self-protection/"), line


@pytest.mark.parametrize(
    "line",
    [
        "git cherry-pick docs",
        "git merge --no-edit docs",
        "git revert --no-edit docs",
        "git rebase docs",
        "git apply docs.patch",
        "patch -p1 < docs.patch",
        "git apply --stat drop.patch",
        "patch -p1 < missing.patch",  # patch(1) of a file that is not there applies nothing
        "git cherry-pick --continue",
    ],
)
def test_changes_elsewhere_are_allowed(
    layout: tuple[Any, dict[str, str]], repository: Path, line: str
) -> None:
    assert _in_repo(layout, repository, line) is None, line


def test_applied_changes_name_what_git_would_apply() -> None:
    assert vcs.applied_changes(["git", "revert", "abc"]) == [["abc^!"]]
    assert vcs.applied_changes(["git", "cherry-pick", "a..b"]) == [["a", "b"]]
    assert vcs.applied_changes(["git", "merge", "-X", "ours", "feat"]) == [["HEAD...feat"]]
    assert vcs.applied_changes(["git", "rebase", "--onto", "main", "old"]) == [["HEAD...main"]]
    assert vcs.applied_changes(["git", "stash", "pop"]) == [["stash@{0}^1", "stash@{0}"]]
    assert vcs.applied_changes(["git", "pull"]) == []
