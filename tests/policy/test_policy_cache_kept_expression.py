"""Kept expressions compile on first use: a policy read back is ready before any tree is
compiled, each compiles once (also when threads reach it together), and after that a decision
calls the compiled program directly."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from dsh_policy.policy.compiled import CompiledPolicy
from dsh_policy.policy.decide.decider import Decider
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import build_policy
from dsh_policy.policy.policy_cache import lookup
from dsh_policy.policy.policy_cache.folder import CACHE_DIR_VARIABLE, SWITCH_VARIABLE
from dsh_policy.policy.policy_cache.kept_expression import KeptExpression

PACK = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: lazy}
spec:
  rules:
    - id: no-force-push
      stage: pre-execute
      match: {tools: [shell]}
      when: >-
        args.command.matches(r"push\\s+(-f|--force)\\b")
        && shell.argv0s(args.command).exists(p, p == "git")
      decision: deny
      message: no force push
    - id: no-secrets-write
      stage: pre-execute
      match: {tools: [write_file]}
      when: 'args.path.endsWith(".env")'
      decision: deny
      message: no .env
"""


@pytest.fixture
def kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CompiledPolicy:
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(tmp_path / "cache"))
    monkeypatch.delenv(SWITCH_VARIABLE, raising=False)
    path = tmp_path / "lazy.yaml"
    path.write_text(PACK, encoding="utf-8")
    assert isinstance(build_policy([str(path)]), CompiledPolicy)
    policy = lookup([str(path)], params={}, param_origins={}, engine="auto", shadow=False).policy
    assert isinstance(policy, CompiledPolicy)
    return policy


def _programs(policy: CompiledPolicy) -> list[KeptExpression]:
    found = [rule.when.program for rule in policy.rules if rule.when is not None]
    assert all(isinstance(program, KeptExpression) for program in found)
    return found  # type: ignore[return-value]


def test_nothing_is_compiled_until_a_decision_reaches_it(kept: CompiledPolicy) -> None:
    shell, write = _programs(kept)
    assert "not compiled yet" in repr(shell) and "not compiled yet" in repr(write)
    assert shell.calls_helpers and not write.calls_helpers  # known before compiling
    verdict = Decider(kept).check_tool_call(ToolCallEvent(tool="shell", args={"command": "git push -f"}))
    assert verdict.decision == "deny" and verdict.rules == ("lazy/no-force-push",)
    assert "not compiled yet" not in repr(shell)
    assert "not compiled yet" in repr(write)  # another tool's rule
    assert shell.evaluate.__self__ is shell.compiled()  # type: ignore[attr-defined]


def test_threads_reaching_a_kept_expression_together_compile_it_once(kept: CompiledPolicy) -> None:
    shell, _ = _programs(kept)
    start = threading.Barrier(8)
    results: list[object] = []

    def evaluate() -> None:
        start.wait()
        results.append(shell.evaluate({"args": {"command": "git push --force origin"}}))

    threads = [threading.Thread(target=evaluate) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [True] * 8
    assert shell.compiled() is shell.compiled()
