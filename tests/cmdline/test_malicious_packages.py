"""Known-malicious packages: the install readers, the dependency-file reader, the shipped snapshot
and the script that rebuilds it from OSV records (run here on records written by the test, in the
feed's own layouts: a folder tree and a zip export)."""

from __future__ import annotations

import importlib.util
import json
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from dsh_policy.cmdline.effects import shell_acts
from dsh_policy.cmdline.effects.later import later_class, later_risks
from dsh_policy.cmdline.effects.packages import DATA, _header, _load, malicious, manifest_hits, snapshot

ROOT = Path(__file__).resolve().parents[2]


def _update_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "update_malicious_packages", ROOT / "tools" / "update_malicious_packages.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def kinds(line: str) -> list[str]:
    return [e["kind"] for e in shell_acts(line)]


@pytest.mark.parametrize(
    "line",
    [
        "npm install nx@21.7.0",
        "npm i -D nx@20.12.0",
        "pnpm add chalk@5.6.1",
        "yarn add debug@4.4.2",
        "bun add eslint-config-prettier@10.1.6",
        "npm install --save @ctrl/tinycolor@4.1.2",
        "npx nx@21.5.0 graph",
        "pnpm dlx nx@21.6.0 init",
        "pip install 0requests==0.0.1",
        "python3 -m pip install 0requests==0.0.1",
        "uv pip install 3web-py==1.0.0",
        "pip3 install 3web-py",
        "poetry add 3web-py",
        "gem install 3scale-client -v 2.11.0",
        "cargo add replit_ruspty@1.0.0",
        "cargo install replit_ruspty --version 1.0.0",
        "go get github.com/boltdb-go/bolt@latest",
        "sudo npm install -g nx@21.8.0",
        "uv tool install 3web-py",
        "pipx run 3web-py",
        "go install github.com/boltdb-go/bolt/cmd/bolt@latest",
        # poetry's and pdm's name@version
        "poetry add 0requests@0.0.1",
        "pdm add 3web-py@==1.0.0",
        # malicious releases reported by the general databases (PyPA, RustSec, RubySec)
        "pip install deep-translator==1.8.5",
        "cargo install evm-units",
        "gem install strong_password --version 0.0.7",
        "gem install rest-client:1.6.11",
        # compromised releases of popular packages (GitHub-reviewed CWE-506 advisories, the feed's
        # MAL records of the September 2025 npm hijack, maintainers' and registries' notices)
        "npm install ua-parser-js@0.7.29",
        "npm i --save-exact coa@2.0.3",
        "npm install rc@1.2.9",
        "yarn add event-stream@3.3.6",
        "pnpm add node-ipc@10.1.2",
        "npm install node-ipc@12.0.1",
        "npm install ngx-bootstrap@20.0.5",
        "bun add @duckdb/node-api@1.3.3",
        "npm install eslint-scope@3.7.2",
        "npm i -D @rspack/core@1.1.7",
        "npm install strip-ansi@7.1.1",
        "pnpm add is@3.3.1",
        "npm install is@5.0.0",
        "pip install ultralytics==8.3.41",
        "cargo add faster_log",
    ],
)
def test_installs_of_listed_versions_are_malicious(line: str) -> None:
    assert kinds(line) == ["malicious-package"], line


@pytest.mark.parametrize(
    "line",
    [
        "npm install chalk@5.6.2",
        "npm install debug",
        "npm install nx@21.4.1",
        "npm install @ctrl/tinycolor@4.1.0",
        "npm install @ctrl/tinycolor@4.1.3",
        "pip install requests==2.32.3",
        "pip install -r requirements.txt",
        "go get github.com/boltdb/bolt@v1.3.1",
        "gem install 3scale-client -v 2.10.0",
        "npx prettier --write .",
        "npm ls nx",
        "poetry add 0requests@^0.0.1",
        "poetry add deep-translator@1.8.4",
        "pip install 'deep-translator @ https://example.org/deep_translator-1.8.5.tar.gz'",
        "gem install rest-client -v 1.6.9",
        "gem install rest-client -v 1.6.14",
        "gem install rest-client",
        "npm install ua-parser-js@0.7.30",
        "pnpm add node-ipc@10.1.3",
        "pip install ultralytics==8.3.43",
        "npm install strip-ansi@7.1.0",
        "npm install is@3.3.2",
    ],
)
def test_clean_versions_and_other_commands_are_not(line: str) -> None:
    assert "malicious-package" not in kinds(line), line


def test_the_verdict_names_the_advisory() -> None:
    (effect,) = shell_acts("npm install nx@21.7.0")
    assert "MAL-2025-41443" in effect["what"] and effect["target"] == "npm:nx@21.7.0"


def test_a_version_is_cited_under_the_advisory_that_lists_it() -> None:
    assert malicious("npm", "node-ipc", "10.1.2") == "GHSA-97m3-w2cp-4xx6"  # a range of one advisory
    assert malicious("npm", "node-ipc", "12.0.1") == "MAL-2026-3744"  # a version of another
    assert malicious("npm", "node-ipc", "10.1.3") == ""


def test_the_update_script_keeps_each_advisory_of_a_package(tmp_path: Path) -> None:
    def record(ident: str, affected: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": ident,
            "modified": "2026-01-01",
            "affected": [{"package": {"ecosystem": "npm", "name": "p"}, **affected}],
        }

    from dsh_policy.cmdline.effects import malicious_refresh as script

    into: dict[str, dict[str, Any]] = {}
    script.merge(into, record("MAL-2026-2", {"versions": ["2.0.0"]}))
    script.merge(
        into,
        record(
            "MAL-2026-1",
            {
                "versions": ["1.0.0"],
                "ranges": [{"type": "SEMVER", "events": [{"introduced": "3.0.0"}, {"fixed": "3.1.0"}]}],
            },
        ),
    )
    compact = script._compact(into["npm"]["p"])
    assert compact["id"] == "MAL-2026-1" and compact["advisories"] == {"2.0.0": "MAL-2026-2"}
    assert compact["ranges"] == [{"introduced": "3.0.0", "fixed": "3.1.0"}]


def test_pypi_names_compare_normalized() -> None:
    assert malicious("pypi", "3WEB_py", "1.0.0") == "MAL-2024-9934"


def test_dependency_files_pinning_a_listed_version_carry_the_signal() -> None:
    assert later_class("requirements-dev.txt") == "dependency-list"
    assert later_risks("requirements.txt", "flask==3.0.0\n0requests==0.0.1\n") == ["known-malicious"]
    assert later_risks("web/package.json", '{"dependencies": {"nx": "^21.7.0"}}') == ["known-malicious"]
    assert manifest_hits("go.mod", "require github.com/boltdb-go/bolt v1.3.1\n")
    assert later_risks("package.json", '{"dependencies": {"nx": "21.9.0"}}') == []
    assert later_risks("Cargo.toml", '[dependencies]\nserde = "1.0"\n') == []


def test_the_shipped_snapshot_is_dated_and_sourced() -> None:
    header = json.loads(DATA.read_text(encoding="utf-8").partition("\n")[0])
    assert header["format"] == 2 and header["snapshot"] and "malicious-packages" in header["source"]
    assert snapshot().endswith("@" + header["snapshot"])
    data = _load(DATA)
    advisory = ("MAL-", "PYSEC-", "RUSTSEC-", "GHSA-", "CVE-", "DSHP-")
    for names in data["packages"].values():
        for entry in names.values():
            if isinstance(entry, str):
                assert entry.startswith(advisory)
            else:
                assert entry["id"].startswith(advisory) and (entry.get("versions") or entry.get("ranges"))


SUPPLEMENT = ROOT / "tools" / "osv-supplement"


def test_every_supplement_record_is_in_the_snapshot_and_names_its_source() -> None:
    """Each record read one by one (tools/osv-supplement) says where it was read, and the shipped
    snapshot was rebuilt after it was added: every version it lists is refused."""
    ecosystems = _update_script().ECOSYSTEMS
    records = sorted(SUPPLEMENT.glob("*.json"))
    assert len(records) >= 20
    for path in records:
        record = json.loads(path.read_text(encoding="utf-8"))
        assert record["id"] == path.stem and record["database_specific"]["dsh-policy"], path
        for affected in record["affected"]:
            ecosystem, name = ecosystems[affected["package"]["ecosystem"]], affected["package"]["name"]
            versions = affected.get("versions") or [
                e["introduced"] for r in affected.get("ranges", ()) for e in r["events"] if "introduced" in e
            ]
            for version in versions:
                listed = malicious(ecosystem, name, None if version == "0" else version)
                assert listed, (path.name, name, version)


def test_the_shipped_snapshot_is_the_feed_not_a_seed() -> None:
    """Tens of thousands of npm and PyPI names from the feed, in a file small enough to ship."""
    packages = _load(DATA)["packages"]
    assert len(packages["npm"]) > 10_000 and len(packages["pypi"]) > 5_000
    assert DATA.stat().st_size < 2_000_000


def _record(ident: str, ecosystem: str, name: str, **affected: Any) -> dict[str, Any]:
    return {
        "id": ident,
        "modified": "2026-11-30T10:00:00Z",
        "affected": [{"package": {"ecosystem": ecosystem, "name": name}, **affected}],
    }


RECORDS = [
    _record("MAL-2099-1", "npm", "left-padd", versions=["1.0.0", "1.0.1"]),
    _record(
        "MAL-2099-2",
        "npm",
        "@acme/colors",
        ranges=[
            {"type": "SEMVER", "events": [{"introduced": "0"}]},
            {"type": "SEMVER", "events": [{"introduced": "2.1.0"}, {"last_affected": "2.1.2"}]},
        ],
    ),
    _record(
        "MAL-2099-3",
        "PyPI",
        "Reqeusts_Toolbelt",
        ranges=[{"type": "ECOSYSTEM", "events": [{"introduced": "0"}]}],
    ),
    _record("MAL-2099-4", "Maven", "org.example:x", versions=["1"]),
    _record("GHSA-xxxx-yyyy-zzzz", "npm", "not-malware", versions=["1.0.0"]),
    {
        **_record("MAL-2099-5", "npm", "withdrawn-one", versions=["1.0.0"]),
        "withdrawn": "2026-01-01T00:00:00Z",
    },
    {
        **_record("MAL-2099-6", "PyPI", "typo-only", versions=["0.1"]),
        "database_specific": {
            "malicious-packages-origins": [
                {"source": "kam193", "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}]}]}
            ]
        },
    },
]


def _read(path: Path) -> dict[str, Any]:
    _load.cache_clear()
    try:
        return _load(path)
    finally:
        _load.cache_clear()


def _check(data: dict[str, Any]) -> None:
    npm, pypi = data["packages"]["npm"], data["packages"]["pypi"]
    assert data["format"] == 2
    assert npm["left-padd"] == {"id": "MAL-2099-1", "versions": ["1.0.0", "1.0.1"]}
    assert npm["@acme/colors"] == {
        "id": "MAL-2099-2",
        "ranges": [{"introduced": "2.1.0", "last_affected": "2.1.2"}],
    }
    assert pypi["reqeusts-toolbelt"] == "MAL-2099-3"
    assert pypi["typo-only"] == "MAL-2099-6"
    assert "not-malware" not in npm and "withdrawn-one" not in npm and "maven" not in data["packages"]
    assert data["snapshot"] == "2026-11-30"


def test_the_update_script_reads_a_checkout_of_the_feed(tmp_path: Path) -> None:
    script = _update_script()
    for record in RECORDS:
        name = record["affected"][0]["package"]["name"]
        folder = tmp_path / "osv" / "malicious" / record["affected"][0]["package"]["ecosystem"] / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{record['id']}.json").write_text(json.dumps(record), encoding="utf-8")
    out = tmp_path / "list.json"
    (tmp_path / "osv" / "malicious" / "npm" / "x.json").mkdir()  # the feed has such folders
    assert script.main([str(tmp_path / "osv"), "--out", str(out), "--note", "a test checkout"]) == 0
    data = _read(out)
    assert data["scope"].startswith("a test checkout; osv (5 records")
    _check(data)


def test_the_update_script_reads_a_zip_export_and_refuses_an_empty_one(tmp_path: Path) -> None:
    script = _update_script()
    archive = tmp_path / "all.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for record in RECORDS:
            zipped.writestr(f"{record['id']}.json", json.dumps(record))
    out = tmp_path / "list.json"
    assert script.main([str(archive), "--out", str(out), "--date", "2026-12-01"]) == 0
    data = _read(out)
    assert data["snapshot"] == "2026-12-01"
    data["snapshot"] = "2026-11-30"
    _check(data)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert script.main([str(empty), "--out", str(out)]) == 1
    assert script.main([str(tmp_path / "missing"), "--out", str(out)]) == 2


def test_a_pretty_printed_format_1_snapshot_is_still_read(tmp_path: Path) -> None:
    """The first line of a format 1 file is no JSON on its own; the reader and the digest's header
    fall back to the whole document (a stripped or operator-supplied older file)."""
    packages = {"npm": {"left-padd": "MAL-1"}}
    old = {"format": 1, "source": "osv", "snapshot": "2025-01-01", "packages": packages}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old, indent=2), encoding="utf-8")
    assert _read(path)["packages"] == packages
    _header.cache_clear()
    try:
        assert _header(path) == {"format": 1, "source": "osv", "snapshot": "2025-01-01"}
    finally:
        _header.cache_clear()
        _load.cache_clear()


GENERAL_RECORDS: dict[str, str] = {
    # GitHub's advisories mark embedded malicious code with CWE-506
    "ghsa/GHSA-aaaa.json": json.dumps(
        {
            **_record("GHSA-aaaa-bbbb-cccc", "npm", "hijacked-lib", versions=["2.0.1"]),
            "database_specific": {"cwe_ids": ["CWE-506"]},
        }
    ),
    "ghsa/GHSA-dddd.json": json.dumps(
        {
            **_record("GHSA-dddd-eeee-ffff", "npm", "ordinary-bug", versions=["1.0.0"]),
            "database_specific": {"cwe_ids": ["CWE-79"]},
            "summary": "A malicious user can inject script into the page",
        }
    ),
    # RustSec's osv branch: the malicious category, every version (introduced 0.0.0-0)
    "rustsec/crates/RUSTSEC-2099-0001.json": json.dumps(
        {
            "id": "RUSTSEC-2099-0001",
            "modified": "2026-01-02T00:00:00Z",
            "affected": [
                {
                    "package": {"ecosystem": "crates.io", "name": "evil_logger"},
                    "database_specific": {"categories": ["malicious"]},
                    "ranges": [{"type": "SEMVER", "events": [{"introduced": "0.0.0-0"}]}],
                }
            ],
        }
    ),
    # PyPA's advisory-database: OSV in YAML; a takeover is kept, an input bug is not
    "pypa/vulns/taken/PYSEC-2099-1.yaml": (
        "id: PYSEC-2099-1\nmodified: '2025-03-01T00:00:00Z'\n"
        "details: The taken project on PyPI was taken over via a phished account and replaced\n"
        "  with a malicious release.\naffected:\n- package: {name: taken, ecosystem: PyPI}\n"
        "  versions: ['1.4.0']\n"
    ),
    "pypa/vulns/parser/PYSEC-2099-2.yaml": (
        "id: PYSEC-2099-2\nmodified: '2025-03-01T00:00:00Z'\n"
        "details: Malicious input makes the parser run code.\naffected:\n"
        "- package: {name: parser, ecosystem: PyPI}\n  versions: ['0.9']\n"
    ),
    # RubySec: its own YAML; the versions no bound excludes form one range
    "rubysec/gems/nice-gem/CVE-2099-1.yml": (
        "gem: nice-gem\ncve: 2099-1\ndate: 2025-02-01\ntitle: Code execution backdoor in nice-gem\n"
        "unaffected_versions:\n  - '<= 1.2.3'\npatched_versions:\n  - '>= 1.3.0'\n"
    ),
    "rubysec/gems/web-gem/CVE-2099-2.yml": (
        "gem: web-gem\ncve: 2099-2\ndate: 2025-02-01\ntitle: XSS lets a malicious user run script\n"
        "description: |\n  Crafted input may hide malicious code that runs in the browser.\n"
        "patched_versions:\n  - '>= 2.0.0'\n"
    ),
}


def test_the_update_script_keeps_malicious_releases_of_the_general_databases(tmp_path: Path) -> None:
    """A compromised release is often an ordinary advisory (GHSA, PYSEC, RUSTSEC, RubySec CVE):
    kept when it marks the release itself as malicious, dropped when it is a vulnerability."""
    script = _update_script()
    for relative, text in GENERAL_RECORDS.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    out = tmp_path / "list.json"
    sources = [str(tmp_path / name) for name in ("ghsa", "rustsec", "pypa", "rubysec")]
    assert script.main([*sources, "--out", str(out)]) == 0
    packages = _read(out)["packages"]
    assert packages["npm"] == {"hijacked-lib": {"id": "GHSA-aaaa-bbbb-cccc", "versions": ["2.0.1"]}}
    assert packages["crates"] == {"evil_logger": "RUSTSEC-2099-0001"}
    assert packages["pypi"] == {"taken": {"id": "PYSEC-2099-1", "versions": ["1.4.0"]}}
    gem = packages["rubygems"]
    assert gem == {"nice-gem": {"id": "CVE-2099-1", "ranges": [{"after": "1.2.3", "fixed": "1.3.0"}]}}


def test_an_exclusive_lower_bound_is_read() -> None:
    """``after`` (a RubySec ``<= X`` unaffected bound) excludes X itself."""
    from dsh_policy.cmdline.effects.packages import _in_range

    span = {"after": "1.2.3", "fixed": "1.3.0"}
    assert not _in_range("1.2.3", span) and _in_range("1.2.4", span) and not _in_range("1.3.0", span)
