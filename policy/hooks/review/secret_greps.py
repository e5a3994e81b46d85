"""Claude Code's ``Grep`` in ``content`` mode, refused before it prints a secret.

Grep's matching lines reach the model raw, like every built-in tool's output (see
:mod:`.secret_reads`). So before it runs, the gateway does the search itself, within bounds: the
files Grep would read (``path``, default the working directory; ``glob``; hidden folders skipped,
as ripgrep does), the lines that match ``pattern`` with the context Grep would print (``-A``,
``-B``, ``-C``), reviewed by the policy's own post-execute rules as if they were the output. If
the review would redact or withhold something, the call is denied with a message that names what
and how to search instead (Bash, whose output the gateway redacts; or ``files_with_matches``).

Other modes print only file names or counts, and pass. A search too big for the bounds passes
too: what it prints then is reported after the fact, never claimed withheld.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Iterator, Mapping
from typing import Final

from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.hooks.review.output_review import review_chunk
from dsh_policy.policy.hooks.review.secret_files import MAX_SCAN_BYTES, SecretFile, resolve_path, text_head

MAX_GREP_FILES: Final[int] = 200  # files searched per call, at most
MAX_GREP_BYTES: Final[int] = 8 * 1024 * 1024  # bytes read per call, at most
MAX_CONTEXT: Final[int] = 50  # context lines honoured around a match


def grep_refusal(
    policy: Policy, event: ToolCallEvent, args: Mapping[str, object], cwd: str | None
) -> str | None:
    """Why a content-mode Grep must not run (its matches hold a secret policy redacts), or None."""
    if args.get("output_mode") != "content":
        return None
    pattern = args.get("pattern")
    root = resolve_path(str(args.get("path") or "."), cwd)
    if not isinstance(pattern, str) or root is None:
        return None
    matcher = _compile(pattern, ignore_case=bool(args.get("-i")), multiline=bool(args.get("multiline")))
    context = _context(args)
    given_glob = args.get("glob")
    file_glob = given_glob if isinstance(given_glob, str) else None
    budget = MAX_GREP_BYTES
    for path in _files(root, file_glob):
        head = text_head(path, min(MAX_SCAN_BYTES, budget))
        if head is None:
            continue
        budget -= len(head)
        shown = _matching_text(head, matcher, context)
        if shown:
            reviewed, _ = review_chunk(policy, event, shown)
            if reviewed.action != "pass":
                return _message(SecretFile(path, reviewed.types, reviewed.action), pattern, root)
        if budget <= 0:
            return None
    return None


def _compile(pattern: str, *, ignore_case: bool, multiline: bool) -> re.Pattern[str] | None:
    """Python's reading of the pattern (ripgrep's syntax is close for ordinary patterns); None when
    Python cannot read it, and then every line of a file counts as shown."""
    flags = (re.IGNORECASE if ignore_case else 0) | (re.DOTALL | re.MULTILINE if multiline else 0)
    try:
        return re.compile(pattern, flags)
    except (re.error, RecursionError, OverflowError):
        return None


def _context(args: Mapping[str, object]) -> tuple[int, int]:
    def number(key: str) -> int:
        value = args.get(key)
        return (
            min(max(value, 0), MAX_CONTEXT) if isinstance(value, int) and not isinstance(value, bool) else 0
        )

    around = number("-C")
    return max(number("-B"), around), max(number("-A"), around)


def _files(root: str, file_glob: str | None) -> Iterator[str]:
    """The regular files Grep would search under ``root``, at most :data:`MAX_GREP_FILES`."""
    if os.path.isfile(root):
        yield root
        return
    count = 0
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            if file_glob and not (fnmatch.fnmatch(name, file_glob) or fnmatch.fnmatch(relative, file_glob)):
                continue
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            yield path
            count += 1
            if count >= MAX_GREP_FILES:
                return


def _matching_text(text: str, matcher: re.Pattern[str] | None, context: tuple[int, int]) -> str:
    """The lines Grep would print: every match with its context (all of it if the pattern could
    not be read)."""
    if matcher is None:
        return text
    lines = text.splitlines()
    before, after = context
    keep: set[int] = set()
    if matcher.flags & re.DOTALL:  # multiline: keep the lines each match spans
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)
        for match in matcher.finditer(text):
            first = _line_of(starts, match.start())
            last = _line_of(starts, max(match.end() - 1, match.start()))
            keep.update(range(max(first - before, 0), min(last + after, len(lines) - 1) + 1))
    else:
        for index, line in enumerate(lines):
            if matcher.search(line):
                keep.update(range(max(index - before, 0), min(index + after, len(lines) - 1) + 1))
    return "\n".join(lines[index] for index in sorted(keep))


def _line_of(starts: list[int], offset: int) -> int:
    low, high = 0, len(starts) - 1
    while low < high:  # the last line start at or before offset
        middle = (low + high + 1) // 2
        if starts[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    return low


def _message(found: SecretFile, pattern: str, root: str) -> str:
    what = ", ".join(found.types) if found.types else "secret"
    verb = "would withhold" if found.action == "block" else "redacts"
    return (
        f"dsh-policy refused this Grep: its matches in {found.path} hold {what} material that policy "
        f"{verb}, and Claude Code passes Grep's output to the model unreviewed. Search with Bash "
        f"instead (for example `grep -rn {shlex.quote(pattern)} {shlex.quote(root)}`): dsh-policy "
        "passes that output through its redactor. Or ask Grep for file names only "
        '(output_mode "files_with_matches").'
    )
