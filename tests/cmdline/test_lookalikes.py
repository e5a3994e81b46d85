"""Look-alike package names (typosquats and affix combosquats) and named package sources: the
reader's classes, the shipped list of established names, false positives on real names and on
every corpus's benign side, the pack parameters, and lazy loading of the list."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from dsh_policy.cmdline.effects import lookalikes, shell_acts
from dsh_policy.cmdline.effects.lookalikes import DATA, near_miss, snapshot
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure

ROOT = Path(__file__).resolve().parents[2]
EFFECTS = ROOT / "rules" / "effects.yaml"


def kinds(line: str) -> list[str]:
    return [e["kind"] for e in shell_acts(line)]


@pytest.mark.parametrize(
    ("ecosystem", "name", "target", "how"),
    [
        ("pypi", "colourama", "colorama", "one letter away"),
        ("pypi", "reqeusts", "requests", "one letter away"),
        ("pypi", "python3-dateutil", "python-dateutil", "one letter away"),
        ("pypi", "jeIlyfish", "jellyfish", "look-alike letters"),
        ("pypi", "python-requests", "requests", "the name with an affix added"),
        ("npm", "crossenv", "cross-env", "separators changed"),
        ("npm", "lodash-js", "lodash", "the name with an affix added"),
        ("npm", "expresss", "express", "one letter away"),
        ("npm", "@bable/core", "@babel/core", "one letter away"),
        ("npm", "rnocha", "mocha", "look-alike letters"),
        ("go", "github.com/spf13-cobra/cobra-cli", "github.com/spf13/cobra", "the owner with a word added"),
        ("go", "github.com/labstack-go/echo/v4", "github.com/labstack/echo", "the owner with a word added"),
        ("go", "github.com/gin-gonlc/gin", "github.com/gin-gonic/gin", "one letter away"),
        ("go", "github.com/gin_gonic/gin", "github.com/gin-gonic/gin", "separators changed"),
    ],
)
def test_near_misses_of_popular_names_are_found(ecosystem: str, name: str, target: str, how: str) -> None:
    assert near_miss(ecosystem, name) == (target, how)


@pytest.mark.parametrize(
    ("ecosystem", "name"),
    [
        ("pypi", "requests"),
        ("pypi", "python-dateutil"),
        ("pypi", "Jellyfish"),
        ("npm", "request"),  # one letter from requests' npm namesake, and established itself
        ("npm", "cross-env"),
        ("npm", "@types/nodee"),  # under an established scope: only its owner publishes there
        ("npm", "mocha"),
        ("pypi", "my-internal-tool"),
        ("pypi", "numpyx"[:3]),  # too short to judge
        ("crates", "serdee"),  # no list for the ecosystem: nothing is judged
        ("go", "github.com/spf13/cobra-cli"),  # an established owner's own module
        ("go", "golang.org/x/tools/gopls"),
        ("go", "github.com/golangci/golangci-lint/cmd/golangci-lint"),
        ("go", "github.com/Sirupsen/logrus"),  # owners compare without case
        ("go", "github.com/acme-tools/cobra"),  # another owner's module of that name: no imitation
        ("go", "github.com/spf13-cobra/unrelated"),  # the imitated owner publishes no such module
    ],
)
def test_established_and_unrelated_names_are_not(ecosystem: str, name: str) -> None:
    assert near_miss(ecosystem, name) == ("", "")


def test_installs_carry_the_effect_and_other_commands_do_not() -> None:
    assert kinds("pip install colourama python3-dateutil") == ["lookalike-package"] * 2
    assert kinds("npm i -D crossenv") == ["lookalike-package"]
    assert kinds("poetry add jeIlyfish") == ["lookalike-package"]
    assert kinds("pip install requests numpy pandas") == []
    assert kinds("pip download colourama") == []
    assert kinds("cat colourama.txt") == []
    assert kinds("npx crossenv NODE_ENV=production node app.js") == ["lookalike-package"]
    assert kinds("uvx colourama") == ["lookalike-package"]
    assert kinds("pnpm dlx crossenv build") == ["lookalike-package"]
    assert kinds("npx -y create-react-app my-app && npx prettier --write . && uvx ruff check") == []
    assert kinds("go install github.com/spf13-cobra/cobra-cli@latest") == ["lookalike-package"]
    assert kinds("go install golang.org/x/tools/gopls@latest && go get github.com/spf13/cobra@v1.8.0") == []
    (effect,) = shell_acts("pip install colourama==0.4.6")
    assert effect["target"] == "pypi:colourama" and "colorama" in effect["what"]


def _listed() -> dict[str, list[str]]:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    return {d["ecosystem"]: d["names"] for d in map(json.loads, lines[1:])}


def test_the_shipped_list_is_dated_sourced_and_every_listed_name_passes() -> None:
    header = json.loads(DATA.read_text(encoding="utf-8").partition("\n")[0])
    assert (
        header["snapshot"]
        and "top-pypi-packages" in header["source"]
        and "npm-high-impact" in header["source"]
    )
    assert snapshot().endswith("@" + header["snapshot"])
    listed = _listed()
    assert len(listed["pypi"]) >= 10_000 and len(listed["npm"]) >= 10_000 and len(listed["go"]) >= 2_000
    for ecosystem, names in listed.items():
        assert not [n for n in names if near_miss(ecosystem, n)[0]], ecosystem


def _benign_shell_lines() -> list[str]:
    lines: list[str] = []
    for path in sorted((ROOT / "tests" / "corpus").glob("*/benign/*.yaml")):
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader) or {}
        for entry in document.get("entries", ()):
            command = (entry.get("args") or {}).get("command") or entry.get("command")
            if isinstance(command, str):
                lines.append(command)
    document = yaml.load(
        (ROOT / "tests" / "corpus" / "benign.yaml").read_text(encoding="utf-8"), Loader=yaml.CSafeLoader
    )
    lines += [e["command"] for e in document["entries"] if "command" in e]
    return lines


def test_no_benign_corpus_command_is_a_look_alike() -> None:
    lines = _benign_shell_lines()
    assert len(lines) > 1000
    flagged = [line for line in lines if "lookalike-package" in kinds(line)]
    assert not flagged


def _policy(**params: object) -> Policy:
    policy = Policy.load([EFFECTS], params=params)
    assert not isinstance(policy, LoadFailure), policy
    return policy


def _decision(policy: Policy, command: str) -> str:
    event = ToolCallEvent(tool="shell", args={"command": command}, turn=1, step=1)
    return str(policy.check_tool_call(event).decision)


def test_approved_names_and_trusted_sources_are_pack_parameters() -> None:
    default = _policy()
    assert _decision(default, "pip install colourama") == "ask"
    assert _decision(default, "brew install kubetools/tap/kubectl-fast") == "ask"
    assert _decision(default, "brew tap hashicorp/tap") == "allow"
    assert _decision(default, "conda install -c someuser sometool") == "ask"
    assert _decision(default, "conda install -c conda-forge numpy") == "allow"
    tuned = _policy(
        approved_package_names=["pypi:colourama"], trusted_sources=["brew:homebrew/*", "brew:kubetools/*"]
    )
    assert _decision(tuned, "pip install colourama") == "allow"
    assert _decision(tuned, "pip install reqeusts") == "ask"
    assert _decision(tuned, "brew install kubetools/tap/kubectl-fast") == "allow"
    assert _decision(tuned, "brew tap hashicorp/tap") == "ask"


def test_named_sources_and_added_repositories_are_read() -> None:
    def targets(line: str) -> list[tuple[str, str]]:
        return [(e["kind"], e["target"]) for e in shell_acts(line)]

    assert targets("brew tap Someone/Tools") == [("source", "brew:someone/tools")]
    assert targets("brew install someone/tools/thing") == [("source", "brew:someone/tools")]
    assert targets("mamba install -c SomeUser tool") == [("source", "conda:someuser")]
    assert targets("conda create -n x --channel=https://x.example/ch y") == [
        ("registry", "https://x.example/ch")
    ]
    assert targets("sudo add-apt-repository -y ppa:someone/tools") == [("source", "ppa:someone/tools")]
    assert targets('add-apt-repository "deb https://x.example/apt stable main"') == [
        ("registry", "https://x.example/apt")
    ]
    assert targets("dnf config-manager --add-repo https://x.example/x.repo") == [
        ("registry", "https://x.example/x.repo")
    ]
    assert targets("flatpak remote-add r https://x.example/r.flatpakrepo") == [
        ("registry", "https://x.example/r.flatpakrepo")
    ]
    assert targets("snap install --dangerous ./tool.snap") == [("tls-off", "--dangerous")]
    for line in (
        "brew install jq ripgrep",
        "brew install --cask firefox",
        "conda list",
        "dnf install -y git",
    ):
        assert targets(line) == [], line


def test_the_list_is_parsed_on_the_first_install_not_at_policy_load() -> None:
    lookalikes._lists.cache_clear()
    policy = _policy()
    assert lookalikes._lists.cache_info().currsize == 0
    _decision(policy, "ls -la && git status")
    assert lookalikes._lists.cache_info().currsize == 0
    _decision(policy, "pip install some-new-package-name")
    assert lookalikes._lists.cache_info().currsize == 1


def test_the_list_snapshot_is_part_of_the_policy_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_policy.policy import compile as compile_module
    from dsh_policy.policy.loading import build_policy

    first = build_policy([EFFECTS], engine="python")
    monkeypatch.setattr(compile_module, "popular_packages_snapshot", lambda: "other@2099-01-01")
    refreshed = build_policy([EFFECTS], engine="python")
    assert not isinstance(first, LoadFailure) and not isinstance(refreshed, LoadFailure)
    assert first.digest != refreshed.digest


def _update_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "update_popular_packages", ROOT / "tools" / "update_popular_packages.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_update_script_reads_both_sources_in_rank_order(tmp_path: Path) -> None:
    rows = [{"download_count": 3000 - i, "project": f"Proj_{i}"} for i in range(1200)]
    pypi = tmp_path / "top.json"
    pypi.write_text(json.dumps({"last_update": "2026-04-01 06:34:06", "rows": rows[::-1]}))
    lib = tmp_path / "npm" / "lib"
    lib.mkdir(parents=True)
    (lib / "top-download.js").write_text(
        "export const topDownload = [\n" + ",\n".join(f"  'pkg-{i}'" for i in range(1100)) + "\n]\n"
    )
    (lib / "top-dependent.js").write_text("export const topDependent = [\n  'pkg-3',\n  '@s/x'\n]\n")
    out = tmp_path / "popular.json"
    assert (
        _update_script().main(["--pypi", str(pypi), "--npm", str(tmp_path / "npm"), "--out", str(out)]) == 0
    )
    lines = out.read_text().splitlines()
    header, lists = json.loads(lines[0]), {d["ecosystem"]: d["names"] for d in map(json.loads, lines[1:])}
    assert header["snapshot"] == "2026-04-01"
    assert lists["pypi"][:2] == ["proj-0", "proj-1"] and len(lists["pypi"]) == 1200
    assert lists["npm"][:2] == ["pkg-0", "pkg-1"] and lists["npm"][-1] == "@s/x" and len(lists["npm"]) == 1101
    readme = tmp_path / "README.md"
    links = [f"- [m{i}](https://github.com/Owner{i % 300}/Mod-{i}) - a module." for i in range(600)]
    readme.write_text("\n".join(["# Awesome Go", *links, "[again](https://github.com/owner0/mod-0.git)"]))
    argv = ["--pypi", str(pypi), "--npm", str(tmp_path / "npm"), "--go", str(readme), "--out", str(out)]
    assert _update_script().main(argv) == 0
    lines = out.read_text().splitlines()
    go = {d["ecosystem"]: d["names"] for d in map(json.loads, lines[1:])}["go"]
    assert go[:2] == ["github.com/owner0/mod-0", "github.com/owner1/mod-1"] and len(go) == 600
    assert "avelino/awesome-go" in json.loads(lines[0])["source"]
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"rows": []}))
    assert (
        _update_script().main(["--pypi", str(empty), "--npm", str(tmp_path / "npm"), "--out", str(out)]) == 1
    )
