"""The hook dialects by harness name: the one table both the in-process hook
(:mod:`dsh_policy.policy.hooks.in_process.adapter`) and the resident gateway
(:mod:`.gateway.service`) answer through, so a harness added to one is spoken by the other."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from dsh_policy.policy.hooks.claude_code.dialect import ClaudeCodeDialect
from dsh_policy.policy.hooks.codex.dialect import CodexDialect
from dsh_policy.policy.hooks.copilot_cli.dialect import CopilotCliDialect
from dsh_policy.policy.hooks.gemini_cli.dialect import GeminiCliDialect
from dsh_policy.policy.hooks.opencode.dialect import OpenCodeDialect
from dsh_policy.policy.hooks.protocol.messages import HookDialect, HookInput, HookInputError, parse_hook_input
from dsh_policy.policy.hooks.qwen_code.dialect import QwenCodeDialect

DIALECTS: Final[Mapping[str, HookDialect]] = {
    "claude-code": ClaudeCodeDialect(),
    "codex": CodexDialect(),
    "gemini-cli": GeminiCliDialect(),
    "qwen-code": QwenCodeDialect(),
    "opencode": OpenCodeDialect(),
    "copilot-cli": CopilotCliDialect(),
}


def parse_for(harness: str, raw: bytes) -> HookInput | HookInputError:
    """``parse_hook_input`` after the harness's own event names become ours (a dialect with a
    ``canonical_input`` method renames them; the others already speak our names)."""
    translate = getattr(DIALECTS.get(harness), "canonical_input", None)
    return parse_hook_input(translate(raw) if translate is not None else raw)
