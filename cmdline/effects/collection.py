"""Collection the per-command readers miss because it is spelled as a loop or as another
language's text (found by the blind probe tests/corpus/probe9, read as classes):

- ``memory-access``: a shell loop over every process's environment, memory or maps (``for p in
  /proc/[0-9]*/environ; do ... < $p; done``): the loop variable, not an argument, carries the
  path, so the command readers never see it (TeamTNT's and Kinsing's credential grabbers);
- ``secret-hunt``: AppleScript driving Finder to copy the user's files somewhere (``tell
  application "Finder" to duplicate ... to folder POSIX file "/tmp/..."``): the macOS stealers'
  way past the privacy prompts a shell copy of Desktop or Documents would raise (AMOS, Banshee,
  Odyssey).
"""

from __future__ import annotations

from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["collection_line_acts"]

_EVERY_PROCESS_LOOP = lazy_compile(
    r"\bfor\s+\w+\s+in\s+[^;\n]*?/+proc/+(?:\[[^\]/]*\][*+]?|\*)[^;\s/]*/+(?:environ|mem|maps|cmdline|fd/\*)\b"
)
_FINDER_COPY = lazy_compile(
    r"(?is)tell\s+application\s+[\"']?(?:Finder|System Events)[\"']?.{0,400}?\b(?:duplicate|copy|move)\b"
    r".{0,400}?\bto\s+(?:folder\s+)?(?:POSIX\s+file|alias|folder|disk)\b"
)


def collection_line_acts(line: str, commands: list[list[str]]) -> Iterator[Effect]:
    """The effects above for one line and the commands the reader found in it."""
    if "/proc" in line:
        found = _EVERY_PROCESS_LOOP.search(line)
        if found is not None:
            yield _fx(
                "memory-access", "loops over every process's environment or memory", found.group(0)[-60:]
            )
    for argv in commands:
        if argv[:1] == ["osascript"]:
            script = "\n".join(a for a in argv[1:] if not a.startswith("-") or " " in a)
            if _FINDER_COPY.search(script):
                yield _fx("secret-hunt", "drives Finder to copy the user's files", script[:80])
                return
