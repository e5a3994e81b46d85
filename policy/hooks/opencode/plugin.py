"""The OpenCode plugin file ``init opencode`` writes (``.opencode/plugin/dsh-policy.js``).

The plugin (``dsh-policy.js`` beside this module) is shipped with two placeholders: the argv of
the hook command and its deadline. OpenCode loads every ``.js`` file in a project's
``.opencode/plugin/`` folder (and in ``~/.config/opencode/plugin/``) at start, with no prompt, so
whoever can write that folder decides what guards the session: the trust model is the file system.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

PLUGIN_NAME: Final[str] = "dsh-policy.js"
PLUGIN_FOLDER: Final[str] = ".opencode/plugin"
TIMEOUT_MS: Final[int] = 30_000
MARKER: Final[str] = "// dsh-policy guard for OpenCode"


def plugin_source(deployment: str, program: str = "dsh-policy") -> str:
    """The plugin's text, with the hook command and deadline filled in."""
    template = (Path(__file__).parent / PLUGIN_NAME).read_text(encoding="utf-8")
    argv = [program, "hook", "opencode", "--config", deployment]
    return template.replace("__DSH_POLICY_COMMAND__", json.dumps(argv)).replace(
        "__DSH_POLICY_TIMEOUT_MS__", str(TIMEOUT_MS)
    )


def plugin_command(text: str) -> list[str] | None:
    """The hook argv an installed plugin runs (None when it is not ours or was edited beyond
    reading)."""
    if MARKER not in text:
        return None
    for line in text.splitlines():
        if line.startswith("const COMMAND = "):
            try:
                argv = json.loads(line.removeprefix("const COMMAND = ").split(";", 1)[0])
            except ValueError:
                return None
            if isinstance(argv, list) and all(isinstance(word, str) for word in argv):
                return argv
    return None
