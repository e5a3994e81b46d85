"""The hook dialects by harness name: the one table both the in-process hook
(:mod:`dsh_policy.policy.cli.hook`) and the resident gateway (:mod:`.service`) answer through,
so a harness added to one is spoken by the other."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from dsh_policy.policy.hooks.claude_code import ClaudeCodeDialect
from dsh_policy.policy.hooks.codex import CodexDialect
from dsh_policy.policy.hooks.protocol import HookDialect

DIALECTS: Final[Mapping[str, HookDialect]] = {"claude-code": ClaudeCodeDialect(), "codex": CodexDialect()}
