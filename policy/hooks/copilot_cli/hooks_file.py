"""The hook file ``init copilot-cli`` writes (``.github/hooks/dsh-policy.json``), and where Copilot
CLI records which folders it trusts.

Measured in the real Copilot CLI 1.0.102: before a call, a hook that exits 1 or 3 or is killed
refuses the call, but one that prints what does not parse or runs past ``timeoutSec`` lets it run;
after a call, *every* failure (any exit code, a kill, bad output, a timeout) lets the output
through. So the command is wrapped: the hook's answer is held until it exits, then passed on
(exit 0, or exit 2 with an answer) or replaced by a refusal in stdout that Copilot reads in both
places (:data:`PRELUDE`), exit 2; a signal gives that refusal too. The hook answers within its own
deadline, below :data:`TIMEOUT_SECONDS`.

Repository hooks load only in a folder the user trusted (Copilot's folder-trust prompt, which
records the folder in ``~/.copilot/config.json`` under ``trustedFolders``); in an untrusted folder
a prompt-mode run skips them *silently*. ``COPILOT_ALLOW_ALL=true`` and
``GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true`` load them too.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from typing import Any, Final

from dsh_policy.policy.hooks.copilot_cli.dialect import WIRED_EVENTS

HOOKS_FOLDER: Final[str] = os.path.join(".github", "hooks")
HOOKS_NAME: Final[str] = "dsh-policy.json"
TIMEOUT_SECONDS: Final[int] = 30
_FAILED: Final[str] = "dsh-policy failed closed (%s)"
#: A refusal Copilot reads before a call (deny) and after one (the result withheld).
_REFUSAL_JSON: Final[str] = json.dumps(
    {
        "permissionDecision": "deny",
        "permissionDecisionReason": _FAILED,
        "decision": "block",
        "reason": _FAILED,
    },
    separators=(",", ":"),
)
#: A shell function that prints that refusal and exits 2, then the trap that calls it on a signal.
PRELUDE: Final[str] = (
    "dsh_refuse() { printf " + shlex.quote(_REFUSAL_JSON + "\\n") + ' "$1" "$1"; exit 2; }; '
    "trap 'dsh_refuse signal' HUP INT TERM PIPE; "
)
_OURS: Final[re.Pattern[str]] = re.compile(r"\bhook copilot-cli\b")


def hook_command(deployment: str, *, announce: bool, program: str = "dsh-policy") -> str:
    """One hook's ``bash`` line (see the module docstring for the wrapping)."""
    words = f"{program} hook copilot-cli --config {shlex.quote(deployment)}"
    words += " --announce-packs" if announce else ""
    # The answer is held until the exit code is known: exit 0, or exit 2 with an answer, passes
    # on; anything else (a crash after half an answer included) becomes the refusal alone, since
    # two JSON documents on stdout would read as no answer at all.
    return (
        f"{PRELUDE}out=$({words}); r=$?; "
        'if [ $r -eq 0 ] || { [ $r -eq 2 ] && [ -n "$out" ]; }; '
        'then [ -z "$out" ] || printf \'%s\\n\' "$out"; exit $r; fi; '
        'dsh_refuse "exit $r"'
    )


def hooks_document(deployment: str, program: str = "dsh-policy") -> dict[str, Any]:
    """The whole hook file: version 1, one command hook per wired event."""
    return {
        "version": 1,
        "hooks": {
            event: [
                {
                    "type": "command",
                    "bash": hook_command(deployment, announce=event == "SessionStart", program=program),
                    "timeoutSec": TIMEOUT_SECONDS,
                }
            ]
            for event in WIRED_EVENTS
        },
    }


def hooks_text(deployment: str, program: str = "dsh-policy") -> str:
    """:func:`hooks_document` as the file's text."""
    return json.dumps(hooks_document(deployment, program), indent=2) + "\n"


def is_ours(text: str) -> bool:
    """Whether a hook file's text is one ``init copilot-cli`` wrote."""
    return bool(_OURS.search(text))


def wired_commands(document: Any) -> dict[str, list[str]]:
    """Our hook command per event in a parsed hook file (events without one are left out)."""
    hooks = document.get("hooks") if isinstance(document, Mapping) else None
    out: dict[str, list[str]] = {}
    for event, entries in (hooks or {}).items() if isinstance(hooks, Mapping) else ():
        for entry in entries if isinstance(entries, list) else []:
            command = entry.get("bash") if isinstance(entry, Mapping) else None
            if isinstance(command, str) and _OURS.search(command):
                out.setdefault(event, []).append(command)
    return out


def config_path(environ: Mapping[str, str] | None = None) -> str:
    """Copilot's own state file: ``$COPILOT_HOME/config.json``, else ``~/.copilot/config.json``."""
    env = os.environ if environ is None else environ
    home = env.get("COPILOT_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".copilot")
    return os.path.join(home, "config.json")


def trusted_folders(text: str) -> list[str] | None:
    """The ``trustedFolders`` Copilot recorded; None when the file cannot be read as JSON. Copilot
    writes ``//`` comment lines at the top of the file, which are dropped first."""
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    try:
        document = json.loads(body) if body.strip() else {}
    except ValueError:
        return None
    folders = document.get("trustedFolders") if isinstance(document, dict) else None
    return [f for f in folders if isinstance(f, str)] if isinstance(folders, list) else []


def is_trusted(project: str, folders: list[str]) -> bool:
    """Whether ``project`` itself is among ``folders`` (the only case measured)."""
    here = os.path.realpath(project)
    return any(os.path.realpath(folder) == here for folder in folders)
