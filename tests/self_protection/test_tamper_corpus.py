"""Every tamper attempt of the corpus is refused by self-protection with the shipped example
deployment, and ordinary work stays allowed.

Each case goes the hook's decision path (payload parsing, the harness vocabulary, the deployment's
policy with its self-protection, the dialect's answer) with one policy compile shared by all: the
compiled policy is immutable and the deployment file does not change. Issue 12's nine attempts also
go through the whole ``dsh-policy hook`` command with its audit log, and
``tests/limits/test_hook_process.py`` runs the shipped settings' command line in real processes.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.config import PolicySources, policy_sources
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.hooks.dialects import DIALECTS
from dsh_policy.policy.hooks.protocol.events import decide_hook
from dsh_policy.policy.hooks.protocol.messages import HookInputError, parse_hook_input
from dsh_policy.policy.hooks.protocol.vocabulary import ToolInputError, canonicalize
from dsh_policy.policy.loading import LoadFailure
from fresh_project import Case, Project, corpus, make_project, stdin_for

_BUILT: dict[str, Any] = {}
_REAL_BUILD = PolicySources.build


def _shared_build(sources: PolicySources, **options: Any) -> Any:
    """``PolicySources.build`` for the hook under test: the deployment file and packs do not change
    during this module, and a compiled policy is immutable, so every case shares one."""
    key = json.dumps(
        [list(sources.packs), sources.config.path if sources.config else None, options], default=str
    )
    if key not in _BUILT:
        _BUILT[key] = _REAL_BUILD(sources, **options)
    return _BUILT[key]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return make_project(tmp_path_factory.mktemp("fresh"))


@pytest.fixture
def hook(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Callable[[Case], tuple[int, str, str]]]:
    monkeypatch.setattr(PolicySources, "build", _shared_build)
    monkeypatch.setenv("HOME", str(project.home))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project.root))
    monkeypatch.chdir(project.root)

    def run(case: Case) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "stdin", stdin_for(case.payload))
        capsys.readouterr()
        code = cli_main(["hook", case.harness, "--config", str(project.config)])
        out, err = capsys.readouterr()
        return code, out, err

    yield run


@pytest.fixture(scope="module")
def decide(project: Project) -> Iterator[Callable[[Case], tuple[int, str, str]]]:
    """The hook's decision path for one case, without the process and the audit record."""
    patch = pytest.MonkeyPatch()
    patch.setenv("HOME", str(project.home))
    patch.setenv("CLAUDE_PROJECT_DIR", str(project.root))
    patch.chdir(project.root)
    sources = policy_sources([], config=str(project.config))
    assert not isinstance(sources, list)
    built = sources.build()
    assert not isinstance(built, LoadFailure)
    policy = Policy(built)

    def run(case: Case) -> tuple[int, str, str]:
        payload = parse_hook_input(json.dumps(case.payload).encode())
        assert not isinstance(payload, HookInputError), payload
        verdict = decide_hook(policy, case.harness, payload).verdict  # type: ignore[arg-type]
        reply = DIALECTS[case.harness].render(verdict)  # type: ignore[index]
        return reply.exit_code, reply.stdout, reply.stderr

    yield run
    patch.undo()


@pytest.fixture(scope="module")
def protection(project: Project) -> Any:
    """The self-protection the shipped deployment derives for the fresh project."""
    patch = pytest.MonkeyPatch()
    patch.setenv("HOME", str(project.home))
    patch.setenv("CLAUDE_PROJECT_DIR", str(project.root))
    sources = policy_sources([], config=str(project.config))
    assert not isinstance(sources, list)
    derived = sources.protection()
    patch.undo()
    return derived


ISSUE_12 = 9  # the first nine tamper entries are the attempts measured in the issue


def _ids(section: str) -> list[str]:
    return [
        case.name for case in corpus(section, Project(Path("/p"), Path("/p/.dsh/gateway.yaml"), Path("/h")))
    ]


@pytest.mark.parametrize("name", _ids("tamper"))
def test_each_tamper_attempt_is_refused_by_self_protection(protection, project: Project, name: str) -> None:
    """The deployment's own self-protection refuses each attempt, whatever its packs say (the same
    object the hook decides with: ``test_issue_12s_attempts_through_the_hook_command...``)."""
    case = next(case for case in corpus("tamper", project) if case.name == name)
    call = canonicalize(case.harness, case.payload["tool_name"], case.payload["tool_input"])  # type: ignore[arg-type]
    assert not isinstance(call, ToolInputError), call
    refusal = protection.check(call.name, call.args, str(project.root))
    assert refusal is not None, f"{name}: let through"
    assert refusal.rule.startswith("self-protection/") and "dsh-policy self-protection" in refusal.message


@pytest.mark.parametrize("name", _ids("benign"))
def test_ordinary_work_is_not_refused_by_self_protection(decide, project: Project, name: str) -> None:
    case = next(case for case in corpus("benign", project) if case.name == name)
    code, out, err = decide(case)
    assert "self-protection" not in err, f"{name}: refused by self-protection: {err!r}"
    assert code == 0, f"{name}: refused: {err!r}"
    if out:  # the baseline may ask (network, package installs); it never denies ordinary work
        assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_the_corpus_is_large_enough_to_mean_something() -> None:
    """The parametrized tests above refuse every attempt and none of the ordinary work: the rate a
    held-out set is measured against is 100% over at least this many attempts."""
    assert len(_ids("tamper")) >= 100 and len(_ids("benign")) >= 35
    assert len(set(_ids("tamper"))) == len(_ids("tamper"))


def test_issue_12s_attempts_through_the_hook_command_are_refused_and_audited(hook, project: Project) -> None:
    from dsh_policy.audit.cli import verify_main

    for case in corpus("tamper", project)[:ISSUE_12]:
        code, _out, err = hook(case)
        assert code == 2 and "self-protection" in err, (case.name, err)
    assert hook(corpus("benign", project)[-1])[0] == 0
    log = project.root / ".dsh" / "audit" / "hooks.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    denied = [r for r in records if r["kind"] == "tool_result" and r["decision"]["denied_by"] == "guard"]
    assert any(r["decision"]["pre_execute"]["rules"][0].startswith("self-protection/") for r in denied)
    assert verify_main([str(log), "--key", str(project.root / ".dsh" / "keys" / "audit.pub")]) == 0
    assert os.stat(project.root / ".dsh" / "keys" / "audit.key").st_mode & 0o077 == 0
