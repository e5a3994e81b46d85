"""docs/coverage.md names rules and case files by technique; every one it names must exist, and
every technique row must name a rule or say why it is out of scope."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
MATRIX = ROOT / "docs" / "coverage.md"
RULES = ROOT / "rules"
CORPUS = ROOT / "tests" / "corpus"


def shipped_rules() -> set[str]:
    found: set[str] = set()
    for pack in RULES.glob("*.yaml"):
        if pack.name.endswith(".cases.yaml"):
            continue
        document = yaml.load(pack.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        name = document["metadata"]["name"]
        found.update(f"{name}/{rule['id']}" for rule in document["spec"]["rules"])
    return found


def technique_rows() -> list[list[str]]:
    """The rows of the tables headed ``| Technique`` (the page's other tables are figures)."""
    rows = []
    in_matrix = False
    for line in MATRIX.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            in_matrix = False
        elif line.startswith("| Technique"):
            in_matrix = True
        elif in_matrix and not line.startswith("|---"):
            # A cell may hold a pipe escaped as GitHub's tables read it (``\\|``).
            rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip("|"))])
    return rows


def test_every_rule_and_case_file_the_matrix_names_exists() -> None:
    rules = shipped_rules()
    missing: list[str] = []
    rows = technique_rows()
    assert len(rows) >= 50
    for technique, named_rules, cases in rows:
        for ref in re.findall(r"`([a-z]+/[a-z0-9-]+)`", named_rules):
            if ref not in rules:
                missing.append(f"{technique}: rule {ref}")
        for ref in re.findall(r"`([^`]+\.yaml)`", cases):
            path = RULES / ref if ref.endswith(".cases.yaml") else CORPUS / ref
            if not path.is_file():
                missing.append(f"{technique}: case file {ref}")
        if "Out of scope" not in named_rules:
            assert re.search(r"`[a-z]+/[a-z0-9-]+`", named_rules), f"{technique} names no rule"
            assert cases, f"{technique} names no cases"
    assert not missing, "\n".join(missing)


def test_every_effects_rule_appears_in_the_matrix() -> None:
    """A rule added to the effects pack without a technique is coverage nobody can audit."""
    text = MATRIX.read_text(encoding="utf-8")
    effects = {rule for rule in shipped_rules() if rule.startswith("effects/")}
    assert effects
    assert not {rule for rule in effects if f"`{rule}`" not in text}
