"""Policy changes between hook processes: each hook run loads the packs afresh, so "a reload" is a
hook whose policy differs from the one the last hook recorded.

The summary of the last policy recorded in a log is kept beside it, in ``LOG.policy`` (one of the
log's own files: self-protection denies the agent every ``LOG*`` file). A hook whose policy digest
differs from it records a ``policy_loaded`` record with the summary and the changes, weakening
marked, and updates the file. With ``reload: {refuse_weakening: true}`` in the deployment file a
weakening change is refused instead: a hook process has no earlier policy in memory to keep
deciding with, so it fails closed (every call refused, each refusal recorded as
``policy_reload_refused``) until an operator accepts the change by removing ``LOG.policy``.

The file is a convenience, not the record: ``dsh-policy policy-log`` recomputes every change from
the summaries inside the verified log itself.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_policy.policy.runtime.policy_changes import PolicyChanges, diff_summaries, policy_summary

STATE_SUFFIX = ".policy"


@dataclass(frozen=True, slots=True)
class PolicyTransition:
    """How the policy of this hook run relates to the last one recorded in the log."""

    summary: dict[str, Any]
    changes: PolicyChanges
    changed: bool  # differs from the recorded one (or nothing was recorded yet)
    first: bool  # nothing was recorded yet

    def refused(self, refuse_weakening: bool) -> bool:
        return refuse_weakening and self.changed and not self.first and self.changes.weakening


def state_path(log: str | os.PathLike[str]) -> Path:
    return Path(str(log) + STATE_SUFFIX)


def transition(log: str | os.PathLike[str], compiled: Any) -> PolicyTransition:
    """Compare ``compiled`` with the policy last recorded in ``log``'s state file."""
    summary = policy_summary(compiled)
    recorded = _read(state_path(log))
    if recorded is None:
        return PolicyTransition(summary, PolicyChanges(), True, True)
    if recorded.get("digest") == summary["digest"]:
        return PolicyTransition(summary, PolicyChanges(), False, False)
    return PolicyTransition(summary, diff_summaries(recorded, summary), True, False)


def remember(log: str | os.PathLike[str], summary: dict[str, Any]) -> None:
    """Make ``summary`` the last recorded policy (atomically: write aside, then rename)."""
    path = state_path(log)
    handle, temporary = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(summary, out, sort_keys=True)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _read(path: Path) -> dict[str, Any] | None:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None
