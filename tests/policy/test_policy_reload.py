"""Hot reload: an edited pack takes effect on the next decision; a broken edit or a deleted file
keeps the last good policy and is reported once; a deployment file is watched too."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import structlog
from dsh_policy.policy.compile import CompiledPolicy
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure
from dsh_policy.policy.runtime.reload import ReloadingPolicy

WritePack = Callable[..., Path]

DENY_RM = "rules: [{id: r, stage: pre-execute, when: 'args.command == \"rm\"', decision: deny}]"
DENY_LS = "rules: [{id: r, stage: pre-execute, when: 'args.command == \"ls\"', decision: deny}]"


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def touch_later(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def reloading(path: Path, clock: Clock) -> tuple[ReloadingPolicy, list, list]:
    loaded: list[CompiledPolicy] = []
    failed: list[tuple[PolicyError, ...]] = []
    policy = ReloadingPolicy.load_watching(
        [str(path)], engine="python", on_loaded=loaded.append, on_reload_failed=failed.append, clock=clock
    )
    assert isinstance(policy, ReloadingPolicy), str(policy)
    return policy, loaded, failed


def decide(policy: ReloadingPolicy, command: str) -> str:
    return policy.pre_execute(ToolCallEvent("shell", {"command": command})).decision


def test_an_edited_pack_takes_effect_on_the_next_decision_after_the_interval(
    write_pack: WritePack,
) -> None:
    path = write_pack(DENY_RM)
    clock = Clock()
    policy, loaded, failed = reloading(path, clock)
    assert decide(policy, "rm") == "deny" and len(loaded) == 1
    first_digest = policy.digest
    write_pack(DENY_LS)
    touch_later(path)
    assert decide(policy, "rm") == "deny", "no check before the interval has passed"
    clock.now += 0.25
    assert decide(policy, "rm") == "allow"
    assert decide(policy, "ls") == "deny"
    assert policy.digest != first_digest
    assert [p.digest for p in loaded] == [first_digest, policy.digest]
    assert failed == []


def test_a_broken_edit_keeps_the_last_good_policy_and_is_reported_once(write_pack: WritePack) -> None:
    path = write_pack(DENY_RM)
    clock = Clock()
    policy, loaded, failed = reloading(path, clock)
    path.write_text(path.read_text().replace("when:", "wehn:"))
    touch_later(path)
    clock.now += 1
    with structlog.testing.capture_logs() as logs:
        assert decide(policy, "rm") == "deny"
        clock.now += 1
        assert decide(policy, "rm") == "deny"
    assert len(failed) == 1, "the same broken state is reported once"
    assert "unknown key 'wehn'" in failed[0][0].message and failed[0][0].line == 6
    assert [log["event"] for log in logs if log["log_level"] == "error"] == [
        "policy reload failed; keeping the last good policy"
    ]
    write_pack(DENY_LS)
    touch_later(path)
    clock.now += 1
    assert decide(policy, "ls") == "deny"
    assert len(loaded) == 2


def test_a_deleted_pack_keeps_the_last_good_policy(write_pack: WritePack) -> None:
    path = write_pack(DENY_RM)
    clock = Clock()
    policy, _, failed = reloading(path, clock)
    path.unlink()
    clock.now += 1
    assert decide(policy, "rm") == "deny"
    assert len(failed) == 1 and failed[0][0].message == "no such file"


def test_unchanged_content_with_a_new_mtime_does_not_recompile(write_pack: WritePack) -> None:
    path = write_pack(DENY_RM)
    clock = Clock()
    policy, loaded, _ = reloading(path, clock)
    touch_later(path)
    clock.now += 1
    assert policy.check_now() is False
    assert len(loaded) == 1


def test_a_deployment_file_is_watched_and_its_params_apply(write_pack: WritePack, tmp_path: Path) -> None:
    pack = write_pack(
        """
        params: {bad: rm}
        rules: [{id: r, stage: pre-execute, when: 'args.command == params.bad', decision: deny}]
        """
    )
    config = tmp_path / "gateway.yaml"
    text = "apiVersion: dsh-policy/v1\nkind: Gateway\nspec:\n  packs: [{pack}]\n  params: {{bad: {bad}}}\n"
    config.write_text(text.format(pack=pack.name, bad="ls"))
    clock = Clock()
    policy = ReloadingPolicy.load_watching([], config=str(config), engine="python", clock=clock)
    assert isinstance(policy, ReloadingPolicy), str(policy)
    assert decide(policy, "ls") == "deny"
    config.write_text(text.format(pack=pack.name, bad="cat"))
    touch_later(config)
    clock.now += 1
    assert decide(policy, "cat") == "deny" and decide(policy, "ls") == "allow"


def test_initial_load_failure_is_returned_as_errors(tmp_path: Path) -> None:
    result = ReloadingPolicy.load_watching([str(tmp_path / "missing.yaml")], engine="python")
    assert isinstance(result, LoadFailure)
    assert str(result).endswith("missing.yaml: no such file")


def test_load_builds_a_reloading_policy(write_pack: WritePack) -> None:
    policy = ReloadingPolicy.load([write_pack(DENY_RM)], engine="python")
    assert isinstance(policy, ReloadingPolicy)
    assert decide(policy, "rm") == "deny"
