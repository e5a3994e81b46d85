"""Every shipped pack in ``rules/`` passes its cases file on the default engine, every installed
engine decides a sample of them alike (all of them with ``DSH_CORPUS_FULL=1``), and no rule goes
untested: each rule decides in at least one passing case and stays silent in at least one
passing case of the tools it matches (a benign look-alike)."""

from __future__ import annotations

import fnmatch
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from dsh_policy.policy.cel import available_engines
from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure

RULES_DIR = Path(__file__).resolve().parents[2] / "rules"
PACKS = sorted(p for p in RULES_DIR.glob("*.yaml") if not p.name.endswith(".cases.yaml"))
# pre-execute cases run the whole gate, so guard rules are exercised by them too.
CASE_STAGES_FOR_RULE = {
    "pre-step": {"pre-step"},
    "pre-execute": {"pre-execute"},
    "guard": {"pre-execute", "guard"},
    "post-execute": {"post-execute"},
}


def _cases_file(pack: Path) -> Path:
    return pack.with_name(pack.name.removesuffix(".yaml") + ".cases.yaml")


def _load(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)


FULL = os.environ.get("DSH_CORPUS_FULL", "") not in ("", "0")
ENGINE_SAMPLE_EVERY = 1 if FULL else 4
"""Every case runs on the default engine (what deployments run); every installed engine decides
every fourth case alike (all of them with ``DSH_CORPUS_FULL=1``). The python engine walks a parse
tree at about six times the default engine's cost per case, so running all 1,800 cases on every
engine was a tenth of the suite's CPU; the engines' agreement is what that run is for, and the
corpora sample the other engines the same way."""
_REPORTS: dict[tuple[Path, str], tuple[int, str]] = {}


def _check_json(
    pack: Path, capsys: pytest.CaptureFixture[str], engine: str = "auto", scratch: Path | None = None
) -> dict[str, Any]:
    """``check --cases --engine ENGINE --format json`` of a pack, run once per module and engine
    (the tests reading a report read the same report of the same unchanged files). With
    ``engine="all"`` the cases are every ENGINE_SAMPLE_EVERY-th of the pack's, so every engine
    decides the same sample and engines deciding a case apart fail it."""
    key = (pack, engine)
    if key not in _REPORTS:
        capsys.readouterr()
        cases = _cases_file(pack)
        if engine == "all" and ENGINE_SAMPLE_EVERY > 1:
            assert scratch is not None, "the sampled cases need a folder to be written to"
            cases = _sampled_cases(cases, scratch)
        # the cases test what is decided; speed lives in benchmarks/ (a busy host once ran the python
        # engine past the gateway's 2 s budget and failed a case closed)
        options = ["--engine", engine, "--format", "json", "--event-seconds", "30"]
        code = cli_main(["check", str(pack), "--cases", str(cases), *options])
        _REPORTS[key] = code, capsys.readouterr().out
    code, out = _REPORTS[key]
    report: dict[str, Any] = json.loads(out)
    failed = [case["name"] for case in report["cases"] if not case["passed"]]
    assert code == 0, failed or report["errors"] or report.get("disagreements")
    return report


def _sampled_cases(cases: Path, folder: Path) -> Path:
    """Every ENGINE_SAMPLE_EVERY-th case of ``cases``, written to ``folder``."""
    document = _load(cases)
    document["cases"] = document["cases"][::ENGINE_SAMPLE_EVERY]
    sampled = folder / cases.name
    sampled.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return sampled


def test_rules_directory_ships_the_documented_packs() -> None:
    assert {p.stem for p in PACKS} >= {"baseline", "secrets", "injection"}


@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.stem)
def test_every_shipped_pack_has_a_cases_file_and_described_rules(pack: Path) -> None:
    assert _cases_file(pack).is_file(), f"{pack.name} ships without {_cases_file(pack).name}"
    rules = _load(pack)["spec"]["rules"]
    undocumented = [rule["id"] for rule in rules if not str(rule.get("description", "")).strip()]
    assert not undocumented, f"rules without a description: {undocumented}"


@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.stem)
def test_pack_passes_its_cases_on_every_engine(
    pack: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = _check_json(pack, capsys)
    assert report["ok"], report
    sample = _check_json(pack, capsys, engine="all", scratch=tmp_path)
    assert sample["engines"] == available_engines()
    assert len(sample["cases"]) >= len(report["cases"]) // ENGINE_SAMPLE_EVERY
    assert sample["ok"] and not sample["disagreements"], sample["disagreements"]


@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.stem)
def test_every_rule_decides_in_a_passing_case(pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = _check_json(pack, capsys)
    name = _load(pack)["metadata"]["name"]
    rule_ids = {f"{name}/{rule['id']}" for rule in _load(pack)["spec"]["rules"]}
    exercised = {rule for case in report["cases"] if case["passed"] for rule in case["rules"]}
    assert rule_ids - exercised == set(), "rules no passing case shows deciding"


@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.stem)
def test_every_rule_has_a_passing_case_where_it_stays_silent(
    pack: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _check_json(pack, capsys)
    outcomes = {case["name"]: case for case in report["cases"]}
    cases = _load(_cases_file(pack))["cases"]
    assert len(outcomes) == len(cases), "case names must be unique so reports can be matched to cases"
    name = _load(pack)["metadata"]["name"]
    silent_missing = []
    for rule in _load(pack)["spec"]["rules"]:
        rule_id = f"{name}/{rule['id']}"
        tools = rule.get("match", {}).get("tools", ["*"])
        negatives = [
            case
            for case in cases
            if case["stage"] in CASE_STAGES_FOR_RULE[rule["stage"]]
            and (rule["stage"] == "pre-step" or any(fnmatch.fnmatchcase(case["tool"], t) for t in tools))
            and outcomes[case["name"]]["passed"]
            and rule_id not in outcomes[case["name"]]["rules"]
        ]
        if not negatives:
            silent_missing.append(rule_id)
    assert not silent_missing, "rules without a benign look-alike case"


DEPLOYED_WORKSPACE = "/home/dev/my.project (v2)"


@pytest.mark.parametrize(
    ("tool", "args", "decision"),
    [
        ("shell", {"command": f'rm -rf "{DEPLOYED_WORKSPACE}"'}, "deny"),
        ("shell", {"command": f'rm -rf "{DEPLOYED_WORKSPACE}"/*'}, "deny"),
        ("shell", {"command": f'rm -rf "{DEPLOYED_WORKSPACE}/build"'}, "allow"),
        ("shell", {"command": f'echo ok > "{DEPLOYED_WORKSPACE}/status.txt"'}, "allow"),
        ("shell", {"command": "echo x >> ~/.bashrc"}, "deny"),
        ("shell", {"command": "rm -rf /workspace/build"}, "deny"),
        ("write_file", {"path": f"{DEPLOYED_WORKSPACE}/src/app.py", "content": "x"}, "allow"),
        ("write_file", {"path": "src/app.py", "content": "x"}, "allow"),
        ("write_file", {"path": "/workspace/src/app.py", "content": "x"}, "deny"),
    ],
)
def test_baseline_follows_a_deployed_workspace_param(tool: str, args: dict[str, Any], decision: str) -> None:
    """The workspace is a param: a deployment with another path (spaces, dots and parentheses
    included, which must never be read as regex syntax) gets the same protections there."""
    policy = Policy.load([RULES_DIR / "baseline.yaml"], params={"workspace": DEPLOYED_WORKSPACE})
    assert not isinstance(policy, LoadFailure), policy
    verdict = policy.check_tool_call(ToolCallEvent(tool=tool, args=args))
    assert verdict.decision == decision, verdict
