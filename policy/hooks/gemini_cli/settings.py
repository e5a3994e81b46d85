"""The ``.gemini/settings.json`` hooks of Gemini CLI, and of its fork Qwen Code (``.qwen/``).

Measured in the real Gemini CLI 0.61 and Qwen Code 0.24.4: a hook that exits 1 or 3, is killed,
prints what does not parse, or runs past its ``timeout`` lets the call run, and so does exit 2 with
an *empty* stderr. So the command is wrapped to turn every non-zero exit and every signal into
exit 2 *with a reason on stderr* (:data:`REFUSE`), and the hook's own deadline answers before
:data:`TIMEOUT_SECONDS`.
The deployment path is absolute: Gemini CLI substitutes ``$GEMINI_PROJECT_DIR`` already quoted,
which cannot sit inside the quotes another path would need.
"""

from __future__ import annotations

import shlex
from typing import Any, Final

TIMEOUT_SECONDS: Final[int] = 30
#: A failure that says so on stderr: both clients ignore an exit 2 that gives no reason.
REFUSE: Final[str] = '{ echo "dsh-policy failed closed (exit $?)" >&2; exit 2; }'
TRAP: Final[str] = (
    "trap '[ $? -eq 0 ] || { echo \"dsh-policy failed closed (signal)\" >&2; exit 2; }' HUP INT TERM PIPE; "
)
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
    words = f"{TRAP}{program} hook {harness} --config {shlex.quote(deployment)}"
    return words + (" --announce-packs" if announce else "") + f" || {REFUSE}"


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
