"""The hook settings dsh-policy installs, and merging them into a harness's own settings files.

One table (:data:`HOOK_EVENTS`) says which events are wired and how; the shipped examples
(``examples/hooks/``) are exactly what :func:`claude_code_hooks` and :func:`codex_hooks` produce
for the default paths, and a test keeps them equal.

Merging never clobbers: every key of an existing file is kept, a hook that is already there (same
command) is not added twice, and a file that does not parse is refused instead of rewritten.
Writes are atomic (a temporary file renamed over the old one), so a crash leaves the old file or
the new one, never half of each.
"""

from __future__ import annotations

import json
import os
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

# Reading and rewriting a harness's files is shared with the per-harness folders (codex/): the
# names moved to harness_files and stay importable from here (`X as X`: an explicit re-export).
from dsh_policy.policy.hooks.harness_files import SettingsError as SettingsError
from dsh_policy.policy.hooks.harness_files import configured_commands as configured_commands
from dsh_policy.policy.hooks.harness_files import read_text as read_text
from dsh_policy.policy.hooks.harness_files import write_atomically as write_atomically

#: (event, announce packs?, matcher) for every event the adapter handles.
HOOK_EVENTS: Final[tuple[tuple[str, bool, str | None], ...]] = (
    ("SessionStart", True, None),
    ("UserPromptSubmit", False, None),
    ("PreToolUse", False, "*"),
    ("PostToolUse", False, "*"),
    ("Stop", False, None),
)
HOOK_TIMEOUT_SECONDS: Final[int] = 30
CLAUDE_CODE_DEPLOYMENT: Final[str] = '"$CLAUDE_PROJECT_DIR/.dsh/gateway.yaml"'
CODEX_DEPLOYMENT: Final[str] = ".codex/dsh-gateway.yaml"
CODEX_STATUS_MESSAGE: Final[str] = "Checking the call against policy"


#: Keeps the wrapping ``sh -c`` alive when a harness signals the hook's whole process group: it
#: then waits for the hook and exits with its 0 or 2 instead of dying of the signal.
SHELL_TRAP: Final[str] = "trap '[ $? -eq 0 ] || exit 2' HUP INT TERM PIPE; "


def hook_command(
    harness: str,
    deployment: str,
    *,
    announce: bool,
    program: str = "dsh-policy",
    event: str | None = None,
    extra: str = "",
) -> str:
    """The command line of one hook. ``|| exit 2`` turns a crash before our code runs (exit 1, a
    non-blocking error in the harness) into a refusal. ``program`` is found on the harness's PATH
    unless it is an absolute path; when it cannot be found at all, :func:`missing_program_guard`
    answers ``event`` with its refusal, saying what to install. ``extra`` (already quoted) goes
    after ``--config``: ``--project auto`` for a machine-wide deployment."""
    guard = missing_program_guard(harness, program, event) if event is not None else ""
    words = f"{SHELL_TRAP}{guard}{program} hook {harness} --config {deployment}"
    words += f" {extra}" if extra else ""
    return words + (" --announce-packs" if announce else "") + " || exit 2"


def install_hint(harness: str, program: str) -> str:
    """What a machine without ``program`` must do: the refusal every hook gives there. No version
    in it: the shipped example settings are exactly what this writes, and must not change with it."""
    wheel = "dsh_policy-*.whl"
    if os.path.isabs(program) and os.path.basename(os.path.dirname(program)) == "bin":
        prefix = os.path.dirname(os.path.dirname(program))
        where = f"{program} is not installed"
        then = ""
    else:
        prefix = "~/.dsh-policy"
        where = f"{program} is not installed (not found on the PATH hooks start with)"
        then = f", and {prefix}/bin/dsh-policy init {harness} --user"
    return (
        f"{where}: this {harness} set-up refuses every call until it is. Install dsh-policy "
        f"(Linux, Python 3.11+) from its wheel or checkout: python3 -m venv {prefix} && "
        f"{prefix}/bin/pip install {wheel}{then}; then run `dsh-policy doctor {harness}`"
    )


def installed_version() -> str | None:
    """This installation's version (None from a checkout that was never installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dsh-policy")
    except PackageNotFoundError:
        return None


def missing_program_guard(harness: str, program: str, event: str) -> str:
    """A shell prefix that, when ``program`` cannot be run, gives ``event``'s safe answer (the
    refusal ``dsh-policy hook`` itself gives when it fails) with :func:`install_hint` as the
    reason, instead of the shell's bare "not found": the answer the harness shows is what to do."""
    from dsh_policy.policy.hooks.gateway.safe_answers import safe_answer

    answer = safe_answer(event, install_hint(harness, program), harness)
    prints = [f"printf '%s\\n' {shlex.quote(answer.stdout.rstrip())}"] if answer.stdout else []
    if answer.stderr:
        prints.append(f"printf '%s\\n' {shlex.quote(answer.stderr.rstrip())} >&2")
    return f"command -v {program} >/dev/null 2>&1 || {{ {'; '.join(prints)}; exit {answer.exit_code}; }}; "


def claude_code_hooks(
    deployment: str = CLAUDE_CODE_DEPLOYMENT, program: str = "dsh-policy", extra: str = ""
) -> dict[str, list[dict[str, Any]]]:
    """The ``hooks`` object of Claude Code settings. ``onFailure: "block"`` (Claude Code 2.1.295
    and later) makes a hook that cannot start, times out or crashes block the action."""
    program = program if program == "dsh-policy" else shlex.quote(program)
    hooks: dict[str, list[dict[str, Any]]] = {}
    for event, announce, matcher in HOOK_EVENTS:
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        command = hook_command(
            "claude-code", deployment, announce=announce, program=program, event=event, extra=extra
        )
        group["hooks"] = [
            {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECONDS, "onFailure": "block"}
        ]
        hooks[event] = [group]
    return hooks


def codex_hooks_toml(deployment: str = CODEX_DEPLOYMENT, program: str = "dsh-policy", extra: str = "") -> str:
    """The ``[[hooks.<Event>]]`` tables of a Codex config (the same tables serve a
    ``requirements.toml``). No ``matcher``: the guard must see every tool (shell, apply_patch and
    MCP tools alike)."""
    words = deployment if deployment == CODEX_DEPLOYMENT else shlex.quote(deployment)
    program = program if program == "dsh-policy" else shlex.quote(program)
    blocks = []
    for event, announce, _matcher in HOOK_EVENTS:
        command = hook_command("codex", words, announce=announce, program=program, event=event, extra=extra)
        lines = [
            f"[[hooks.{event}]]",
            f"[[hooks.{event}.hooks]]",
            'type = "command"',
            f"command = {json.dumps(command)}",
            f"timeout = {HOOK_TIMEOUT_SECONDS}",
        ]
        if event == "PreToolUse":
            lines.append(f"statusMessage = {json.dumps(CODEX_STATUS_MESSAGE)}")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


@dataclass(frozen=True, slots=True)
class MergeResult:
    """What a merge did: the new text, and which events gained a hook."""

    text: str
    added: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.added)


def merge_claude_code_settings(
    existing: str | None, hooks: Mapping[str, list[dict[str, Any]]]
) -> MergeResult:
    """``existing`` settings JSON (None: no file) with ``hooks`` merged in."""
    document: Any = {}
    if existing is not None and existing.strip():
        try:
            document = json.loads(existing)
        except ValueError as error:
            raise SettingsError(f"not valid JSON ({error}); fix or move it, then run init again") from None
    if not isinstance(document, dict):
        raise SettingsError("the settings file is not a JSON object")
    current = document.setdefault("hooks", {})
    if not isinstance(current, dict):
        raise SettingsError('"hooks" is not an object')
    added: list[str] = []
    for event, groups in hooks.items():
        present = current.setdefault(event, [])
        if not isinstance(present, list):
            raise SettingsError(f'"hooks.{event}" is not a list')
        known = {
            hook.get("command")
            for group in present
            if isinstance(group, dict)
            for hook in group.get("hooks", [])
            if isinstance(hook, dict)
        }
        for group in groups:
            if all(hook["command"] in known for hook in group["hooks"]):
                continue
            present.append(group)
            added.append(event)
    return MergeResult(json.dumps(document, indent=2, ensure_ascii=False) + "\n", tuple(added))


def merge_codex_config(existing: str | None, tables: str) -> MergeResult:
    """``existing`` Codex config TOML with our hook ``tables`` appended (those whose command is
    already configured for the event are left out). Refused when the result would not parse
    (for example when ``hooks`` is an inline table that TOML cannot extend)."""
    text = existing or ""
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"not valid TOML ({error}); fix or move it, then run init again") from None
    ours = tomllib.loads(tables)["hooks"]
    configured = configured_commands(before)
    keep: list[str] = []
    added: list[str] = []
    for block in tables.split("\n\n"):
        event = block.split("]]", 1)[0].removeprefix("[[hooks.")
        commands = {hook["command"] for group in ours[event] for hook in group["hooks"]}
        if commands <= configured.get(event, set()):
            continue
        keep.append(block.rstrip("\n") + "\n")
        added.append(event)
    if not keep:
        return MergeResult(text, ())
    merged = text + ("\n" if text and not text.endswith("\n") else "") + ("\n" if text else "")
    merged += "# dsh-policy hooks (dsh-policy init codex)\n" + "\n".join(keep)
    try:
        after = tomllib.loads(merged)
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"cannot add hook tables to this file ({error}); add them by hand") from None
    missing = [event for event in added if not set(configured_commands(after).get(event, ()))]
    if missing:
        raise SettingsError(f"merged file lost hooks for {missing}; add them by hand")
    return MergeResult(merged, tuple(added))
