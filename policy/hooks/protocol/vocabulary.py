"""One tool vocabulary for every harness, so one rule pack guards them all (HOOKS.md).

Rules are written against canonical tool names and argument fields (``shell {command}``,
``read_file {path}``, ...). Each harness spells the same tools differently: Claude Code says
``Bash {command}`` and ``Read {file_path}``; Codex reports every shell-like tool as ``Bash`` with a
command string, its older native tools (``shell``, ``local_shell``, ``container.exec``) carry an
argv list, and ``apply_patch`` carries a patch. :func:`canonicalize` maps a harness call onto the
vocabulary with a data table (:data:`ALIASES`) plus a few small argument normalisers.

What stays visible: the harness's own tool name (``CanonicalCall.original_name``) and every argument
field the table does not rename (``description``, ``timeout``, ...). Renamed fields appear only
under their canonical name, so ``args.path`` means the same thing in every harness. Tools outside
the table (MCP tools ``mcp__server__tool``, ``Task``, ``WebSearch``, ...) keep their name and
arguments unchanged.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from dsh_policy.core.frozen import FrozenDict, NotJsonError, freeze_json
from dsh_policy.policy.patch_files import patch_paths

Harness: TypeAlias = Literal[
    "claude-code", "codex", "gemini-cli", "qwen-code", "opencode", "copilot-cli", "dsh"
]
HARNESSES: Final[tuple[Harness, ...]] = (
    "claude-code",
    "codex",
    "gemini-cli",
    "qwen-code",
    "opencode",
    "copilot-cli",
    "dsh",
)

# The canonical tools and the argument fields a rule may rely on (others may be present too).
CANONICAL_TOOLS: Final[Mapping[str, tuple[str, ...]]] = {
    "shell": ("command",),
    "read_file": ("path",),
    "write_file": ("path", "content"),
    "edit_file": ("path", "old_string", "new_string"),
    "list_dir": ("path",),
    "web_fetch": ("url",),
    "http_request": ("url", "method", "headers", "body"),
    "send_message": ("channel", "text"),
    # A patch may touch several files, so it cannot honestly become one edit_file call: rules that
    # guard paths should also match apply_patch and look at args.paths.
    "apply_patch": ("patch", "paths"),
}


@dataclass(frozen=True, slots=True)
class CanonicalCall:
    """A harness tool call in the gateway's vocabulary; ``args`` is deep-frozen JSON."""

    name: str
    args: FrozenDict
    original_name: str
    harness: Harness


@dataclass(frozen=True, slots=True)
class ToolInputError:
    """The harness sent a tool call whose arguments do not have the shape its tool documents."""

    harness: Harness
    tool_name: str
    message: str

    def __str__(self) -> str:
        return f"{self.harness} tool {self.tool_name!r}: {self.message}"


class _ShapeError(ValueError):
    """Raised inside a normaliser; turned into a :class:`ToolInputError` at the boundary."""


Normaliser: TypeAlias = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class ToolAlias:
    """How one harness tool maps onto a canonical tool.

    ``renames`` moves harness fields to canonical fields (the harness field disappears);
    ``required`` lists canonical fields that must be present after renaming; ``normalise`` runs
    last for shapes a rename cannot express (argv lists, multi-edits, patches).
    """

    canonical: str
    renames: tuple[tuple[str, str], ...] = ()
    required: tuple[str, ...] = ()
    normalise: Normaliser | None = None


# --- normalisers ----------------------------------------------------------------------------------


def _shell_command(args: dict[str, Any]) -> dict[str, Any]:
    """Make ``command`` one shell line: a string stays, an argv list is joined with shell quoting.

    ``["bash", "-lc", "rm -rf /"]`` becomes ``bash -lc 'rm -rf /'`` (what Codex itself shows its
    hooks), so ``shell.commands`` sees the wrapper and unwraps the script inside it. The argv stays
    visible as ``args.argv``.
    """
    command = args.get("command")
    if isinstance(command, str):
        return args
    if isinstance(command, list | tuple) and command and all(isinstance(a, str) for a in command):
        out = dict(args)
        out["argv"] = list(command)
        out["command"] = shlex.join(command)
        return out
    raise _ShapeError("'command' must be a string or a non-empty list of strings")


def _multi_edit(args: dict[str, Any]) -> dict[str, Any]:
    """Fold Claude Code's ``MultiEdit {edits: [...]}`` into one edit_file call.

    ``old_string``/``new_string`` hold every edit's text joined by newlines, so a rule that scans
    what is written (``args.new_string``) sees all of it; ``edits`` stays for exact inspection.
    """
    edits = args.get("edits")
    if not isinstance(edits, list | tuple) or not edits:
        raise _ShapeError("'edits' must be a non-empty list")
    olds: list[str] = []
    news: list[str] = []
    for index, edit in enumerate(edits):
        if not isinstance(edit, Mapping):
            raise _ShapeError(f"'edits[{index}]' must be an object")
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            raise _ShapeError(f"'edits[{index}]' needs string old_string and new_string")
        olds.append(old)
        news.append(new)
    out = dict(args)
    out["old_string"] = "\n".join(olds)
    out["new_string"] = "\n".join(news)
    return out


def _notebook_edit(args: dict[str, Any]) -> dict[str, Any]:
    """A notebook cell edit writes ``new_source``; there is no old text to compare against."""
    out = dict(args)
    out.setdefault("old_string", "")
    return out


def _apply_patch(args: dict[str, Any]) -> dict[str, Any]:
    """Codex sends ``apply_patch`` as ``{command: <patch text>}`` (older builds: ``{input}``)."""
    out = dict(args)
    patch = out.pop("command", None)
    if patch is None:
        patch = out.pop("input", None)
    if isinstance(patch, list | tuple) and all(isinstance(a, str) for a in patch):
        # The argv form ``["apply_patch", "<patch>"]``: the patch is the last argument.
        patch = patch[-1] if patch else None
    if not isinstance(patch, str):
        raise _ShapeError("'command' must be the patch text")
    out["patch"] = patch
    out["paths"] = patch_paths(patch)
    return out


# --- the table ------------------------------------------------------------------------------------

_CLAUDE_CODE: Final[Mapping[str, ToolAlias]] = {
    "Bash": ToolAlias("shell", required=("command",), normalise=_shell_command),
    "Read": ToolAlias("read_file", renames=(("file_path", "path"),), required=("path",)),
    "Write": ToolAlias("write_file", renames=(("file_path", "path"),), required=("path", "content")),
    "Edit": ToolAlias(
        "edit_file", renames=(("file_path", "path"),), required=("path", "old_string", "new_string")
    ),
    "MultiEdit": ToolAlias(
        "edit_file", renames=(("file_path", "path"),), required=("path",), normalise=_multi_edit
    ),
    "NotebookEdit": ToolAlias(
        "edit_file",
        renames=(("notebook_path", "path"), ("new_source", "new_string")),
        required=("path", "new_string"),
        normalise=_notebook_edit,
    ),
    "WebFetch": ToolAlias("web_fetch", required=("url",)),
    # LS lists a directory; Glob and Grep search file names and contents with their own pattern
    # semantics, so they keep their names (a rule that guards paths can match them explicitly).
    "LS": ToolAlias("list_dir", required=("path",)),
}

_CODEX_SHELL = ToolAlias(
    "shell", renames=(("cmd", "command"),), required=("command",), normalise=_shell_command
)

_CODEX: Final[Mapping[str, ToolAlias]] = {
    # Hook payloads: every shell-like tool is reported as Bash with a command string.
    "Bash": _CODEX_SHELL,
    # Native tool names (older hook builds, notify payloads, transcripts): argv list or string.
    "shell": _CODEX_SHELL,
    "local_shell": _CODEX_SHELL,
    "container.exec": _CODEX_SHELL,
    "shell_command": _CODEX_SHELL,
    "exec_command": _CODEX_SHELL,
    "apply_patch": ToolAlias("apply_patch", normalise=_apply_patch),
    # The file-read tool of builds that expose one, with Claude Code's name and fields.
    "Read": ToolAlias("read_file", renames=(("file_path", "path"),), required=("path",)),
}

# Gemini CLI and its fork Qwen Code share their built-in tool names and fields.
_GEMINI_FAMILY: Final[Mapping[str, ToolAlias]] = {
    "run_shell_command": ToolAlias("shell", required=("command",), normalise=_shell_command),
    "read_file": ToolAlias(
        "read_file", renames=(("file_path", "path"), ("absolute_path", "path")), required=("path",)
    ),
    "write_file": ToolAlias("write_file", renames=(("file_path", "path"),), required=("path", "content")),
    "replace": ToolAlias(
        "edit_file", renames=(("file_path", "path"),), required=("path", "old_string", "new_string")
    ),
    "edit": ToolAlias(
        "edit_file", renames=(("file_path", "path"),), required=("path", "old_string", "new_string")
    ),
    "list_directory": ToolAlias("list_dir", renames=(("dir_path", "path"),), required=("path",)),
    # Their web_fetch takes a free-text ``prompt`` naming URLs, not a ``url``: it keeps its name.
}

# OpenCode's built-in tools (camelCase fields).
_OPENCODE: Final[Mapping[str, ToolAlias]] = {
    "bash": ToolAlias("shell", required=("command",), normalise=_shell_command),
    "read": ToolAlias("read_file", renames=(("filePath", "path"),), required=("path",)),
    "write": ToolAlias("write_file", renames=(("filePath", "path"),), required=("path", "content")),
    "edit": ToolAlias(
        "edit_file",
        renames=(("filePath", "path"), ("oldString", "old_string"), ("newString", "new_string")),
        required=("path", "old_string", "new_string"),
    ),
    "list": ToolAlias("list_dir", required=("path",)),
    "webfetch": ToolAlias("web_fetch", required=("url",)),
}

def _copilot_edit(args: dict[str, Any]) -> dict[str, Any]:
    """Copilot's ``edit`` requires only ``path``: missing old/new text counts as empty."""
    out = dict(args)
    for name in ("old_string", "new_string"):
        value = out.setdefault(name, "")
        if not isinstance(value, str):
            raise _ShapeError(f"{name!r} must be a string")
    return out


_COPILOT_READ = ToolAlias("read_file", renames=(("file_path", "path"),), required=("path",))
_COPILOT_WRITE = ToolAlias(
    "write_file", renames=(("file_path", "path"), ("file_text", "content")), required=("path", "content")
)
_COPILOT_EDIT = ToolAlias(
    "edit_file",
    renames=(("file_path", "path"), ("old_str", "old_string"), ("new_str", "new_string")),
    required=("path",),
    normalise=_copilot_edit,
)
_COPILOT_SHELL = ToolAlias("shell", required=("command",), normalise=_shell_command)

# GitHub Copilot CLI: its Claude-style payloads name tools as Claude Code does (``Bash``, ``Read``)
# but keep Copilot's own argument fields; its native names (``bash``, ``view``, ``create``...) are
# mapped too, for the camelCase payloads and transcripts.
_COPILOT_CLI: Final[Mapping[str, ToolAlias]] = {
    "Bash": _COPILOT_SHELL,
    "bash": _COPILOT_SHELL,
    "Read": _COPILOT_READ,
    "view": _COPILOT_READ,
    "Write": _COPILOT_WRITE,
    "create": _COPILOT_WRITE,
    "Edit": _COPILOT_EDIT,
    "edit": _COPILOT_EDIT,
    "WebFetch": ToolAlias("web_fetch", required=("url",)),
    "web_fetch": ToolAlias("web_fetch", required=("url",)),
}

ALIASES: Final[Mapping[Harness, Mapping[str, ToolAlias]]] = {
    "claude-code": _CLAUDE_CODE,
    "codex": _CODEX,
    "gemini-cli": _GEMINI_FAMILY,
    "qwen-code": _GEMINI_FAMILY,
    "opencode": _OPENCODE,
    "copilot-cli": _COPILOT_CLI,
    "dsh": {},  # our own loop already speaks the canonical vocabulary
}


def canonicalize(
    harness: Harness, tool_name: str, tool_input: Mapping[str, Any] | Sequence[Any] | Any
) -> CanonicalCall | ToolInputError:
    """Map one harness tool call onto the canonical vocabulary.

    Unknown tools (MCP tools included) keep their name and arguments. A known tool whose arguments
    lack a documented field, or have the wrong shape, is an error value: the caller fails closed.
    """
    alias = ALIASES[harness].get(tool_name)
    if alias is None:
        return _frozen_call(harness, tool_name, tool_name, tool_input)
    if not isinstance(tool_input, Mapping):
        return ToolInputError(harness, tool_name, "tool_input must be a JSON object")
    args = dict(tool_input)
    for source, target in alias.renames:
        if source in args:
            if target in args and target != source:
                return ToolInputError(harness, tool_name, f"both {source!r} and {target!r} given")
            args[target] = args.pop(source)
    missing = [name for name in alias.required if name not in args]
    if missing:
        return ToolInputError(harness, tool_name, f"missing {', '.join(map(repr, missing))}")
    for name in alias.required:
        typed = name in CANONICAL_TOOLS.get(alias.canonical, ()) and name != "command"
        if typed and not isinstance(args[name], str):
            return ToolInputError(harness, tool_name, f"{name!r} must be a string")
    if alias.normalise is not None:
        try:
            args = alias.normalise(args)
        except _ShapeError as error:
            return ToolInputError(harness, tool_name, str(error))
    return _frozen_call(harness, alias.canonical, tool_name, args)


def _frozen_call(harness: Harness, name: str, original: str, args: Any) -> CanonicalCall | ToolInputError:
    try:
        frozen = freeze_json(args)
    except NotJsonError as error:
        return ToolInputError(harness, original, f"tool_input is not JSON: {error}")
    if not isinstance(frozen, FrozenDict):
        # Tool arguments are objects in every harness; rules read ``args.<field>``.
        return ToolInputError(harness, original, "tool_input must be a JSON object")
    return CanonicalCall(name=name, args=frozen, original_name=original, harness=harness)
