"""Keeping secrets out of Claude Code's built-in tool output, before the tool runs.

A PostToolUse hook cannot take back what Claude Code's own tools (Bash, Read, Grep) returned: the
model sees the raw output beside the hook's message. So for Claude Code the PreToolUse answer
does the work, on calls the gateway can tell will print a secret:

- ``Read`` of a file that holds one (the policy's own post-execute review of the file, as the
  call's output, finds something to redact or withhold): denied, with a message that says so and
  how to see the rest of the file;
- ``Bash`` whose command names such a file (``cat .env``, ``grep key config.ini``, ``< creds``):
  rewritten (``updatedInput``) so that its output passes through ``dsh-policy redact-output``,
  which applies the same review to the output as it streams (:mod:`.output_review`); the model
  gets the output with secrets replaced and a notice. ``--redact-bash-output always`` rewrites
  every Bash call (secrets that no file reveals beforehand, such as ``env``, are then caught
  too), at the cost of one more process per call and of Claude Code's permission rules seeing
  the wrapped command.

- ``Grep`` in ``content`` mode whose matching lines hold one: denied (:mod:`.secret_greps`).

What this cannot see coming (a program printing a secret it fetched, a file larger than the
scanned head, a search beyond the Grep bounds) still reaches the model; the PostToolUse message
then says exactly that instead of pretending the output was withheld.
"""

from __future__ import annotations

import functools
import glob
import os
import shlex
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal, TypeAlias

from dsh_policy.cmdline.shell import ShellLineTooComplexError, shell_commands, shell_redirects
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.hooks.protocol.events import PreToolReview
from dsh_policy.policy.hooks.protocol.messages import HookVerdict
from dsh_policy.policy.hooks.protocol.vocabulary import CanonicalCall
from dsh_policy.policy.hooks.review.output_review import review_chunk
from dsh_policy.policy.hooks.review.secret_files import MAX_SCAN_BYTES, SecretFile, resolve_path, text_head
from dsh_policy.policy.hooks.review.secret_greps import grep_refusal

BashOutputMode: TypeAlias = Literal["when-secret", "always", "never"]
BASH_OUTPUT_MODES: Final[tuple[BashOutputMode, ...]] = ("when-secret", "always", "never")

MAX_FILES: Final[int] = 16  # candidate files looked at per call
_GLOB_CHARS: Final[str] = "*?["


@dataclass(frozen=True, slots=True)
class OutputFilter:
    """How to run ``dsh-policy redact-output`` for this deployment (argv before the per-call
    options: :func:`..gateway.output_filter.redact_output_argv`), and when Bash calls are routed
    through it."""

    argv: tuple[str, ...]
    mode: BashOutputMode = "when-secret"


#: Harnesses whose file reads are guarded before they run: (shell tool, file-read tool, the
#: client's name) in their own spelling. Qwen Code lets no PostToolUse answer change an output.
GUARDED_TOOLS: Final[Mapping[str, tuple[str, str, str]]] = {
    "claude-code": ("Bash", "Read", "Claude Code"),
    "qwen-code": ("run_shell_command", "read_file", "Qwen Code"),
}


def secret_reads_review(output_filter: OutputFilter | None) -> PreToolReview:
    """The review a hook hands :func:`..protocol.events.decide_hook` (in its ``SessionContext``):
    :func:`guard_secret_reads` with this deployment's output filter."""
    return functools.partial(guard_secret_reads, output_filter=output_filter)


def guard_secret_reads(
    policy: Policy,
    event: ToolCallEvent,
    call: CanonicalCall,
    verdict: HookVerdict,
    cwd: str | None,
    tool_input: dict[str, object],
    output_filter: OutputFilter | None,
) -> HookVerdict:
    """The PreToolUse verdict for a Claude Code call that policy lets through, adjusted so no
    secret it is known to print reaches the model. Other verdicts are returned unchanged."""
    tools = GUARDED_TOOLS.get(call.harness)
    if verdict.action != "pass" or tools is None:
        return verdict
    shell_tool, read_tool, client = tools
    if call.name == "read_file" and call.original_name == read_tool:
        path = call.args.get("path")
        found = _secret_file(policy, event, resolve_path(path, cwd)) if isinstance(path, str) else None
        if found is None:
            return verdict
        return replace(
            verdict, action="deny", reason=_read_refusal(found, path or found.path, client, shell_tool)
        )
    if call.name == "Grep" and call.original_name == "Grep" and call.harness == "claude-code":
        refusal = grep_refusal(policy, event, call.args, cwd)
        return verdict if refusal is None else replace(verdict, action="deny", reason=refusal)
    if call.name != "shell" or call.original_name != shell_tool:
        return verdict
    command = call.args.get("command")
    if not isinstance(command, str) or output_filter is None or output_filter.mode == "never":
        return verdict
    if output_filter.mode == "when-secret":
        found = next(
            (hit for path in files_named(command, cwd) if (hit := _secret_file(policy, event, path))), None
        )
        if found is None:
            return verdict
    rewritten = wrap_command(command, output_filter.argv, event.call_id, event.session_id)
    return replace(verdict, action="rewrite", updated_input={**tool_input, "command": rewritten})


def _read_refusal(found: SecretFile, shown: str, client: str = "Claude Code", shell: str = "Bash") -> str:
    what = ", ".join(found.types) if found.types else "secret"
    verb = "would withhold" if found.action == "block" else "redacts"
    return (
        f"dsh-policy withheld the contents of {shown}: it holds {what} material that policy {verb}, "
        f"and {client} cannot pass on a redacted copy of a file read. To see the rest of the file, "
        f"read it with {shell} (for example `cat {shlex.quote(shown)}`): dsh-policy passes that "
        "output through its redactor."
    )


def files_named(command: str, cwd: str | None) -> list[str]:
    """Existing regular files a shell line names as arguments or input redirections (globs
    expanded; relative names tried against the working directory and every ``cd`` target on the
    line), at most :data:`MAX_FILES`, in order."""
    try:
        commands = shell_commands(command)
        words = [word for argv in commands for word in argv[1:]]
        words += [r["target"] for r in shell_redirects(command) if r["op"] in ("<", "<>")]
    except (ShellLineTooComplexError, TypeError):
        return []
    bases: list[str | None] = [cwd] if cwd else [None]
    for argv in commands:
        if len(argv) > 1 and argv[0] in ("cd", "pushd") and (target := resolve_path(argv[1], cwd)):
            bases.append(target)
    found: list[str] = []
    for word in words:
        if not word or word.startswith("-") or "\0" in word:
            continue
        for base in bases:
            for path in _candidates(word, base):
                if path not in found and _is_regular_file(path):
                    found.append(path)
                if len(found) >= MAX_FILES:
                    return found
    return found


def _candidates(word: str, base: str | None) -> list[str]:
    path = resolve_path(word, base)
    if path is None:
        return []
    if any(char in word for char in _GLOB_CHARS):
        return sorted(glob.glob(path))[:MAX_FILES]
    return [path]


def _is_regular_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _secret_file(policy: Policy, event: ToolCallEvent, path: str | None) -> SecretFile | None:
    """What the policy would do to ``path``'s content as this call's output (None: nothing)."""
    if path is None or not _is_regular_file(path):
        return None
    head = text_head(path, MAX_SCAN_BYTES)
    if head is None:
        return None
    reviewed, _ = review_chunk(policy, event, head)
    if reviewed.action == "pass":
        return None
    return SecretFile(path, reviewed.types, reviewed.action)


def wrap_command(command: str, filter_argv: Sequence[str], call_id: str, session_id: str) -> str:
    """``command`` rewritten so everything it prints (stdout and stderr) streams through the
    output filter, while it still runs in the calling shell (``cd`` and exports persist, as
    Claude Code expects) and keeps its exit status.

    The original runs under ``eval`` of one single-quoted word, so no quoting inside it can
    escape the redirection; the filter reads a FIFO in a private ``mktemp -d`` folder and
    removes it once both ends are open."""
    quoted = "'" + command.replace("'", "'\\''") + "'"
    filter_words = " ".join(
        shlex.quote(word) for word in (*filter_argv, "--call", call_id, "--session", session_id)
    )
    return (
        '__dsh_d=$(mktemp -d "${TMPDIR:-/tmp}/dsh-redact.XXXXXX") && mkfifo "$__dsh_d/out" && '
        f'{{ {filter_words} --fifo "$__dsh_d/out" & }} && __dsh_f=$! && '
        f'{{ eval {quoted}\n}} >"$__dsh_d/out" 2>&1; __dsh_rc=$?; wait "$__dsh_f"; (exit $__dsh_rc)'
    )
