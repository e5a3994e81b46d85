"""Approvers with real Ed25519 keys, a queue folder and a clock the test moves."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from dsh_policy.audit.keys import load_private_key, write_key_pair
from dsh_policy.policy.approvals import ApprovalQueue, ApprovalStore, CallBinding, load_approvers


@dataclass
class Clock:
    """Epoch seconds the test sets."""

    now: float = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Deployment:
    folder: Path
    approvers_file: Path
    keys: dict[str, Ed25519PrivateKey] = field(default_factory=dict)
    clock: Clock = field(default_factory=Clock)

    def queue(self) -> ApprovalQueue:
        """A fresh queue object over the same folder (as a restarted process would build)."""
        approvers = load_approvers(self.approvers_file)
        assert not isinstance(approvers, list), approvers
        return ApprovalQueue(ApprovalStore(self.folder / "queue"), approvers, clock=self.clock)


APPROVERS = """\
apiVersion: dsh-policy/v1
kind: Approvers
quorum: {quorum}
approvers:
  - name: alice
    public_key: alice.pub
    rules: ["*"]
  - name: bob
    public_key: bob.pub
    rules: ["net/*"]
"""


def make_deployment(root: Path, quorum: int = 1) -> Deployment:
    keys = {}
    for name in ("alice", "bob", "mallory"):
        files = write_key_pair(root / name)
        keys[name] = load_private_key(files.private_path)
    approvers_file = root / "approvers.yaml"
    approvers_file.write_text(APPROVERS.format(quorum=quorum))
    return Deployment(root, approvers_file, keys)


@pytest.fixture
def deployment(tmp_path: Path) -> Deployment:
    return make_deployment(tmp_path)


def binding(
    command: str = "git push origin feature",
    *,
    session: str = "s1",
    policy: str = "sha256:policy-a",
    rules: tuple[str, ...] = ("vcs/push-needs-approval",),
) -> CallBinding:
    return CallBinding(
        harness="claude-code",
        session=session,
        agent="main",
        tool="shell",
        args={"command": command},
        policy_digest=policy,
        rules=rules,
    )
