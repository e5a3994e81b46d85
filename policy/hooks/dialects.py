"""The hook dialects by harness name: the one table both the in-process hook
(:mod:`dsh_policy.policy.hooks.in_process.adapter`) and the resident gateway
(:mod:`.gateway.service`) answer through, so a harness added to one is spoken by the other."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from dsh_policy.policy.hooks.claude_code.dialect import ClaudeCodeDialect
from dsh_policy.policy.hooks.codex.dialect import CodexDialect
from dsh_policy.policy.hooks.protocol.messages import HookDialect

DIALECTS: Final[Mapping[str, HookDialect]] = {"claude-code": ClaudeCodeDialect(), "codex": CodexDialect()}
