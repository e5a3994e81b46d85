"""The resource cases of issue 12 end with the safe answer: decisions, not timings (the time and
memory figures are measured by ``benchmarks/bench_limits.py``, side by side, never asserted here).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.config import policy_sources
from dsh_policy.policy.decide import Decider, Policy
from dsh_policy.policy.events import StepEvent, StepMessage, ToolCallEvent
from dsh_policy.policy.loading import LoadFailure

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "rules" / "baseline.yaml"

# The plausible native-engine rule of the issue (200 blocked words), shared with the benchmark.
WORDS_PACK = Path(__file__).parent / "words_pack.yaml"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Decider:
    """The baseline pack as a deployment decides it (self-protection included)."""
    config = tmp_path_factory.mktemp("deployment") / "gateway.yaml"
    config.write_text(f"apiVersion: dsh-policy/v1\nkind: Gateway\nspec:\n  packs: [{BASELINE}]\n")
    sources = policy_sources([], config=str(config))
    assert not isinstance(sources, list)
    built = sources.build()
    assert not isinstance(built, LoadFailure)
    return Decider(built)


@pytest.mark.parametrize(
    "line", ["true;" * 40_000, "a|" * 100_000, "{ " * 60_000, "{" * 60_000 + " rm -rf /"]
)
def test_pathological_shell_lines_under_the_cap_are_refused(deployment: Decider, line: str) -> None:
    verdict = deployment.check_tool_call(ToolCallEvent("shell", {"command": line}))
    assert verdict.decision == "deny"


@pytest.fixture(scope="module")
def words_policy() -> Policy:
    loaded = Policy.load([WORDS_PACK])
    assert not isinstance(loaded, LoadFailure)
    return loaded


def test_an_argument_over_the_cap_never_reaches_cel(words_policy: Policy) -> None:
    verdict = words_policy.check_tool_call(ToolCallEvent("shell", {"command": "x" * (30 << 20)}))
    assert verdict.decision == "deny"
    assert "too large to check" in (verdict.message or "")
    assert verdict.trace == ()  # no rule ran on it


def test_an_argument_under_the_cap_is_seen_whole(words_policy: Policy) -> None:
    """What a rule sees is never truncated: a value under the cap reaches it whole (here the
    blocked word is its very last byte), a larger one is refused before any rule runs."""
    command = "y" * ((1 << 20) - 8) + " w199"
    verdict = words_policy.check_tool_call(ToolCallEvent("shell", {"command": command}))
    assert (verdict.decision, verdict.rules) == ("deny", ("words/blocked-words",))
    assert words_policy.check_tool_call(ToolCallEvent("shell", {"command": "ls w1x"})).decision == "allow"


def test_a_prompt_over_the_cap_is_rejected(deployment: Decider) -> None:
    verdict = deployment.gate_step(StepEvent(messages=(StepMessage("user", "p" * (2 << 20)),)))
    assert verdict.decision == "reject" and "too large" in (verdict.message or "")


def test_an_alias_bomb_pack_is_a_positioned_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 1.1 MB pack of aliases to a 1 MiB string once expanded to 12.5 GB before MemoryError."""
    pack = tmp_path / "aliases.yaml"
    aliases = ", ".join(["*big"] * 200)
    pack.write_text(
        "apiVersion: dsh-policy/v1\nkind: RulePack\nmetadata: {name: bomb}\nspec:\n"
        f"  params:\n    big: &big {'a' * (256 << 10)}\n    copies: [{aliases}]\n  rules: []\n"
    )
    assert cli_main(["check", str(pack)]) == 2
    err = capsys.readouterr().err
    assert "alias expansion exceeds" in err and f"{pack}:" in err
    assert "Traceback" not in err


def test_a_pack_file_over_the_size_cap_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack = tmp_path / "huge.yaml"
    with pack.open("w") as handle:
        handle.write("# " + "x" * (17 << 20) + "\n")
    assert cli_main(["check", str(pack)]) == 2
    assert "larger than 16 MiB" in capsys.readouterr().err
