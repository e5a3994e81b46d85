"""What a tool call does, read from its arguments: the canonical calls any client's tool amounts to.

The packs are written against the canonical vocabulary (``shell {command}``, ``write_file {path,
content}``, ...; :mod:`dsh_policy.policy.tool_arguments`). The hooks map the tools of the clients
they know (:mod:`dsh_policy.policy.hooks.protocol.vocabulary`), but a call also arrives under names
no table lists: another client's (Cursor's ``edit_file {target_file, code_edit}``, Windsurf's
``write_to_file {TargetFile, CodeContent}``, Cline's ``replace_in_file {path, diff}``), an MCP
server's (``mcp__filesystem__move_file {source, destination}``, ``mcp__github__push_files``), or a
canonical name with another client's fields (Gemini's ``write_file {file_path}``, Codex's ``shell``
with an argv list, ``apply_patch {input}``). Judged by name only, such a call slips past every
rule written for what it does.

So a call is also read by the meaning of its arguments, whatever its name: a path with a whole
text is a write, a path with replacement text (or edits, chunks, a SEARCH/REPLACE diff) an edit, a
patch an ``apply_patch``, a command line a ``shell`` call, a URL a fetch (a request when it carries
a body or a method other than GET), a channel with text a message, a source and a destination a
``mv`` (``cp`` when the tool copies), a path under a tool named for deleting an ``rm -rf`` (for
listing a ``list_dir``), any other path a read of that path, and a call carrying another call
(``tool_name`` + ``arguments``) that call. The tool's own name (and a sub-command argument such
as ``command: create`` or ``type: delete_file``) matters only where the arguments cannot say it:
whether a path-only tool deletes, creates a folder, lists, copies or writes text it does not show
(then an unread patch of the path), and that a tool named only for reading never writes.

:func:`views` gives those canonical calls. A canonical name with canonical fields has none (the
hot path pays one dict lookup), save the files an ``apply_patch`` deletes or moves (``rm``/``mv``)
and the command lines a ``web_fetch`` or ``http_request`` hands the service it reaches (``shell``),
judged beside the call; a canonical name with foreign fields is replaced by its views; any other
tool is judged as itself and as each view (:mod:`.view_calls`), the strictest answer wins.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import urllib.parse
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.path_arguments import PATH_KEYS, PATH_LIST_KEYS
from dsh_policy.cmdline.tool_names import identifier_words, own_name
from dsh_policy.policy.decide.cli_views import (
    CLI_KEYS,
    cli_lines,
    manifest_commands,
    manifest_text,
    name_search_target,
    repository_views,
    scheduled_task_texts,
)
from dsh_policy.policy.patch_files import patch_paths

#: Canonical tool -> the fields whose presence (with the right type) makes a call canonical.
_CANONICAL_SHAPE: Final[dict[str, tuple[str, ...]]] = {
    "shell": ("command",),
    "read_file": ("path",),
    "write_file": ("path", "content"),
    "edit_file": ("path", "new_string"),
    "list_dir": ("path",),
    "web_fetch": ("url",),
    "http_request": ("url",),
    "send_message": ("channel", "text"),
    "apply_patch": ("patch",),
}
# The views that say what a canonical call with foreign fields does well enough to replace it.
_KIN: Final[dict[str, frozenset[str]]] = {
    "apply_patch": frozenset(("apply_patch", "edit_file", "write_file", "shell")),
    "edit_file": frozenset(("edit_file", "write_file")),
    "write_file": frozenset(("write_file", "edit_file")),
}

#: The canonical tool names (what the packs' rules are written against).
CANONICAL_TOOLS: Final[frozenset[str]] = frozenset(_CANONICAL_SHAPE)

# Argument names by meaning, as the clients and MCP servers spell them.
# ``text`` is a file's text only beside a path (LangChain's and Kiro's writes); alone it is a message.
_CONTENT_KEYS: Final = (
    "content",
    "file_text",
    "CodeContent",
    "contents",
    "new_source",
    "text_content",
    "text",
)
_NEW_KEYS: Final = (
    "new_string", "newString", "new_str", "new", "newText", "new_text", "replace", "replacement",
    "code_edit", "ReplacementContent", "newStr", "changes",
)  # fmt: skip
_OLD_KEYS: Final = (
    "old_string",
    "oldString",
    "old_str",
    "old",
    "oldText",
    "old_text",
    "search",
    "TargetContent",
    "oldStr",
)
_EDIT_LIST_KEYS: Final = ("edits", "ReplacementChunks", "chunks", "replacements")
_POSITION_KEYS: Final = ("insert_line", "line", "line_number", "position")
_PATCH_KEYS: Final = ("patch", "input", "patchText", "patch_text")
_DIFF_KEYS: Final = ("diff",)
_COMMAND_KEYS: Final = ("command", "cmd", "CommandLine", "command_line", "commandLine", "cli_command")
# Lines a shell tool runs one after another in one session (LangChain's ShellTool ``terminal
# {commands}``, the OpenAI Agents ``shell {commands}``): a list of lines, or one line as text.
_COMMAND_LIST_KEYS: Final = ("commands",)
_URL_KEYS: Final = ("url", "Url", "URL", "uri", "TargetUrl", "href", "link", "endpoint", "website_url")
_URL_LIST_KEYS: Final = ("urls", "Urls", "links")
_BODY_KEYS: Final = ("body", "data", "json", "form", "payload", "files")
_PROMPT_KEYS: Final = ("prompt", "query", "instructions")
_CODE_KEYS: Final = ("function", "script", "code", "expression", "js")
# Page code that posts, or that reads the page's secrets (cookies, web storage) beside a URL: what
# it fetches carries them (``new Image().src = URL + document.cookie``).
_CODE_SENDS: Final = lazy_compile(
    r"(?i)method\s*:\s*['\"]?(?:post|put|patch)|\bbody\s*:|sendBeacon|\.send\(|WebSocket\(|\.submit\("
    r"|document\.cookie|localStorage|sessionStorage|indexedDB"
)
# An e-mail tool's addressees may be a list (LangChain's Gmail ``to: [...]``, AgentDojo's
# ``send_email {recipients: [...]}``): the message goes to all of them.
_CHANNEL_KEYS: Final = ("channel", "channel_id", "channelId", "chat_id", "recipient", "to", "recipients")
_TEXT_KEYS: Final = ("text", "message", "body")
_MOVE_PAIRS: Final = (
    ("source", "destination"), ("src", "dst"), ("old_path", "new_path"),
    ("source_path", "destination_path"), ("sourcePath", "destinationPath"), ("oldPath", "newPath"),
)  # fmt: skip
# A transaction's statements given as a list (Neon's run_sql_transaction {sqlStatements}).
_SQL_LIST_KEYS: Final = ("sqlStatements", "sql_statements", "statements", "queries")
# Arguments the packs read from a non-canonical tool's own call (a query tool's SQL).
_OWN_ARGUMENT_KEYS: Final = frozenset(("sql", "query", "statement", "sql_query", *_SQL_LIST_KEYS))
_NESTED_NAME_KEYS: Final = ("tool_name", "toolName")
_NESTED_ARGS_KEYS: Final = ("arguments", "args", "input", "params")
_NESTED_SERVER_KEYS: Final = ("server_name", "serverName", "server")

# What a path-only tool does, when its name says it (the last ``mcp__server__`` part only).
_DELETE_WORDS: Final = frozenset(
    {"delete", "remove", "rm", "unlink", "trash", "erase", "destroy", "purge", "rmdir"}
)
_CREATE_WORDS: Final = frozenset({"create", "make", "mkdir", "new"})
_FOLDER_WORDS: Final = frozenset({"directory", "dir", "folder", "mkdir"})
_COPY_WORDS: Final = frozenset({"copy", "cp", "duplicate", "clone"})
_LIST_WORDS: Final = frozenset({"list", "ls", "tree"})
# A path-only tool named for writing writes text the call does not show (Zed's edit_file {path,
# mode}): judged as a patch of that path, which the packs treat as unread.
_WRITE_WORDS: Final = frozenset(
    {
        "write",
        "edit",
        "save",
        "overwrite",
        "append",
        "create",
        "modify",
        "update",
        "patch",
        "insert",
        "replace",
    }
)
# A tool named only for reading or searching never writes, whatever its text arguments are called.
_READ_WORDS: Final = frozenset(
    {
        "read",
        "search",
        "find",
        "grep",
        "get",
        "view",
        "list",
        "show",
        "cat",
        "open",
        "query",
        "lookup",
        "stat",
    }
)
_SUB_COMMAND_WORDS: Final = (
    _WRITE_WORDS
    | _READ_WORDS
    | _DELETE_WORDS
    | _LIST_WORDS
    | _CREATE_WORDS
    | {"str", "undo", "rename", "move"}
)
_OPERATION_LIST_KEYS: Final = ("operations", "items", "files")
# Arguments naming the sub-command a tool runs (``{command: create, path}``, ``{type: delete_file}``).
_VERB_KEYS: Final = ("command", "action", "type", "mode", "operation")
# Objects a call's real arguments may be wrapped in (``{operation: {type, path, diff}}``; the
# OpenAI Agents ``local_shell {action: {type: exec, command: [...]}}``).
_WRAPPER_KEYS: Final = ("operation", "input", "params", "request", "edit", "action")
# A file named by its folder and its name apart (CrewAI's FileWriterTool {directory, filename}).
_FOLDER_KEYS: Final = ("directory", "dir", "folder")
_NAME_KEYS: Final = ("filename", "file_name")

# Every argument name that can make a view: a call with none of them has none (checked first).
_MEANINGFUL: Final[frozenset[str]] = frozenset(
    (
        *PATH_KEYS, *PATH_LIST_KEYS, *_CONTENT_KEYS, *_NEW_KEYS, *_EDIT_LIST_KEYS, *_PATCH_KEYS,
        *_DIFF_KEYS, *_COMMAND_KEYS, *_COMMAND_LIST_KEYS, *_URL_KEYS, *_URL_LIST_KEYS, *_PROMPT_KEYS,
        *_CODE_KEYS, *_CHANNEL_KEYS,
        *(key for pair in _MOVE_PAIRS for key in pair), *_NESTED_NAME_KEYS, *_WRAPPER_KEYS,
        *_OPERATION_LIST_KEYS, *CLI_KEYS, *_SQL_LIST_KEYS, "formatted_file", "formatted_file_update",
    )
)  # fmt: skip

_PATCH_BEGIN: Final = "*** Begin Patch"
_UNIFIED_FILE: Final = lazy_compile(r"^\+\+\+ (?:b/)?(\S.*?)\s*$", re.MULTILINE)
_URL_IN_TEXT: Final = lazy_compile(r"https?://[^\s<>\"'`)\]]+")
_WEB_URL: Final = lazy_compile(r"(?i)(?:https?|wss?|ftp)://")
_MAX_NESTING: Final = 3


@dataclass(frozen=True, slots=True)
class ToolViews:
    """The canonical calls one call amounts to; ``replaces``: the call's own name is canonical but
    its fields are not, so it is judged only as its views (its rules read fields it lacks)."""

    calls: tuple[tuple[str, dict[str, Any]], ...]
    replaces: bool


def views(tool: str, args: Any) -> ToolViews | None:
    """The canonical calls ``tool(args)`` amounts to, or None when it is canonical already or its
    arguments say nothing a canonical call could (see the module docstring)."""
    shape = _CANONICAL_SHAPE.get(tool)
    if shape is not None and _is_canonical(tool, shape, args):
        if tool in ("web_fetch", "http_request"):
            embedded = tuple(_embedded_commands(args))
            return ToolViews(embedded, replaces=False) if embedded else None
        if tool in ("write_file", "edit_file"):
            tasks = tuple(_scheduled_tasks(args))
            return ToolViews(tasks, replaces=False) if tasks else None
        if tool != "apply_patch":
            return None
        removed = tuple(_patch_removals(args["patch"]))
        return ToolViews(removed, replaces=False) if removed else None
    if not isinstance(args, Mapping):
        return None
    memory = _memory_write(tool, args)
    if memory is not None:
        return ToolViews((memory,), replaces=False)
    if _MEANINGFUL.isdisjoint(args):
        return None
    found = tuple(_dedupe(_read(tool, args, 0)))
    if not found or (len(found) == 1 and found[0][0] == tool and found[0][1] == dict(args)):
        return None
    # A canonical name is replaced only by a view of its own kind (write_file {file_path, content}
    # by write_file, a patch by the edit or removal it makes): a write whose text cannot be found
    # is judged as itself too.
    kin = _KIN.get(tool, frozenset((tool,)))
    return ToolViews(found, replaces=shape is not None and any(name in kin for name, _ in found))


# -- internals -------------------------------------------------------------------------------------


# An agent's memory: text it stores to load into its context at later sessions (Windsurf's
# create_memory, Gemini's save_memory, Claude's memory tool under its virtual /memories root, the
# MCP memory server's entities and observations). Whatever path the tool names is the client's own
# store, not a file of this machine's tree; what matters is the text, which the agent will obey
# like its instruction files. It is judged as a write of such a file (AGENT_MEMORY, classed with
# the instruction files by path.later).
AGENT_MEMORY: Final = "agent-memory.md"
_MEMORY_WORDS: Final = frozenset({"memory", "memories", "remember", "memorize"})
_MEMORY_SERVER_WRITES: Final = frozenset({"create", "add", "update", "save", "store", "write", "insert"})
_MEMORY_TEXT_LIMIT: Final = 64 * 1024


def _memory_write(tool: str, args: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    name = _name_words(tool)
    parts = tool.split("__")
    server = identifier_words(parts[1]) if parts[0] == "mcp" and len(parts) > 2 else frozenset()
    if not (name & _MEMORY_WORDS or (server & _MEMORY_WORDS and name & _MEMORY_SERVER_WRITES)):
        return None
    verb = _verb_words(args)
    if verb and not verb & (_WRITE_WORDS | _CREATE_WORDS | {"str", "rename"}):
        return None  # view, delete, list: nothing stored for later
    texts: list[str] = []
    size = 0  # the length of texts so far, kept as it grows (summing it per item is quadratic)
    stack = deque(v for k, v in args.items() if k not in PATH_KEYS and k not in _VERB_KEYS)
    while stack and size < _MEMORY_TEXT_LIMIT:
        item = stack.popleft()
        if isinstance(item, str):
            texts.append(item)
            size += len(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    text = "\n".join(t for t in texts if t.strip())
    return ("write_file", {"path": AGENT_MEMORY, "content": text}) if text else None


def _is_canonical(tool: str, shape: tuple[str, ...], args: Any) -> bool:
    """Whether every field of the canonical shape is a string (on every decision's path: no ABC
    check, a ``get`` lookup per field)."""
    get = getattr(args, "get", None)
    if get is None:
        return False
    for name in shape:
        if get(name).__class__ is not str:
            return False
    return not (tool == "shell" and args["command"].startswith(_PATCH_BEGIN))


def _read(tool: str, args: Mapping[str, Any], depth: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each canonical call the arguments describe (see the module docstring for the order)."""
    nested = _nested_call(args)
    if nested is not None and depth < _MAX_NESTING:
        name, inner = nested
        yield name, inner
        yield from _read(name, inner, depth + 1)
        return
    wrapped = _wrapped(args)
    if wrapped is not None and depth < _MAX_NESTING:
        if tool not in CANONICAL_TOOLS and not _OWN_ARGUMENT_KEYS.isdisjoint(wrapped):
            # the same tool with its arguments unwrapped (Neon's tools take ``{params: {sql, ...}}``):
            # the rules that read a tool's own SQL argument (a query tool's ``sql``) see it
            yield tool, dict(wrapped)
        yield from _read(tool, wrapped, depth + 1)
        return
    statements = _string_list(args, _SQL_LIST_KEYS)
    if statements and tool not in CANONICAL_TOOLS:
        # a transaction given as a list of statements is the SQL text of all of them, in order
        rest = {key: value for key, value in args.items() if key not in _SQL_LIST_KEYS}
        yield tool, {**rest, "sql": ";\n".join(statements)}
    for line in cli_lines(tool, args):
        # a program behind a schema (cli_views): judged as the line it runs, and by its arguments
        yield "shell", {"command": line}
    yield from repository_views(tool, args)
    manifest = manifest_text(args)
    if manifest is not None:
        yield "write_file", {"path": "kubernetes-manifest.yaml", "content": manifest}
        for line in manifest_commands(manifest):
            yield "shell", {"command": line}
    yield from _scheduled_tasks(args)
    formatted = _formatted_file(args)
    if formatted is not None:
        yield formatted
        return
    words = _words_of(tool, args)
    patch = _patch_text(args)
    if patch is not None:
        yield "apply_patch", {"patch": patch, "paths": patch_paths(patch)}
        yield from _patch_removals(patch)
        return
    path = _joined_path(args) or _first_string(args, PATH_KEYS)
    if path and _WEB_URL.match(path) and _first_string(args, _CONTENT_KEYS) is None:
        # a "path" that is a URL (desktop-commander's read_file {path, isUrl}) is fetched
        yield from _fetches({**args, "url": path})
        return
    searched = name_search_target(tool, args) if path else None
    if searched is not None:
        path = searched  # a search by name lists what matches its pattern under the folder
    paths = [path] if path else []
    written = _written_files(args)
    yield from written
    if path and (not words & _READ_WORDS or words & _WRITE_WORDS):
        content = _first_string(args, _CONTENT_KEYS)
        new_text, old_text = _replacement(args)
        if content is None and new_text is None and words & _WRITE_WORDS:
            # an editing tool handed the code it inserts, not a file's text or a replacement
            # (Copilot's insert_edit_into_file {filePath, code, explanation}): that code is written
            new_text = _first_string(args, _CODE_KEYS)
        if content is not None and not any(key in args for key in _POSITION_KEYS):
            yield "write_file", {"path": path, "content": content}
            return
        if content is not None or new_text is not None:
            new = "\n".join(part for part in (new_text, content) if part is not None)
            yield "edit_file", {"path": path, "old_string": old_text or "", "new_string": new}
            return
    moved = _moved(args)
    if moved is not None:
        source, destination = moved
        verb = "cp -R" if words & _COPY_WORDS else "mv"
        yield "shell", {"command": f"{verb} -- {shlex.quote(source)} {shlex.quote(destination)}"}
        return
    command = _command_line(args)
    if command is not None and not (path and _is_sub_command(command)):
        # beside a path, `command: create` is an editor's sub-command; any other command line is
        # one, whatever else the call carries (Kiro's executeBash {command, path})
        yield "shell", {"command": command}
        return
    yield from _fetches(args, _name_words(tool))
    message = _message(args)
    if message is not None:
        yield "send_message", message
    if not written:
        paths += _string_list(args, PATH_LIST_KEYS) + _listed_paths(args)
    for each in paths:
        if words & _DELETE_WORDS:
            yield "shell", {"command": f"rm -rf -- {shlex.quote(each)}"}
        elif words & _CREATE_WORDS and words & _FOLDER_WORDS:
            yield "shell", {"command": f"mkdir -p -- {shlex.quote(each)}"}
        elif words & _LIST_WORDS:
            yield "list_dir", {"path": each}
        elif words & _WRITE_WORDS:
            yield "apply_patch", {"patch": "", "paths": [each]}
        else:
            yield "read_file", {"path": each}


_TASK_SUFFIXES: Final = (".ipynb", ".py", ".sql", ".scala", ".r", ".R", ".yml", ".yaml")


def _scheduled_tasks(args: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """A notebook, Airflow DAG or dbt project written or edited: the commands and SQL it will run
    are judged as if run (cli_views.scheduled_task_texts; probe19). SQL becomes a call with a
    ``sql`` argument, which the database pack reads as a query tool's."""
    path = _first_string(args, PATH_KEYS)
    if not path or not path.endswith(_TASK_SUFFIXES):
        return
    text = "\n".join(t for t in (_first_string(args, _CONTENT_KEYS), _replacement(args)[0]) if t)
    for kind, value in scheduled_task_texts(path, text) if text else ():
        yield ("shell", {"command": value}) if kind == "shell" else ("scheduled_sql", {"sql": value})


def _patch_removals(patch: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """A patch's deletions and moves as the ``rm``/``mv`` they are: the patch rules read the text
    a patch writes, the shell rules what removing or moving a path destroys."""
    if "*** Delete File:" not in patch and "*** Move to:" not in patch:
        return
    moving: str | None = None
    for line in patch.splitlines():
        if line.startswith("*** Delete File: "):
            yield "shell", {"command": f"rm -f -- {shlex.quote(line[17:].strip())}"}
        elif line.startswith("*** Update File: "):
            moving = line[17:].strip()
        elif line.startswith("*** Move to: ") and moving:
            yield "shell", {"command": f"mv -- {shlex.quote(moving)} {shlex.quote(line[13:].strip())}"}


_FORMATTED_FILE_KEY: Final = "formatted_file"
_FORMATTED_UPDATE_KEY: Final = "formatted_file_update"
_FORMATTED_NEW: Final = lazy_compile(r"NEW <<<<\n(.*?)\n?>>>> NEW", re.DOTALL)
_FORMATTED_OLD: Final = lazy_compile(r"OLD <<<<\n(.*?)\n?>>>> OLD", re.DOTALL)


def _formatted_file(args: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """LangChain's GitHub toolkit: ``create_file {formatted_file: "PATH\\n\\nTEXT"}`` writes TEXT
    to PATH, ``update_file {formatted_file_update: "PATH\\nOLD <<<<...>>>> OLD\\nNEW <<<<...>>>>
    NEW"}`` replaces the old text with the new (probe21)."""
    created = args.get(_FORMATTED_FILE_KEY)
    if isinstance(created, str) and "\n" in created:
        path, _, text = created.partition("\n")
        if path.strip():
            return "write_file", {"path": path.strip(), "content": text.lstrip("\n")}
    updated = args.get(_FORMATTED_UPDATE_KEY)
    if isinstance(updated, str) and "\n" in updated:
        path, _, rest = updated.partition("\n")
        new, old = _FORMATTED_NEW.search(rest), _FORMATTED_OLD.search(rest)
        if path.strip() and new is not None:
            return "edit_file", {
                "path": path.strip(),
                "old_string": old.group(1) if old else "",
                "new_string": new.group(1),
            }
    return None


def _joined_path(args: Mapping[str, Any]) -> str | None:
    """A file named by a folder and a name apart (``{directory: /home/dev, filename: .bashrc}``):
    the path they make; None unless both are there and the name is not a path of its own."""
    name = _first_string(args, _NAME_KEYS)
    if not name or name.startswith(("/", "~")):
        return None
    folder = _first_string(args, _FOLDER_KEYS)
    if not folder:
        return None
    return f"{folder.rstrip('/')}/{name}" if folder.strip("/") else f"/{name}"


def _is_sub_command(command: str) -> bool:
    """``create``, ``str_replace``, ``view``: one word of what an editor tool does to its path."""
    words = identifier_words(command)
    return bool(words) and " " not in command.strip() and words <= _SUB_COMMAND_WORDS


def _listed_paths(args: Mapping[str, Any]) -> list[str]:
    """The paths of a list of operations (Amazon Q's fs_read ``operations: [{mode, path}]``)."""
    found: list[str] = []
    for key in _OPERATION_LIST_KEYS:
        items = args.get(key)
        for item in items if isinstance(items, list | tuple) else ():
            path = _first_string(item, PATH_KEYS) if isinstance(item, Mapping) else None
            if path:
                found.append(path)
    return found


def _wrapped(args: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The object a call's arguments are wrapped in, when the call carries nothing else that means
    something (OpenAI's apply_patch call: ``{type, operation: {type, path, diff}}``)."""
    for key in _WRAPPER_KEYS:
        inner = args.get(key)
        if isinstance(inner, Mapping) and not any(
            k in args for k in (*PATH_KEYS, *_COMMAND_KEYS, *_URL_KEYS, *_PATCH_KEYS[:1])
        ):
            return inner
    return None


def _words_of(tool: str, args: Mapping[str, Any]) -> frozenset[str]:
    """What the call says it does: its sub-command when that only reads and the name does not say
    the tool deletes, creates or copies (``str_replace_editor {command: view}`` views, whatever an
    editor may do; ``delete_directory {mode: read}`` still deletes), else its name's words and its
    sub-command's together."""
    verb = _verb_words(args)
    name = _name_words(tool)
    if (
        verb & _READ_WORDS
        and not verb & (_WRITE_WORDS | _DELETE_WORDS | _CREATE_WORDS | _COPY_WORDS)
        and not name & (_DELETE_WORDS | _CREATE_WORDS | _COPY_WORDS)
    ):
        return verb
    return name | verb


def _verb_words(args: Mapping[str, Any]) -> frozenset[str]:
    """The words of a sub-command argument (``create``, ``delete_file``): one identifier, never a
    command line."""
    found: set[str] = set()
    for key in _VERB_KEYS:
        value = args.get(key)
        if (
            isinstance(value, str)
            and 0 < len(value) <= 40
            and value.replace("_", "").replace("-", "").isalnum()
        ):
            found.update(identifier_words(value))
    return frozenset(found)


def _name_words(tool: str) -> frozenset[str]:
    """The lower-case words of a tool's own name (an MCP tool's last part only: a server named
    ``file-remover`` does not make its ``read`` a delete)."""
    return identifier_words(own_name(tool))


def _first_string(args: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return None


def _string_list(args: Mapping[str, Any], keys: Sequence[str]) -> list[str]:
    found: list[str] = []
    for key in keys:
        value = args.get(key)
        if isinstance(value, list | tuple):
            found += [item for item in value if isinstance(item, str) and item]
    return found


def _patch_text(args: Mapping[str, Any]) -> str | None:
    """A patch in ``patch``/``input``/``patchText``, or in ``command`` (Codex: the patch text, or
    the argv ``["apply_patch", PATCH]``)."""
    for key in _PATCH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and (_PATCH_BEGIN in value or _UNIFIED_FILE.search(value)):
            return value
    for key in _COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, list | tuple) and value and isinstance(value[-1], str):
            value = value[-1]
        if isinstance(value, str) and value.lstrip().startswith(_PATCH_BEGIN):
            return value
    return None


def _written_files(args: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Writes of a ``files`` list of ``{path, content}`` (GitHub's push_files) or a mapping of
    file name to ``{content}`` (a gist)."""
    files = args.get("files")
    written: list[tuple[str, dict[str, Any]]] = []
    if isinstance(files, list | tuple):
        for item in files:
            if isinstance(item, Mapping):
                path, content = _first_string(item, PATH_KEYS), _first_string(item, _CONTENT_KEYS)
                if path and content is not None:
                    written.append(("write_file", {"path": path, "content": content}))
    elif isinstance(files, Mapping):
        for name, item in files.items():
            content = _first_string(item, _CONTENT_KEYS) if isinstance(item, Mapping) else None
            if isinstance(name, str) and content is not None:
                written.append(("write_file", {"path": name, "content": content}))
    return written


def _replacement(args: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(new text, old text) of an edit: its own fields, every edit or chunk of a list, or the
    replacing side of a SEARCH/REPLACE or unified diff."""
    new, old = _first_string(args, _NEW_KEYS), _first_string(args, _OLD_KEYS)
    news, olds = ([new] if new is not None else []), ([old] if old is not None else [])
    for key in _EDIT_LIST_KEYS:
        edits = args.get(key)
        for edit in edits if isinstance(edits, list | tuple) else ():
            if isinstance(edit, Mapping):
                each_new, each_old = _first_string(edit, _NEW_KEYS), _first_string(edit, _OLD_KEYS)
                news += [each_new] if each_new is not None else []
                olds += [each_old] if each_old is not None else []
    for key in _DIFF_KEYS:
        diff = args.get(key)
        if isinstance(diff, str):
            diff_new, diff_old = _diff_sides(diff)
            news.append(diff_new)
            olds.append(diff_old)
    return ("\n".join(news) if news else None), ("\n".join(olds) if olds else None)


def _diff_sides(diff: str) -> tuple[str, str]:
    """The replacing and replaced text of SEARCH/REPLACE blocks (Cline, Roo, Aider) or of a
    unified diff's ``+``/``-`` lines."""
    new: list[str] = []
    old: list[str] = []
    side = ""
    for line in diff.splitlines():
        marker = line.strip()
        if marker.endswith("SEARCH") and marker.lstrip("<-").strip() == "SEARCH":
            side = "old"
        elif marker == "=======" and side == "old":
            side = "new"
        elif marker.endswith("REPLACE") and marker.lstrip(">+").strip() == "REPLACE":
            side = ""
        elif side == "old":
            old.append(line)
        elif side == "new":
            new.append(line)
        elif line.startswith("+") and not line.startswith("+++"):
            new.append(line[1:])
        elif line.startswith("-") and not line.startswith("---"):
            old.append(line[1:])
    return "\n".join(new), "\n".join(old)


def _moved(args: Mapping[str, Any]) -> tuple[str, str] | None:
    for source_key, destination_key in _MOVE_PAIRS:
        source, destination = args.get(source_key), args.get(destination_key)
        if isinstance(source, str) and isinstance(destination, str) and source and destination:
            return source, destination
    return None


def _command_line(args: Mapping[str, Any]) -> str | None:
    """A command line, or an argv list joined with shell quoting (what the hooks show)."""
    for key in _COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list | tuple) and value and all(isinstance(part, str) for part in value):
            return shlex.join(value)
    for key in _COMMAND_LIST_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list | tuple) and value and all(isinstance(line, str) for line in value):
            # one session runs them in order: a `cd` of one line holds for the next
            return "\n".join(value)
    return None


_METHOD_WORDS: Final = ("delete", "patch", "put", "post")


def _fetches(
    args: Mapping[str, Any], name_words: frozenset[str] = frozenset()
) -> Iterator[tuple[str, dict[str, Any]]]:
    """A URL argument as a fetch (a request when it carries a body, headers or another method,
    or its tool is named for another method), else each URL a prompt names (Gemini's web_fetch
    takes its URLs in the prompt)."""
    url = _first_string(args, _URL_KEYS)
    if url is None:
        # Copilot's fetch_webpage {urls: [...]}: each URL of the list is fetched alike
        listed = _string_list(args, _URL_LIST_KEYS)
        if listed:
            for each in listed:
                yield from _fetches(
                    {**{k: v for k, v in args.items() if k not in _URL_LIST_KEYS}, "url": each},
                    name_words,
                )
            return
    if url is not None and url[:7].lower() == "file://":
        yield "read_file", {"path": url[7:]}
        return
    if url is not None and _WEB_URL.match(url):
        method = args.get("method")
        if not isinstance(method, str) and name_words:
            # a tool named for its method (LangChain's requests_patch, Semantic Kernel's
            # HttpPlugin-DeleteAsync, LlamaIndex's post_request) sends that method
            method = next((m.upper() for m in _METHOD_WORDS if m in name_words), None)
        body = {key: args[key] for key in _BODY_KEYS if key in args}
        headers = args.get("headers")
        if body or headers or (isinstance(method, str) and method.upper() not in ("GET", "HEAD")):
            # Headers travel with a GET too (a bearer token to another host is sent as surely).
            default = "POST" if body else "GET"
            request: dict[str, Any] = {"url": url, "method": method if isinstance(method, str) else default}
            request.update(body)
            if headers:
                request["headers"] = headers
            yield "http_request", request
        else:
            yield "web_fetch", {"url": url}
        yield from _embedded_commands(args)
        return
    for key in _PROMPT_KEYS:
        prompt = args.get(key)
        if isinstance(prompt, str):
            for found in _URL_IN_TEXT.findall(prompt):
                yield "web_fetch", {"url": found.rstrip(".,;:!?"), "prompt": prompt}
    for key in _CODE_KEYS:
        code = args.get(key)
        if isinstance(code, str):
            # Code run in a browser or a sandbox goes to the URLs it names; when it also posts, it
            # may send anything it holds there.
            sends = _CODE_SENDS.search(code) is not None
            for found in _URL_IN_TEXT.findall(code):
                if sends:
                    yield "http_request", {"url": found, "method": "POST", "body": code}
                else:
                    yield "web_fetch", {"url": found}


_COMMAND_PARAMS: Final = ("command", "cmd", "exec")
_ARGUMENT_PARAMS: Final = ("args", "arguments", "argv")
_SHELLS: Final = frozenset(
    {"sh", "bash", "zsh", "dash", "ash", "ksh", "cmd", "cmd.exe", "powershell", "pwsh"}
)
_SHELL_SWITCHES: Final = frozenset({"-c", "-lc", "-ec", "/c", "/C", "-Command", "-command"})


def _embedded_commands(args: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The command lines a request asks the service it reaches to run, as the ``shell`` calls
    they are: a ``command=``/``cmd=`` query parameter with its ``args`` (a local MCP inspector's
    proxy starting a server), and a body's argv that hands a shell a script (``["sh", "-c",
    "..."]``: a Consul check, a container's command, a job's entrypoint). Whatever the service,
    what it runs is judged as the line itself."""
    url = _first_string(args, _URL_KEYS)
    if url is not None and "=" in url and any(p in url.lower() for p in _COMMAND_PARAMS):
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        command = next((query[k][0] for k in _COMMAND_PARAMS if query.get(k)), None)
        if command:
            rest = next((query[k][0] for k in _ARGUMENT_PARAMS if query.get(k)), "")
            yield "shell", {"command": f"{command} {rest}".strip()}
    stack: list[tuple[Any, int]] = [(args[key], 0) for key in _BODY_KEYS if key in args]
    seen = 0
    while stack and seen < 2000:
        item, depth = stack.pop()
        seen += 1
        if isinstance(item, Mapping):
            stack.extend((value, depth + 1) for value in item.values() if depth < 8)
        elif isinstance(item, list | tuple):
            if (
                len(item) >= 3
                and all(isinstance(word, str) for word in item[:3])
                and item[0].rsplit("/", 1)[-1] in _SHELLS
                and item[1] in _SHELL_SWITCHES
            ):
                yield "shell", {"command": shlex.join([str(word) for word in item])}
            else:
                stack.extend((value, depth + 1) for value in item if depth < 8)
        elif isinstance(item, str) and depth == 0 and item[:1] in ("{", "[") and len(item) < 100_000:
            with contextlib.suppress(ValueError):
                stack.append((json.loads(item), 1))


def _message(args: Mapping[str, Any]) -> dict[str, Any] | None:
    channel, text = _first_string(args, _CHANNEL_KEYS), _first_string(args, _TEXT_KEYS)
    if channel is None and text is not None:
        listed = _string_list(args, _CHANNEL_KEYS)
        channel = ", ".join(listed) if listed else None
    if channel is None or text is None:
        return None
    return {"channel": channel, "text": text}


def _nested_call(args: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The call a call carries (Cline's ``use_mcp_tool {server_name, tool_name, arguments}``), its
    arguments parsed when given as JSON text, named as an MCP tool when a server is named."""
    name = _first_string(args, _NESTED_NAME_KEYS)
    if not name:
        return None
    for key in _NESTED_ARGS_KEYS:
        inner = args.get(key)
        if isinstance(inner, str):
            try:
                inner = json.loads(inner)
            except ValueError:
                continue
        if isinstance(inner, Mapping):
            server = _first_string(args, _NESTED_SERVER_KEYS)
            return (f"mcp__{server}__{name}" if server else name), dict(inner)
    return None


def _dedupe(calls: Iterator[tuple[str, dict[str, Any]]]) -> Iterator[tuple[str, dict[str, Any]]]:
    seen: list[tuple[str, dict[str, Any]]] = []
    for call in calls:
        if call not in seen:
            seen.append(call)
            yield call
