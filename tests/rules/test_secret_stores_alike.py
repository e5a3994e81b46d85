"""A secret store is refused alike whichever tool reaches it.

The shell reader names browser, keychain and privacy stores as ``secret-store`` effects
(``cmdline/effects/host.py``); the file tools are judged by the baseline's ``cred_re``. The two
are written apart, so this test holds them together: one path per kind of store the shell reader
knows must be both a ``secret-store`` effect of ``cat PATH`` and a denied ``read_file`` (the
file-tool gaps probe7 found, TCC.db and Kerberos caches, were exactly such a drift).
"""

from __future__ import annotations

import shlex
from functools import cache
from pathlib import Path

import pytest
from dsh_policy.cmdline.effects.acts import shell_acts
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure

RULES_DIR = Path(__file__).resolve().parents[2] / "rules"
PACKS = sorted(p for p in RULES_DIR.glob("*.yaml") if not p.name.endswith(".cases.yaml"))

#: One path per alternative of the shell reader's store pattern.
STORES = (
    "/home/dev/.config/google-chrome/Default/Cookies",
    "/home/dev/.config/chromium/Default/Login Data",
    "/Users/dev/Library/Application Support/Google/Chrome/Default/Web Data",
    "/home/dev/.mozilla/firefox/x.default/cookies.sqlite",
    "/home/dev/.mozilla/firefox/x.default/logins.json",
    "/home/dev/.mozilla/firefox/x.default/key4.db",
    "/Users/dev/Library/Cookies/Cookies.binarycookies",
    "/Users/dev/Library/Keychains/login.keychain-db",
    "/home/dev/.local/share/keyrings/login.keyring",
    "/home/dev/.local/share/kwalletd/kdewallet.kwl",
    "/Library/Application Support/com.apple.TCC/TCC.db",
    "/Users/dev/Library/Application Support/com.apple.TCC/TCC.db",
    "/home/dev/.config/gh/hosts.yml",
    "/home/dev/.config/op/config",
    "/home/dev/.config/Bitwarden/data.json",
    "/home/dev/passwords.kdbx",
    "/tmp/krb5cc_1000",
)


@cache
def _policy() -> Policy:
    policy = Policy.load([str(p) for p in PACKS])
    assert not isinstance(policy, LoadFailure), policy
    return policy


@pytest.mark.parametrize("path", STORES)
def test_a_store_the_shell_reader_names_is_refused_to_the_file_tools_too(path: str) -> None:
    kinds = {act["kind"] for act in shell_acts("cat " + shlex.quote(path))}
    assert "secret-store" in kinds or "keychain" in kinds, (path, kinds)
    verdict = _policy().check_tool_call(ToolCallEvent(tool="read_file", args={"path": path}, turn=1, step=1))
    assert verdict.decision == "deny", (path, verdict)
