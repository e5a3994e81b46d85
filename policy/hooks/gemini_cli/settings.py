"""The ``.gemini/settings.json`` hooks of Gemini CLI, and of its fork Qwen Code (``.qwen/``).

Gemini CLI reads a hook's JSON stdout whatever its exit code, takes exit 1 as a warning (the call
runs) and a timeout or a hook that cannot start as no answer (the call runs too), so the command is
wrapped as the Claude Code one is (``trap ...; ... || exit 2``): a missing ``dsh-policy`` (127) or
an interpreter that dies before our code runs becomes a refusal, and the hook's own deadline
(``DSH_POLICY_HOOK_TIMEOUT``, below :data:`TIMEOUT_SECONDS`) answers before the client gives up.
The deployment path is absolute: Gemini CLI substitutes ``$GEMINI_PROJECT_DIR`` already quoted,
which cannot sit inside the quotes another path would need.
"""

from __future__ import annotations

import shlex
from typing import Any, Final

from dsh_policy.policy.hooks.install.settings_files import SHELL_TRAP

TIMEOUT_SECONDS: Final[int] = 30
#: (client, event, announce packs?, matcher) per wired event. Gemini CLI's ``AfterAgent`` is not
#: wired: Stop decides nothing, and its exit 2 would make the client retry the turn.
WIRED: Final[dict[str, tuple[tuple[str, bool, str | None], ...]]] = {
    "gemini-cli": (
        ("SessionStart", True, None),
        ("BeforeAgent", False, None),
        ("BeforeTool", False, ".*"),
        ("AfterTool", False, ".*"),
    ),
    "qwen-code": (
        ("SessionStart", True, None),
        ("UserPromptSubmit", False, None),
        ("PreToolUse", False, ".*"),
        ("PostToolUse", False, ".*"),
        ("Stop", False, None),
    ),
}
#: The settings folder of each client inside a project.
FOLDERS: Final[dict[str, str]] = {"gemini-cli": ".gemini", "qwen-code": ".qwen"}


def hook_command(harness: str, deployment: str, *, announce: bool, program: str = "dsh-policy") -> str:
    """One hook's command line (see the module docstring for the wrapping)."""
    words = f"{SHELL_TRAP}{program} hook {harness} --config {shlex.quote(deployment)}"
    return words + (" --announce-packs" if announce else "") + " || exit 2"


def settings_hooks(
    harness: str, deployment: str, program: str = "dsh-policy"
) -> dict[str, list[dict[str, Any]]]:
    """The ``hooks`` object for ``harness`` (``gemini-cli`` or ``qwen-code``). Gemini CLI counts a
    hook's ``timeout`` in milliseconds, Qwen Code in seconds."""
    timeout = TIMEOUT_SECONDS * 1000 if harness == "gemini-cli" else TIMEOUT_SECONDS
    hooks: dict[str, list[dict[str, Any]]] = {}
    for event, announce, matcher in WIRED[harness]:
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [
            {
                "type": "command",
                "name": "dsh-policy",
                "command": hook_command(harness, deployment, announce=announce, program=program),
                "timeout": timeout,
            }
        ]
        hooks[event] = [group]
    return hooks
