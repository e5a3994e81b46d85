"""``dsh-policy data``: showing the readers' data files and refreshing them from fetched sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dsh_policy.cmdline.effects import lookalikes, packages
from dsh_policy.policy.cli import main as cli_main


def test_show_names_each_file_with_its_sources_and_date(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["data", "show"]) == 0
    out = capsys.readouterr().out
    for path in (packages.DATA, lookalikes.DATA):
        header = json.loads(path.read_text(encoding="utf-8").partition("\n")[0])
        assert str(path) in out and header["snapshot"] in out and header["source"] in out


def test_refresh_malicious_writes_a_snapshot_from_osv_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = tmp_path / "osv" / "npm" / "left-pad-x"
    records.mkdir(parents=True)
    (records / "MAL-2099-1.json").write_text(
        json.dumps(
            {
                "id": "MAL-2099-1",
                "modified": "2099-01-02T00:00:00Z",
                "affected": [{"package": {"ecosystem": "npm", "name": "left-pad-x"}, "versions": ["1.0.0"]}],
            }
        )
    )
    out = tmp_path / "snapshot.json"
    assert cli_main(["data", "refresh-malicious", str(tmp_path / "osv"), "--out", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["snapshot"] == "2099-01-02"
    assert json.loads(lines[1]) == {
        "ecosystem": "npm",
        "packages": {"left-pad-x": {"id": "MAL-2099-1", "versions": ["1.0.0"]}},
    }
    assert cli_main(["data", "refresh-malicious", str(tmp_path / "missing"), "--out", str(out)]) == 2


def test_refresh_popular_writes_the_ranked_names(tmp_path: Path) -> None:
    rows = [{"download_count": 5000 - i, "project": f"p{i}"} for i in range(1500)]
    pypi = tmp_path / "top.json"
    pypi.write_text(json.dumps({"last_update": "2099-03-01 00:00:00", "rows": rows}))
    lib = tmp_path / "npm" / "lib"
    lib.mkdir(parents=True)
    (lib / "top-download.js").write_text(
        "export const topDownload = [" + ",".join(f"'n{i}'" for i in range(1500)) + "]\n"
    )
    (lib / "top-dependent.js").write_text("export const topDependent = []\n")
    out = tmp_path / "popular.json"
    argv = ["data", "refresh-popular", "--pypi", str(pypi), "--npm", str(tmp_path / "npm"), "--out", str(out)]
    assert cli_main(argv) == 0
    header = json.loads(out.read_text(encoding="utf-8").partition("\n")[0])
    assert header["snapshot"] == "2099-03-01" and "npm-high-impact (1500 names)" in header["scope"]


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["data"]) == 2
    assert cli_main(["data", "refresh-everything"]) == 2
    assert "unknown command" in capsys.readouterr().err
    assert cli_main(["data", "--help"]) == 0
