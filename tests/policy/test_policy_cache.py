"""The verified compiled-policy cache: a kept policy decides every shipped case as a fresh build
does, and an entry that is damaged, foreign, or in a folder others can write is never read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from dsh_policy.policy.cases import load_cases, run_case
from dsh_policy.policy.compiled import CompiledPolicy
from dsh_policy.policy.decide.decider import Decider
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure, build_policy
from dsh_policy.policy.policy_cache import lookup
from dsh_policy.policy.policy_cache.folder import CACHE_DIR_VARIABLE, SWITCH_VARIABLE, entry_bytes, entry_path

RULES_DIR = Path(__file__).resolve().parents[2] / "rules"
PACKS = sorted(p for p in RULES_DIR.glob("*.yaml") if not p.name.endswith(".cases.yaml"))
CASES_EVERY = 1 if os.environ.get("DSH_CORPUS_FULL", "") not in ("", "0") else 3
"""A kept policy decides every third shipped case as a fresh build (all with ``DSH_CORPUS_FULL=1``):
its rules are compared one by one above the decisions, and each decision (with its trace) costs
two deciders' worth of CPU over 1,800 cases."""

PACK = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: small}
spec:
  variables:
    - name: cmd
      expression: 'has(args.command) ? args.command : ""'
  rules:
    - id: no-rm
      stage: pre-execute
      match: {tools: [shell], programs: [rm]}
      when: 'vars.cmd.contains("-rf") && shell.argv0s(args.command).exists(p, p == "rm")'
      decision: deny
      message: no recursive delete
      examples: {deny: ["rm -rf build"], allow: ["rm build"]}
    - id: hide-key
      stage: post-execute
      redact: [{pattern: 'key-[0-9]+', replace: '[KEY]'}, {preset: aws-access-key}]
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(folder))
    monkeypatch.delenv(SWITCH_VARIABLE, raising=False)
    return folder


def _pack(tmp_path: Path, text: str = PACK) -> str:
    path = tmp_path / "small.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _kept(paths: list[str]) -> CompiledPolicy | None:
    found = lookup(paths, params={}, param_origins={}, engine="auto", shadow=False)
    return found.policy  # type: ignore[no-any-return]


def _entry(paths: list[str]) -> Path:
    found = lookup(paths, params={}, param_origins={}, engine="auto", shadow=False)
    assert found.key is not None
    return Path(entry_path(os.environ[CACHE_DIR_VARIABLE], found.key))


def test_a_kept_policy_decides_every_shipped_case_as_a_fresh_build(cache_dir: Path) -> None:
    paths = [str(p) for p in PACKS]
    fresh = build_policy(paths, cache=False)
    assert isinstance(fresh, CompiledPolicy)
    assert isinstance(build_policy(paths), CompiledPolicy)  # builds and keeps
    kept = _kept(paths)
    assert isinstance(kept, CompiledPolicy), "the shipped packs were not kept"
    assert kept.digest == fresh.digest
    assert kept.warnings == fresh.warnings
    assert kept.engine_name == fresh.engine_name
    assert [rule.id for rule in kept.rules] == [rule.id for rule in fresh.rules]
    for one, other in zip(kept.rules, fresh.rules, strict=True):
        for name in ("when", "message_expression"):
            a, b = getattr(one, name), getattr(other, name)
            assert (a is None) == (b is None)
            if a is not None:
                assert (a.source, a.names, a.variables, a.branches) == (
                    b.source,
                    b.names,
                    b.variables,
                    b.branches,
                )
                assert a.program.reads == b.program.reads
    # decisions compared, not timed: a busy host once ran one past the 2 s budget (failed closed)
    deciders = Decider(kept, event_seconds=30.0), Decider(fresh, event_seconds=30.0)
    count = 0
    for pack in PACKS:
        cases = load_cases(pack.with_name(pack.name.removesuffix(".yaml") + ".cases.yaml"))
        for case in cases[::CASES_EVERY]:
            assert not isinstance(case, PolicyError)
            outcomes = [run_case(decider, case) for decider in deciders]  # type: ignore[arg-type]
            assert outcomes[0].comparable() == outcomes[1].comparable(), case.name  # type: ignore[union-attr]
            assert outcomes[0].message == outcomes[1].message, case.name
            assert outcomes[0].trace == outcomes[1].trace, case.name
            count += 1
    assert count > 500


def test_a_changed_pack_is_a_new_key_and_an_error_is_never_kept(cache_dir: Path, tmp_path: Path) -> None:
    path = _pack(tmp_path)
    first = build_policy([path])
    assert isinstance(first, CompiledPolicy)
    assert _kept([path]) is not None
    broken = PACK.replace("decision: deny", "decision: dney")
    _pack(tmp_path, broken)
    assert _kept([path]) is None
    failed = build_policy([path])
    assert isinstance(failed, LoadFailure)
    assert any(str(error).startswith(f"{path}:13:17:") and "dney" in str(error) for error in failed.errors)
    assert _kept([path]) is None  # still nothing: a failed build leaves no entry
    again = build_policy([path])  # and the error is reported again, with its position
    assert isinstance(again, LoadFailure) and again.errors == failed.errors


def test_params_and_engine_are_part_of_the_key(cache_dir: Path, tmp_path: Path) -> None:
    path = _pack(tmp_path, PACK.replace("spec:\n", "spec:\n  params: {limit: 3}\n", 1))
    assert isinstance(build_policy([path]), CompiledPolicy)
    other = lookup([path], params={"limit": 4}, param_origins={}, engine="auto", shadow=False)
    assert other.policy is None
    closure = lookup([path], params={}, param_origins={}, engine="closure", shadow=False)
    assert closure.policy is None
    shadow = lookup([path], params={}, param_origins={}, engine="auto", shadow=True)
    assert shadow.policy is None


def test_a_damaged_entry_is_rebuilt_not_trusted(cache_dir: Path, tmp_path: Path) -> None:
    path = _pack(tmp_path)
    assert isinstance(build_policy([path]), CompiledPolicy)
    entry = _entry([path])
    header, _, body = entry.read_bytes().partition(b"\n")
    # A deny turned into an allow, the header left as it was: the body's digest no longer matches.
    entry.write_bytes(header + b"\n" + body.replace(b'"effect":"deny"', b'"effect":"allow"'))
    assert _kept([path]) is None
    rebuilt = build_policy([path])
    assert isinstance(rebuilt, CompiledPolicy)
    assert rebuilt.rules[0].effect == "deny"
    assert _kept([path]) is not None  # the damaged entry was replaced by the fresh build
    entry.write_bytes(b"not an entry")
    assert _kept([path]) is None
    entry.write_bytes(b"")
    assert _kept([path]) is None


def test_an_entry_moved_to_another_key_is_not_read(cache_dir: Path, tmp_path: Path) -> None:
    path = _pack(tmp_path)
    assert isinstance(build_policy([path]), CompiledPolicy)
    entry = _entry([path])
    _pack(tmp_path, PACK.replace("no recursive delete", "no rm -rf"))
    other = _entry([path])
    shutil.copy(entry, other)
    assert _kept([path]) is None
    policy = build_policy([path])
    assert isinstance(policy, CompiledPolicy) and policy.rules[0].message == "no rm -rf"


@pytest.mark.parametrize("on_error", ["deny", "ignore"])
def test_a_well_formed_entry_that_no_longer_compiles_fails_closed_where_it_is_used(
    cache_dir: Path, tmp_path: Path, on_error: str
) -> None:
    """Kept trees compile on first use (an entry is verified, and its build compiled every tree
    with the same code); one that did not would fail every decision reaching it closed, as an
    internal error, whatever the rule's ``on_error``: the policy never decides without the rule."""
    path = _pack(
        tmp_path,
        PACK.replace("      decision: deny\n", f"      decision: deny\n      on_error: {on_error}\n", 1),
    )
    assert isinstance(build_policy([path]), CompiledPolicy)
    entry = _entry([path])
    body = entry.read_bytes().partition(b"\n")[2]
    assert body.count(b'["conditionaland"') == 1  # the rule's ``when``
    body = body.replace(b'["conditionaland"', b'["no_such_node"', 1)
    key = entry.name.removesuffix(".json")
    entry.write_bytes(entry_bytes(key, body))
    kept = _kept([path])
    assert kept is not None
    decider = Decider(kept)
    for command in ("rm -rf build", "rm build"):  # denied and allowed by a fresh build
        verdict = decider.check_tool_call(ToolCallEvent(tool="shell", args={"command": command}))
        assert verdict.decision == "deny"
        assert verdict.internal_error is not None and "no longer compiles" in verdict.internal_error
    unreached = decider.check_tool_call(ToolCallEvent(tool="shell", args={"command": "ls"}))
    assert unreached.decision == "allow"  # match.programs: the rule is not reached


@pytest.mark.parametrize("mode", [0o644, 0o660, 0o606])
def test_an_entry_others_could_write_is_not_read(cache_dir: Path, tmp_path: Path, mode: int) -> None:
    path = _pack(tmp_path)
    assert isinstance(build_policy([path]), CompiledPolicy)
    entry = _entry([path])
    entry.chmod(mode)
    kept = _kept([path])
    assert (kept is not None) == (mode & 0o022 == 0)


def test_a_linked_entry_is_not_read(cache_dir: Path, tmp_path: Path) -> None:
    path = _pack(tmp_path)
    assert isinstance(build_policy([path]), CompiledPolicy)
    entry = _entry([path])
    os.link(entry, tmp_path / "second-name")
    assert _kept([path]) is None
    (tmp_path / "second-name").unlink()
    elsewhere = tmp_path / "elsewhere.json"
    entry.rename(elsewhere)
    entry.symlink_to(elsewhere)
    assert _kept([path]) is None


@pytest.mark.parametrize("mode", [0o755, 0o770, 0o701])
def test_a_folder_others_can_enter_or_write_is_not_used(cache_dir: Path, tmp_path: Path, mode: int) -> None:
    path = _pack(tmp_path)
    assert isinstance(build_policy([path]), CompiledPolicy)
    cache_dir.chmod(mode)
    assert _kept([path]) is None
    before = sorted(cache_dir.iterdir())
    assert isinstance(build_policy([path]), CompiledPolicy)
    assert sorted(cache_dir.iterdir()) == before  # nothing written there either


def test_a_symlinked_folder_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(link))
    path = _pack(tmp_path)
    assert isinstance(build_policy([path]), CompiledPolicy)
    assert list(real.iterdir()) == []


def test_switched_off_nothing_is_read_or_written(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SWITCH_VARIABLE, "off")
    path = _pack(tmp_path)
    assert isinstance(build_policy([path]), CompiledPolicy)
    assert not cache_dir.exists()
    monkeypatch.delenv(SWITCH_VARIABLE)
    assert isinstance(build_policy([path], cache=False), CompiledPolicy)
    assert not cache_dir.exists()


def test_a_kept_policy_keeps_redactions_programs_and_examples_verdicts(
    cache_dir: Path, tmp_path: Path
) -> None:
    path = _pack(tmp_path)
    fresh = build_policy([path], cache=False)
    assert isinstance(build_policy([path]), CompiledPolicy)
    kept = _kept([path])
    assert isinstance(fresh, CompiledPolicy) and isinstance(kept, CompiledPolicy)
    for one, other in zip(kept.rules, fresh.rules, strict=True):
        assert [r.label for r in one.redactions] == [r.label for r in other.redactions]
        assert (one.programs and one.programs.pattern) == (other.programs and other.programs.pattern)
    redact = kept.rules[1].redactions[0]
    assert redact.pattern.sub(redact.replace, "key-123 here") == "[KEY] here"
    assert kept.packs[0].variables["cmd"].source == 'has(args.command) ? args.command : ""'


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_an_entry_or_folder_of_another_user_is_not_used(cache_dir: Path, tmp_path: Path) -> None:
    path = _pack(tmp_path)
    assert isinstance(build_policy([path]), CompiledPolicy)
    entry = _entry([path])
    os.chown(entry, 65534, -1)
    assert _kept([path]) is None
    os.chown(entry, 0, -1)
    assert _kept([path]) is not None
    os.chown(cache_dir, 65534, -1)
    assert _kept([path]) is None


def test_self_protection_guards_the_cache_folder(cache_dir: Path, tmp_path: Path) -> None:
    """An agent of the same user passes the owner and mode checks, so its tools may not write
    there: the override folder and the default ``dsh-policy`` cache folders are protected."""
    from dsh_policy.policy.self_protection.protection import protection_for

    protection = protection_for(home=str(tmp_path))
    entry = str(cache_dir / "0123.json")
    refusal = protection.check("write_file", {"path": entry, "content": "{}"})
    assert refusal is not None and refusal.rule == "self-protection/policy-cache"
    default = os.path.join(os.path.expanduser("~"), ".cache", "dsh-policy", "compiled", "k.json")
    assert protection.check("write_file", {"path": default, "content": "{}"}) is not None
    assert protection.check("write_file", {"path": str(tmp_path / "notes.txt"), "content": "x"}) is None


def test_self_protection_switched_off_changes_the_digest_once(cache_dir: Path, tmp_path: Path) -> None:
    """The deployment's protection is attached after the cache: a kept policy is the packs' own,
    so switching protection off gives the same digest built or read back."""
    from dsh_policy.policy.self_protection.protection import protection_for

    path = _pack(tmp_path)
    off = protection_for(packs=[path], enabled=False, home=str(tmp_path))
    fresh = build_policy([path], protection=off, cache=False)
    built = build_policy([path], protection=off)
    kept = build_policy([path], protection=off)
    plain = build_policy([path])
    assert isinstance(fresh, CompiledPolicy) and isinstance(built, CompiledPolicy)
    assert isinstance(kept, CompiledPolicy) and isinstance(plain, CompiledPolicy)
    assert _kept([path]) is not None
    assert fresh.digest == built.digest == kept.digest != plain.digest
    assert kept.protection is off and plain.protection is None


def test_a_policy_that_cannot_be_written_still_loads(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keeping is best effort: an encoder failure (a value JSON cannot carry) or a folder that
    cannot be made leaves the policy unkept, never unloaded."""
    from dsh_policy.policy.policy_cache import codec

    def refuse(*_: object) -> bytes:
        raise TypeError("Type is not JSON serializable")

    monkeypatch.setattr(codec, "encode", refuse)
    path = _pack(tmp_path)
    assert isinstance(build_policy([path]), CompiledPolicy)
    assert _kept([path]) is None
    monkeypatch.undo()
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(blocker / "cache"))
    assert isinstance(build_policy([path]), CompiledPolicy)
