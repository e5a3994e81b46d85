"""Effects of interpreter code reached through library calls rather than shell-outs: files copied
or moved (read the source, write the destination), permissions and owners changed (a write of the
file's metadata), every file under a folder deleted or rewritten one by one in a walk, processes
killed by pid or by name, and file systems mounted through libc.

The generic tables (:mod:`~dsh_policy.cmdline.interpreters.calls`) see ``shutil.rmtree(x)`` and
``open(x)``; the same effects spelled ``shutil.copy("/etc/shadow", ...)``, ``os.chmod("/etc/passwd",
0o666)``, ``for r, _, fs in os.walk("/srv"): os.unlink(join(r, f))``, ``os.kill(1, SIGKILL)`` or
``libc.mount(b"/dev/sda1", ...)`` were invisible. They are reported in the shapes the rules
already judge: ``read``/``write``/``delete-tree`` effects and the argv a shell would have run
(``kill -9 1``, ``pkill -9 sshd``, ``mount /dev/sda1 /mnt``), so a new spelling of an old effect
meets the old rule.
"""

from __future__ import annotations

import re

from dsh_policy.cmdline.interpreters.model import UNKNOWN, CodeAnalysis
from dsh_policy.cmdline.interpreters.reader import CodeReader
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["library_effects"]

# Copies and moves: (languages, head). The first argument is read, the second written; a move also
# deletes its source.
_COPIES: tuple[tuple[frozenset[str], re.Pattern[str], bool], ...] = tuple(
    (frozenset(langs.split()), lazy_compile(head), moves)
    for langs, head, moves in (
        ("python", r"\bshutil\.(?:copy|copy2|copyfile|copytree)\s*\(", False),
        ("python", r"\b(?:shutil\.move|os\.rename|os\.renames|os\.replace)\s*\(", True),
        ("javascript", r"\b(?:fs\.)?(?:promises\.)?(?:copyFileSync|copyFile|cpSync|cp)\s*\(", False),
        ("javascript", r"\b(?:fs\.)?(?:promises\.)?(?:renameSync|rename)\s*\(", True),
        ("ruby", r"\bFileUtils\.(?:cp_r|copy_entry|copy|cp|install)\b\s*\(?", False),
        ("ruby", r"\b(?:FileUtils\.(?:mv|move)|File\.rename)\b\s*\(?", True),
        ("perl", r"\bFile::Copy::copy\s*\(|(?<![\w:$>])copy\s*\(", False),
        ("perl", r"\bFile::Copy::move\s*\(|(?<![\w:$>])(?:move|rename)\s*\(", True),
        ("php", r"(?<![\w$>])copy\s*\(", False),
        ("php", r"(?<![\w$>])rename\s*\(", True),
        ("lua", r"\bos\.rename\s*\(", True),
    )
)  # fmt: skip

# Permission and owner changes: (languages, head, which argument names the file).
_MODES: tuple[tuple[frozenset[str], re.Pattern[str], str], ...] = tuple(
    (frozenset(langs.split()), lazy_compile(head), which)
    for langs, head, which in (
        ("python", r"\bos\.(?:chmod|lchmod|chown|lchown|chflags)\s*\(", "first"),
        ("python", r"\b(?:pathlib\.)?Path\s*\((?=[^()]*\)\s*\.(?:chmod|lchmod)\s*\()", "first"),
        ("javascript", r"\b(?:fs\.)?(?:promises\.)?(?:chmodSync|chmod|chownSync|chown|lchown(?:Sync)?)\s*\(",
         "first"),
        ("ruby", r"\bFileUtils\.(?:chmod|chmod_R|chown|chown_R)\s*\(?", "last"),
        ("ruby", r"\bFile\.(?:chmod|chown|lchmod|lchown)\s*\(?", "last"),
        ("perl php", r"(?<![\w$>])(?:chmod|chown|chgrp)\s*\(?", "auto"),
    )
)  # fmt: skip

# Walks over every file under a folder: (languages, head). The root is the first argument (for a
# glob, the part before its first wildcard).
_WALKS: tuple[tuple[frozenset[str], re.Pattern[str]], ...] = tuple(
    (frozenset(langs.split()), lazy_compile(head))
    for langs, head in (
        ("python", r"\bos\.(?:walk|fwalk)\s*\(|\bglob\.i?glob\s*\((?=[^)]*\*\*)"),
        ("python", r"\b(?:pathlib\.)?Path\s*\((?=[^()]*\)\s*\.(?:rglob|walk)\s*\()"),
        ("javascript", r"\b(?:fs\.)?(?:promises\.)?readdir(?:Sync)?\s*\((?=[^)]*recursive\s*:\s*true)"),
        ("ruby", r"\bFind\.find\s*\(?|\bDir\.glob\s*\((?=[^)]*\*\*)|\bDir\[(?=[^\]]*\*\*)"),
        ("perl", r"\bfind\s*\(\s*(?:\{[^}]*\}|\\&\w+|sub\s*\{[^}]*\})\s*,"),
    )
)  # fmt: skip
# A file opened for writing, or written, through a name the reader cannot resolve (a walk's file).
_UNRESOLVED_WRITE = lazy_compile(
    r"""(?:(?<![.\w])open|io\.open)\s*\(\s*[A-Za-z_][\w.\[\]]*(?:\([^()]*\))?(?:\s*\.\.\s*['"][^'"]*['"])?\s*,\s*['"][^'"]*[wa]"""
    r"""|\b(?:write_text|write_bytes)\s*\(|\b(?:writeFileSync|writeFile)\s*\(\s*[A-Za-z_]"""
)
# A file deleted through a name the reader cannot resolve: pathlib's ``p.unlink()`` on a walk's
# path, Ruby's ``File.delete(f)``.
_UNRESOLVED_DELETE = lazy_compile(
    r"(?<![\w.])(?!Path\b)[a-z_]\w*\.(?:unlink|rmdir)\s*\(\s*(?:missing_ok\s*=\s*\w+\s*)?\)"
    r"|\bFile\.(?:delete|unlink)\s*\(?\s*[a-z_]\w*\s*\)?"
)
_FIND_ROOT = lazy_compile(r"^\s*(?:\S*/)?find\s+(?:-[HLP]\s+)*((?:[^\s-]|-(?=\S*/))\S*)")
_KILL_PID = lazy_compile(r"\bos\.(?:kill|killpg)\s*\(\s*(-?\d+)\s*[,)]")
_PROCESS_SWEEP = lazy_compile(r"\bpsutil\.(?:process_iter|pids)\s*\(")
_PROCESS_KILL = lazy_compile(r"\.(?:kill|terminate|send_signal)\s*\(")
_NAMED = lazy_compile(r"""\.(?:name|exe|cmdline)\s*\(\s*\)\s*(?:==|in|not\s+in)\s*""")
_STRINGS = lazy_compile(r"""(['"])([^'"\n]{1,64})\1""")
_LIBC_MOUNT = lazy_compile(r"\.(?:mount|umount2?)\s*\(")


def library_effects(reader: CodeReader, language: str, out: CodeAnalysis) -> None:
    """Add the effects of ``reader``'s code's library calls to ``out`` (see the module doc)."""
    code = reader.code
    _copies(reader, language, out)
    _modes(reader, language, out)
    _walked(reader, language, code, out)
    if language == "python":
        _kills(code, out)
        if "ctypes" in code:
            _mounts(reader, code, out)


def _arguments(reader: CodeReader, end: int) -> list[str | list[str] | None]:
    """The arguments of the call whose head ends at ``end``, with or without parentheses (Perl's
    and Ruby's ``chmod 0755, "/x";``)."""
    code = reader.code
    start = end
    if code[start - 1 : start] != "(":
        start = reader.skip_blanks(start)
        if code[start : start + 1] != "(":
            return _bare_arguments(reader, start)
        start += 1
    values, _ = reader.arguments(start)
    return values


def _bare_arguments(reader: CodeReader, pos: int) -> list[str | list[str] | None]:
    values: list[str | list[str] | None] = []
    code = reader.code
    while pos < len(code) and len(values) < 8:
        value, after = reader.expression(pos)
        if after <= pos:  # a term the reader does not evaluate (a number): skip to the next comma
            comma = code.find(",", pos)
            stop = min((i for i in (code.find(";", pos), code.find("\n", pos)) if i >= 0), default=len(code))
            if comma < 0 or comma > stop:
                break
            values.append(None)
            pos = comma + 1
            continue
        values.append(value)
        pos = reader.skip_blanks(after)
        if pos < len(code) and code[pos] == ",":
            pos += 1
            continue
        break
    return values


def _copies(reader: CodeReader, language: str, out: CodeAnalysis) -> None:
    for langs, head, moves in _COPIES:
        if language not in langs:
            continue
        for match in head.finditer(reader.code):
            values = _arguments(reader, match.end())
            source = values[0] if values and isinstance(values[0], str) else UNKNOWN
            target = values[1] if len(values) > 1 and isinstance(values[1], str) else UNKNOWN
            if source != UNKNOWN:
                out.effects.append({"kind": "read", "lang": language, "target": source})
                if moves:
                    out.effects.append({"kind": "delete", "lang": language, "target": source})
            if target != UNKNOWN:
                out.effects.append({"kind": "write", "lang": language, "target": target})


def _modes(reader: CodeReader, language: str, out: CodeAnalysis) -> None:
    for langs, head, which in _MODES:
        if language not in langs:
            continue
        for match in head.finditer(reader.code):
            strings = [v for v in _arguments(reader, match.end()) if isinstance(v, str)]
            paths = [s for s in strings if "/" in s or s.startswith(("~", "$HOME", "."))]
            if which == "first":
                target = strings[0] if strings else ""
            elif which == "last":
                target = strings[-1] if strings else ""
            else:  # perl/php: the mode or owner comes first or second; the file is the path-like one
                target = paths[0] if paths else ""
            if target and target != UNKNOWN:
                out.effects.append({"kind": "write", "lang": language, "target": target})


def _walk_roots(reader: CodeReader, language: str, out: CodeAnalysis) -> list[str]:
    roots: list[str] = []
    for langs, head in _WALKS:
        if language not in langs:
            continue
        for match in head.finditer(reader.code):
            values = _arguments(reader, match.end())
            root = next((v for v in values if isinstance(v, str) and v != UNKNOWN), None)
            if root is not None:
                roots.append(_before_wildcard(root))
    for line in out.shell_lines:  # io.popen("find /srv -type f"), `find ~ -name x`: a walk through find
        found = _FIND_ROOT.match(line)
        if found:
            roots.append(found.group(1).strip("'\""))
    return [root for root in roots if root]


def _before_wildcard(pattern: str) -> str:
    parts = pattern.split("/")
    for index, part in enumerate(parts):
        if any(ch in part for ch in "*?["):
            return "/".join(parts[:index]) or ("/" if pattern.startswith("/") else "")
    return pattern


def _walked(reader: CodeReader, language: str, code: str, out: CodeAnalysis) -> None:
    """A delete or a write whose file the reader cannot name, in code that walks a folder, is
    that folder's files deleted or rewritten one by one: reported on the folder."""
    unresolved_delete = any(
        e["kind"] in ("delete", "delete-tree") and UNKNOWN in e["target"] for e in out.effects
    ) or bool(_UNRESOLVED_DELETE.search(code))
    unresolved_write = any(e["kind"] == "write" and UNKNOWN in e["target"] for e in out.effects) or bool(
        _UNRESOLVED_WRITE.search(code)
    )
    if not (unresolved_delete or unresolved_write):
        return
    for root in _walk_roots(reader, language, out):
        if unresolved_delete:
            out.effects.append({"kind": "delete-tree", "lang": language, "target": root})
        if unresolved_write:
            out.effects.append({"kind": "write", "lang": language, "target": root})


def _kills(code: str, out: CodeAnalysis) -> None:
    """``os.kill(1, 9)`` as ``kill -9 1``; psutil sweeps that kill processes chosen by name as
    ``pkill -9 NAME`` for each name compared against."""
    for match in _KILL_PID.finditer(code):
        out.argvs.append(["kill", "-9", match.group(1)])
    if _PROCESS_SWEEP.search(code) and _PROCESS_KILL.search(code):
        for named in _NAMED.finditer(code):
            segment = code[named.end() : named.end() + 200].split(")", 1)[0].split("]", 1)[0]
            for literal in _STRINGS.finditer(segment):
                out.argvs.append(["pkill", "-9", literal.group(2)])


def _mounts(reader: CodeReader, code: str, out: CodeAnalysis) -> None:
    """libc's ``mount(source, target, fstype, ...)`` reached through ctypes, as ``mount``."""
    for match in _LIBC_MOUNT.finditer(code):
        strings = [v for v in _arguments(reader, match.end()) if isinstance(v, str)]
        if match.group().startswith(".mount") and len(strings) >= 2:
            out.argvs.append(
                ["mount", "-t", strings[2], strings[0], strings[1]]
                if len(strings) > 2
                else ["mount", strings[0], strings[1]]
            )
        elif strings:
            out.argvs.append(["umount", strings[0]])
