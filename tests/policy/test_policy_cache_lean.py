"""What reading a kept policy back leaves out: lark (the trees come back as stand-ins), and the
compilation of patterns the build already compiled (each on its first use). Every tree is still
compiled whole before the policy is used; decisions are those of a fresh build
(``test_policy_cache.py`` decides every shipped case both ways)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from dsh_policy.policy.cel.closure_values import CelError
from dsh_policy.policy.cel.engine import CelEvalError
from dsh_policy.policy.cel.functions import compile_re2
from dsh_policy.policy.compiled import CompiledPolicy
from dsh_policy.policy.loading import build_policy
from dsh_policy.policy.policy_cache import lookup
from dsh_policy.policy.policy_cache.folder import CACHE_DIR_VARIABLE, SWITCH_VARIABLE, entry_bytes, entry_path
from dsh_policy.policy.policy_cache.kept_expression import KeptExpression

RULES_DIR = Path(__file__).resolve().parents[2] / "rules"
PACKS = sorted(str(p) for p in RULES_DIR.glob("*.yaml") if not p.name.endswith(".cases.yaml"))

PACK = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: patterns}
spec:
  rules:
    - id: no-force-push
      stage: pre-execute
      match: {tools: [shell], programs: [git]}
      when: 'args.command.matches(r"push\\s+(-f|--force)\\b")'
      decision: deny
      message: no force push
      examples: {deny: ["git push -f origin main"], allow: ["git push origin main"]}
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(folder))
    monkeypatch.delenv(SWITCH_VARIABLE, raising=False)
    return folder


def _kept(paths: list[str]) -> CompiledPolicy | None:
    return lookup(paths, params={}, param_origins={}, engine="auto", shadow=False).policy  # type: ignore[no-any-return]


_READ_BACK = """
import sys
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.policy_cache import lookup
found = lookup(sys.argv[1:], params={}, param_origins={}, engine="auto", shadow=False)
assert found.policy is not None, "not read from the cache"
policy = Policy.load(sys.argv[1:])
assert policy.check_tool_call(ToolCallEvent(tool="Read", args={"file_path": "/tmp/x"})).decision == "allow"
builders = ("lark", "celpy", "yaml", "pydantic", "jsonschema", "dsh_policy.policy.pack")
print(sorted(name for name in sys.modules if name.split(".")[0] in builders or name in builders))
"""


def test_the_shipped_packs_read_back_import_no_parser(cache_dir: Path) -> None:
    """A process that reads its policy back and decides needs neither lark, cel-python, the YAML
    reader nor the pack schema's validators (pydantic, jsonschema): the build imports them."""
    assert isinstance(build_policy(PACKS), CompiledPolicy)  # builds and keeps
    env = {**os.environ, CACHE_DIR_VARIABLE: str(cache_dir)}
    out = subprocess.run(
        [sys.executable, "-c", _READ_BACK, *PACKS], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


_READY = """
import sys
from dsh_policy.policy.loading import build_policy
from dsh_policy.policy.policy_cache import lookup
assert lookup(sys.argv[1:], params={}, param_origins={}, engine="auto", shadow=False).policy is not None
policy = build_policy(sys.argv[1:])
readers = sorted(n for n in sys.modules if n.startswith("dsh_policy.cmdline."))
from dsh_policy.policy.decide import Decider
from dsh_policy.policy.events import ToolCallEvent
call = ToolCallEvent(tool="shell", args={"command": "git push -f origin main"})
verdict = Decider(policy).check_tool_call(call)
print(readers, "dsh_policy.cmdline.shell.reading" in sys.modules, verdict.decision)
"""


def test_a_policy_read_back_is_ready_before_the_readers_are_imported(cache_dir: Path) -> None:
    """The command-line readers (about 20 ms of imports) are imported by the first helper a
    decision calls, not by loading: a policy read back has imported none but the pattern stand-in
    and the stage deadline it reports its one-time compiles to (both import only the standard
    library)."""
    assert isinstance(build_policy(PACKS), CompiledPolicy)
    env = {**os.environ, CACHE_DIR_VARIABLE: str(cache_dir)}
    out = subprocess.run(
        [sys.executable, "-c", _READY, *PACKS], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    imported = "['dsh_policy.cmdline.deadline', 'dsh_policy.cmdline.lazy_regex']"
    assert out.stdout.split("]")[0] + "]" == imported
    assert out.stdout.split("]", 1)[1].split() == ["True", "deny"]


def test_a_kept_matches_pattern_compiles_on_first_use(cache_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "patterns.yaml"
    path.write_text(PACK, encoding="utf-8")
    assert isinstance(build_policy([str(path)]), CompiledPolicy)
    compile_re2.cache_clear()
    kept = _kept([str(path)])
    assert isinstance(kept, CompiledPolicy)
    assert compile_re2.cache_info().currsize == 0  # read back: nothing compiled yet
    rule = kept.rules[0]
    assert rule.when is not None and rule.programs is not None
    program = rule.when.program
    assert program.evaluate({"args": {"command": "git push --force origin"}}) is True
    assert compile_re2.cache_info().currsize == 1
    assert program.evaluate({"args": {"command": "git push origin"}}) is False
    assert program.evaluate({"args": {"command": "git push -f"}}) is True
    assert rule.programs.fullmatch("git") and not rule.programs.fullmatch("gitk")


def test_a_kept_pattern_that_does_not_compile_fails_closed(cache_dir: Path, tmp_path: Path) -> None:
    """An entry is trusted as its folder is (whoever could write one could as well turn a deny
    into an allow); still, a kept pattern RE2 refuses is an evaluation error, never a match."""
    path = tmp_path / "patterns.yaml"
    path.write_text(PACK, encoding="utf-8")
    assert isinstance(build_policy([str(path)]), CompiledPolicy)
    found = lookup([str(path)], params={}, param_origins={}, engine="auto", shadow=False)
    assert found.key is not None
    entry = Path(entry_path(os.environ[CACHE_DIR_VARIABLE], found.key))
    body = entry.read_bytes().partition(b"\n")[2]
    stored = b"(-f|--force)"
    assert stored in body
    body = body.replace(stored, b"(-f|--force")  # the source, and the tree's literal
    entry.write_bytes(entry_bytes(found.key, body))
    kept = _kept([str(path)])
    assert isinstance(kept, CompiledPolicy)
    when = kept.rules[0].when
    assert when is not None
    result = when.program.evaluate({"args": {"command": "git push -f"}})
    assert isinstance(result, CelEvalError) and "missing )" in result.message
    with pytest.raises(CelError):
        program = when.program
        assert isinstance(program, KeptExpression)
        program.compiled().evaluate_raw({"args": {"command": "git push -f"}})
