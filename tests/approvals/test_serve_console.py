"""``dsh-policy serve --approvals-console``: the resident gateway serves the console beside it,
on loopback, and stops it when it stops. Starting a gateway compiles its packs (seconds of CPU),
so this runs with the browser test: DSH_TEST_BROWSER=1."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from approval_kit import Deployment

pytestmark = pytest.mark.skipif(
    os.environ.get("DSH_TEST_BROWSER") != "1",
    reason="starts a resident gateway; opt in with DSH_TEST_BROWSER=1",
)

PACK = Path(__file__).parents[1] / "hooks" / "packs" / "hook-guard.yaml"


def test_serve_runs_the_console_beside_the_gateway(deployment: Deployment, tmp_path: Path) -> None:
    config = tmp_path / "gateway.yaml"
    config.write_text(
        f"apiVersion: dsh-policy/v1\nkind: Gateway\nspec:\n  packs: [{PACK}]\n"
        "  approvals: {folder: queue, approvers: approvers.yaml}\n"
    )
    command = [sys.executable, "-m", "dsh_policy.policy.cli", "serve", "--config", str(config)]
    command += ["--approvals-console", "127.0.0.1:0", "--as", "alice", "--key", str(tmp_path / "alice.key")]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert server.stdout is not None
        link = None
        for line in server.stdout:
            found = re.search(
                r"approvals console for alice: (http://127\.0\.0\.1:\d+/login\?token=\S+)", line
            )
            if found:
                link = found.group(1)
                break
        assert link is not None
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with browser.open(link, timeout=10) as page:  # signs in, redirected to the queue
            assert "Signed in as <b>alice</b>" in page.read().decode()
    finally:
        os.kill(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
