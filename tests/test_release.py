"""The release a team installs: the wheel ``python -m build`` makes, installed into a fresh virtual
environment and run as an installed command (never the editable checkout).

Cost: the wheel is built without build isolation (the test environment's setuptools, no download)
and installed with ``--no-deps``; the fresh environment reaches its dependencies through a path
entry to this environment's site-packages, whose ``.pth`` files (the editable install's finder
among them) are not processed, so ``dsh_policy`` can only come from the wheel. One module (one
xdist worker under ``--dist loadfile``); about 20 s of wall time on a loaded 2-core machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(argv: list[str], cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, env=env, **kwargs)  # type: ignore[call-overload]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the built wheel installed; its bin/ folder."""
    work = tmp_path_factory.mktemp("release")
    built = _run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(work / "dist"), str(ROOT)], work
    )
    assert built.returncode == 0, built.stderr[-2000:]
    wheels = sorted((work / "dist").glob("dsh_policy-*-py3-none-any.whl"))
    assert len(wheels) == 1 and sorted((work / "dist").glob("dsh_policy-*.tar.gz")), list(
        (work / "dist").iterdir()
    )
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert any(name.endswith("dist-info/licenses/LICENSE") or name.endswith("/LICENSE") for name in names)
    assert "dsh_policy/rules/baseline.yaml" in names
    venv = work / "venv"
    assert _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], work).returncode == 0
    python = venv / "bin" / "python"
    site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work)
    Path(site.stdout.strip(), "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheels[0])],
        work,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return venv / "bin"


def test_the_installed_wheel_runs_the_demo_verify_and_a_hook(installed: Path, tmp_path: Path) -> None:
    program = str(installed / "dsh-policy")
    where = _run([str(installed / "python"), "-c", "import dsh_policy; print(dsh_policy.__file__)"], tmp_path)
    assert str(installed.parent) in where.stdout, where  # the wheel's copy, not the checkout
    version = _run([program, "--version"], tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("dsh-policy 0."), version
    # The demo, from a folder that is not the checkout: examples are not in the wheel, so name them.
    demo = _run(
        [
            program,
            "run",
            str(ROOT / "examples/sessions/demo.yaml"),
            "--config",
            str(ROOT / "examples/gateway.yaml"),
            "--audit",
            "demo-audit.jsonl",
        ],
        tmp_path,
    )
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert "INTACT" in demo.stdout
    verify = _run([program, "verify", "demo-audit.jsonl"], tmp_path)
    assert verify.returncode == 0 and "INTACT" in verify.stdout, verify
    # A Claude Code hook event through the installed command, with the shipped packs of the wheel.
    event = json.loads((ROOT / "examples/hooks/pre-tool-use.json").read_text())
    hook = _run(
        [program, "hook", "claude-code", "--pack", str(installed.parent / "lib"), "--in-process"],
        tmp_path,
        input=json.dumps(event),
    )
    assert hook.returncode == 2  # a folder is not a pack: refused, closed
    packs = _run(
        [
            str(installed / "python"),
            "-c",
            "import dsh_policy.rules as r, os; print(os.path.dirname(r.__file__))",
        ],
        tmp_path,
    ).stdout.strip()
    hook = _run(
        [program, "hook", "claude-code", "--pack", f"{packs}/baseline.yaml", "--audit", "hooks.jsonl"],
        tmp_path,
        input=json.dumps(event),
    )
    assert hook.returncode == 2 and "[policy: baseline/deny-credential-file-reads]" in hook.stderr, hook
    assert _run([program, "verify", "hooks.jsonl"], tmp_path).returncode == 0
