"""The gateway inside the agent frameworks teams build with: one adapter module per framework.

Every adapter maps its framework's tool call onto the same decision API and audit records as the
harness plugins, through :class:`~.gate.ToolGate` (pre-execute and guards before the tool runs,
post-execute on its result, ``ask`` onto the framework's own approval mechanism, or with
``approver=`` onto the deployment's approval queue for headless runs, one compiled policy per
call, fail closed, the framework named in every record). The framework modules import
their framework when they are imported, never before, so this package needs none of them:

| module                | framework (extra)                             | entry point                 |
|-----------------------|-----------------------------------------------|-----------------------------|
| ``langgraph``         | LangChain v1 / LangGraph (``langgraph``)      | ``PolicyMiddleware``        |
| ``openai_agents``     | OpenAI Agents SDK (``openai-agents``)         | ``PolicyGuardrails``        |
| ``pydantic_ai``       | PydanticAI (``pydantic-ai``)                  | ``PolicyCapability``        |
| ``adk``               | Google ADK (``adk``)                          | ``PolicyPlugin``            |

The Claude Agent SDK answers Claude Code's own hooks, so its adapter is the Claude Code hook run in
process: ``policy.hooks.in_process.agent_sdk.PolicyHooks``. The user's guide is
``docs/frameworks.md``.
"""

from __future__ import annotations

from dsh_policy.policy.adapters.gate import Answer, GatedCall, Shown, ToolGate
from dsh_policy.policy.adapters.support import MissingFrameworkError

__all__ = ["Answer", "GatedCall", "MissingFrameworkError", "Shown", "ToolGate"]
