"""What an approval is bound to: one exact call under one policy, asked by one set of rules.

An approval must not travel: approving ``git push origin feature`` may not approve ``git push
--force origin main``, nor the same command in another session, nor the same command after the
policy that asked was replaced. So a request carries a :class:`CallBinding` and its digest covers
all of it (harness, session, agent, tool, canonical arguments, the policy digest, the asking
rules); a later call is the approved one only if its own binding has the same digest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from dsh_policy.audit.record import canonical_bytes
from dsh_policy.core.frozen import thaw
from dsh_policy.policy.runtime.auditing import canonical_domain

BINDING_TAG: Final[bytes] = b"dsh-policy/approval/binding/v1\x00"

#: The field a grant's argument pattern is matched against, per canonical tool (HOOKS.md section 3);
#: other tools are matched against their arguments as compact sorted JSON.
SUBJECT_FIELDS: Final[Mapping[str, str]] = {
    "shell": "command",
    "read_file": "path",
    "write_file": "path",
    "edit_file": "path",
    "list_dir": "path",
    "web_fetch": "url",
    "http_request": "url",
}


@dataclass(frozen=True, slots=True)
class CallBinding:
    """The exact call an approval is for. ``args`` are the canonical arguments (after the
    harness's spelling was mapped onto the canonical tools), as the policy saw them."""

    harness: str
    session: str
    agent: str | None
    tool: str
    args: Any
    policy_digest: str
    rules: tuple[str, ...]

    def document(self) -> dict[str, Any]:
        """The binding as JSON (what the queue stores and the digest covers)."""
        return {
            "harness": self.harness,
            "session": self.session,
            "agent": self.agent,
            "tool": self.tool,
            "args": canonical_domain(thaw(self.args)),
            "policy_digest": self.policy_digest,
            "rules": sorted(self.rules),
        }

    def digest(self) -> str:
        """``sha256:`` over the domain tag and the canonical (RFC 8785) form of :meth:`document`."""
        return "sha256:" + hashlib.sha256(BINDING_TAG + canonical_bytes(self.document())).hexdigest()

    def subject(self) -> str:
        """The text a grant's ``match`` pattern is tested against (the command, path or URL)."""
        return call_subject(self.tool, self.document()["args"])

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> CallBinding:
        """The binding a stored request holds (its digest is recomputed, never trusted)."""
        return cls(
            harness=str(document["harness"]),
            session=str(document["session"]),
            agent=None if document.get("agent") is None else str(document["agent"]),
            tool=str(document["tool"]),
            args=document["args"],
            policy_digest=str(document["policy_digest"]),
            rules=tuple(str(rule) for rule in document["rules"]),
        )


def call_subject(tool: str, args: Any) -> str:
    """The command, path or URL of a call, or its arguments as compact sorted JSON."""
    field = SUBJECT_FIELDS.get(tool)
    if field is not None and isinstance(args, Mapping) and isinstance(args.get(field), str):
        return str(args[field])
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
