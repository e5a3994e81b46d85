"""``dsh-policy diff OLD NEW``: rules added, removed and changed, params and variables, digests."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.review import diff_policies, load_policy_file
from replay_kit import ROOT, SHIPPED, edited_packs

BASELINE = SHIPPED[0]


def _diff(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli_main(["diff", *argv])
    return code, out.getvalue()


def _edit(_: str, document: dict[str, Any]) -> None:
    spec = document["spec"]
    spec["params"]["max_turns"] = 20
    for variable in spec["variables"]:
        if variable["name"] == "deleters_re":
            variable["expression"] = "r'^(?:rm|rimraf|find|rsync|mv|shred)$'"
    rules = []
    for rule in spec["rules"]:
        if rule["id"] == "no-fork-bomb":
            continue  # removed
        if rule["id"] == "ask-web-egress-outside-allow-list":
            rule["decision"], rule["mode"] = "deny", "warn"
            rule["match"] = {"tools": ["http_request"]}  # every argument it reads is http_request's
        rules.append(rule)
    rules.append({"id": "no-chmod-777", "stage": "pre-execute", "match": {"tools": ["shell"]},
                  "when": 'has(args.command) && args.command.contains("chmod 777")', "decision": "deny"})
    spec["rules"] = rules


@pytest.fixture(scope="module")
def edited(tmp_path_factory: pytest.TempPathFactory) -> Path:
    (path,) = edited_packs(tmp_path_factory.mktemp("diff"), "edited", _edit, (BASELINE,))
    return path


def test_diff_names_every_rule_param_and_variable_change(edited: Path) -> None:
    code, out = _diff(str(BASELINE), str(edited), "--format", "json")
    document = json.loads(out)
    assert code == 1 and document["identical"] is False
    assert document["old"]["digest"] != document["new"]["digest"]
    assert [rule["id"] for rule in document["rules"]["added"]] == ["baseline/no-chmod-777"]
    assert document["rules"]["added"][0]["decision"] == "deny"
    assert [rule["id"] for rule in document["rules"]["removed"]] == ["baseline/no-fork-bomb"]
    changed = {change["id"]: change for change in document["rules"]["changed"]}
    egress = changed["baseline/ask-web-egress-outside-allow-list"]["changes"]
    assert egress["decision"] == {"old": "ask", "new": "deny"}
    assert egress["mode"] == {"old": "enforce", "new": "warn"}
    assert egress["match"]["new"] == ["http_request"]
    # Unchanged rules whose condition reads what changed are named, with what they read.
    assert "params.max_turns" in changed["baseline/turn-budget"]["via"]
    assert changed["baseline/turn-budget"]["changes"] == {}
    assert "vars.deleters_re" in changed["baseline/no-recursive-delete-of-critical-paths"]["via"]
    assert document["params"] == [{"param": "baseline.max_turns", "old": 50, "new": 20}]
    assert [v["variable"] for v in document["variables"]] == ["baseline.deleters_re"]


def test_diff_text_reads_as_a_review(edited: Path) -> None:
    code, out = _diff(str(BASELINE), str(edited))
    assert code == 1
    assert "+ baseline/no-chmod-777  [pre-execute, deny, enforce] match shell" in out
    assert "- baseline/no-fork-bomb" in out
    assert "~ baseline/ask-web-egress-outside-allow-list" in out
    assert "decision: ask -> deny" in out
    assert "~ baseline.max_turns: 50 -> 20" in out


def test_diff_of_deployment_files_compares_their_effective_policies(tmp_path: Path) -> None:
    shipped = ROOT / "examples" / "gateway.yaml"
    other = tmp_path / "gateway.yaml"
    text = shipped.read_text().replace("../rules/", f"{ROOT}/rules/").replace("workspace: /workspace",
                                                                               "workspace: /srv/app")
    other.write_text(text)
    old, new = load_policy_file(shipped), load_policy_file(other)
    assert not isinstance(old, list) and not isinstance(new, list)
    diff = diff_policies(old, new)
    assert [name for name, _, _ in diff.params] == ["baseline.workspace"]
    assert not diff.rules_added and not diff.rules_removed
    assert all(not change.fields and change.via for change in diff.rules_changed)
    assert diff.exit_code == 1


def test_the_same_policy_diffs_clean_and_bad_input_exits_2(tmp_path: Path) -> None:
    code, out = _diff(str(BASELINE), str(BASELINE))
    assert code == 0 and "same policy" in out
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: dsh-policy/v1\nkind: RulePack\nmetadata: {name: x}\nspec: {rules: [{}]}\n")
    assert _diff(str(BASELINE), str(broken))[0] == 2
    assert _diff(str(BASELINE))[0] == 2
