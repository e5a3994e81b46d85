"""Contents destroyed without a delete the other readers know: files emptied or overwritten in
place, and the Windows shells' wipes of a home folder (Shai-Hulud 2.0's fallback ran ``del /S``
and ``cipher /W`` over ``%USERPROFILE%``), read as the ``erase-contents`` effect.

- ``truncate -s 0`` (or ``--size=0``) over files fed by ``find -exec`` or ``xargs``, or over a
  glob: every matched file emptied;
- ``dd`` writing random or zero bytes into an existing file (``conv=notrunc``) or into git's
  object store: the file's contents overwritten, the repository's history corrupted;
- PowerShell's ``Remove-Item``/``rm``/``ri`` given a home folder (``$env:USERPROFILE``,
  ``$HOME``, ``~``, ``C:\\Users\\NAME``) recursively, or fed by a recursive ``Get-ChildItem`` of
  one; ``cipher /W`` over a home (free space wiped so deleted files cannot be recovered).
  Windows paths are read as Windows reads them: the POSIX reading takes the backslashes of an
  unquoted ``C:\\Users\\bob`` for escapes (``C:Usersbob``, which could be any depth), so a line
  with a backslash is also split here the way cmd and PowerShell split it (commands at ``|``,
  ``&``, ``&&``, ``||``, ``;``, words at blanks and quotes, backslashes kept), and so is the text
  a ``cmd /c`` or ``powershell -Command`` runs; the commands found are judged the same way.

Creating a disk image (``dd if=/dev/zero of=test.img``) and emptying one log file stay allowed.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["overwrite_acts", "powershell_cradles"]

_HOME = lazy_compile(
    r"(?i)^[\"']?(?:\$env:(?:USERPROFILE|HOMEPATH|HOME)|%USERPROFILE%|%HOMEPATH%|\$HOME|\$\{HOME\}|~"
    r"|[A-Z]:\\+Users\\+[^\\\"']+|/+home/+[^/\"']+|/+Users/+[^/\"']+)[\\/]*\*?[\"']?$"
)
_WINDOWS_SHELLS = frozenset({"cmd", "cmd.exe", "powershell", "powershell.exe", "pwsh", "pwsh.exe"})
_BODY_SWITCH = lazy_compile(r"(?i)^(?:/[ck]|-c(?:o(?:m(?:m(?:a(?:n(?:d)?)?)?)?)?)?)$")
_WINDOWS_SEPARATORS = lazy_compile(r"\s*(?:&&|\|\||[|&;])\s*")
_WINDOWS_WORD = lazy_compile(r'"[^"]*"|\'[^\']*\'|[^\s"\']+')
_REMOVERS = frozenset({"remove-item", "ri", "rm", "del", "erase", "rd", "rmdir", "rmdir.exe"})
_RECURSIVE = lazy_compile(r"(?i)^(?:-r(?:ecurse)?|/s)$")


def _truncate(argv: list[str], fed: bool) -> Iterator[Effect]:
    size = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-s", "--size")), None)
    size = size or next((a.split("=", 1)[1] for a in argv if a.startswith("--size=")), None)
    size = size or next((a[2:] for a in argv if a.startswith("-s") and len(a) > 2), None)
    operands = [a for a in argv[1:] if not a.startswith("-") and a != size]
    if size in ("0", "0K", "0k") and (fed or any("*" in a for a in operands) or len(operands) > 3):
        yield _fx("erase-contents", "truncate empties every file it is given", " ".join(operands[:3]))


def _dd(argv: list[str]) -> Iterator[Effect]:
    options = dict(a.split("=", 1) for a in argv[1:] if "=" in a)
    source, target = options.get("if", ""), options.get("of", "")
    if not target or target.startswith("/dev/"):
        return
    noise = re.match(r"^/dev/+(?:u?random|zero)$", source) is not None
    into_git = re.search(r"(?:^|/)\.git/+(?:objects|refs|index$)", target) is not None
    if (noise and "notrunc" in options.get("conv", "")) or into_git:
        yield _fx("erase-contents", "dd overwrites a file's contents in place", target)


def _windows_split(text: str) -> list[list[str]]:
    """``text`` split the way cmd and PowerShell split it: commands at ``|``, ``&``, ``&&``,
    ``||``, ``;``, words at blanks and quotes (dropped), backslashes kept as path separators."""
    found: list[list[str]] = []
    for part in _WINDOWS_SEPARATORS.split(text):
        words = [w.strip("\"'") for w in _WINDOWS_WORD.findall(part)]
        if words:
            found.append(words)
    return found


def _windows_commands(line: str, commands: list[list[str]]) -> list[list[str]]:
    """The line's commands as Windows reads them (only when a backslash makes the readings
    differ) and the commands inside ``cmd /c TEXT`` and ``powershell -Command TEXT``."""
    found = _windows_split(line) if "\\" in line else []
    for argv in [*commands, *found]:
        if argv and argv[0].lower() in _WINDOWS_SHELLS:
            body = next(
                (" ".join(argv[i + 1 :]) for i, a in enumerate(argv[1:], 1) if _BODY_SWITCH.match(a)), ""
            )
            found.extend(_windows_split(body))
    return found


def overwrite_acts(commands: list[list[str]], line: str = "") -> Iterator[Effect]:
    """The effects above for a line's commands (find -exec and xargs already unwrapped)."""
    commands = [*commands, *_windows_commands(line, commands)]
    programs = {argv[0].lower() for argv in commands if argv}
    fed = bool(programs & {"find", "xargs", "fd", "parallel"})
    listed_home = any(
        argv[0].lower() in ("get-childitem", "gci", "ls", "dir")
        and any(_HOME.match(a) for a in argv[1:])
        and any(a.lower() in ("-recurse", "-r") for a in argv[1:])
        for argv in commands
        if argv
    )
    for argv in commands:
        if not argv:
            continue
        tool = argv[0].lower()
        if tool == "truncate":
            yield from _truncate(argv, fed)
        elif tool == "dd":
            yield from _dd(argv)
        elif tool in _REMOVERS and (
            (any(_HOME.match(a) for a in argv[1:]) and any(_RECURSIVE.match(a) for a in argv[1:]))
            or (listed_home and tool in ("remove-item", "ri", "rm", "del"))
        ):
            yield _fx("erase-contents", f"{argv[0]} removes a home folder's files", " ".join(argv[1:3]))
        elif tool in ("cipher", "cipher.exe") and any(
            a.lower().startswith("/w:") and _HOME.match(a[3:]) for a in argv[1:]
        ):
            yield _fx("erase-contents", "cipher /W wipes a home folder's free space", " ".join(argv[1:2]))


# PowerShell's download cradles (ATT&CK T1059.001 with T1105): text fetched by a cmdlet or .NET's
# WebClient and handed to Invoke-Expression, a script block or a started process in the same
# script, in the spelling of `-Command TEXT` or of `-EncodedCommand BASE64` (UTF-16LE, decoded).
_PS_FETCH = lazy_compile(
    r"(?i)\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod|wget|curl|Start-BitsTransfer)\b"
    r"[^|;\n]*?(https?://[^\s'\")]+)"
    r"|\.Download(?:String|Data|File)(?:Async)?\s*\(\s*['\"]?(https?://[^\s'\")]+)"
)
_PS_RUN = lazy_compile(
    r"(?i)\b(?:iex|Invoke-Expression|Invoke-Command|Start-Process|saps)\b|\[ScriptBlock\]::Create|\|\s*&|^\s*&\s*\("
)


_PS_RUNNERS = frozenset({"iex", "invoke-expression", "icm", "invoke-command"})


def _powershell_script(argv: list[str]) -> str | None:
    """The script a powershell/pwsh command line runs (``-Command`` text, a decoded
    ``-EncodedCommand``), or None when it runs none given on the line."""
    for i, arg in enumerate(argv[1:], 1):
        if _BODY_SWITCH.match(arg):
            return " ".join(argv[i + 1 :])
        # -EncodedCommand, by any prefix PowerShell accepts (-e, -enc, -encodedc, ...), or -ec
        lowered = arg.lower()
        encoded = lowered == "-ec" or (len(lowered) > 1 and "-encodedcommand".startswith(lowered))
        if encoded and i + 1 < len(argv):
            try:
                return base64.b64decode(argv[i + 1], validate=True).decode("utf-16-le", "replace")
            except (ValueError, binascii.Error):
                return ""
    return None


def powershell_cradles(commands: list[list[str]], line: str = "") -> Iterator[Effect]:
    """A PowerShell script on the line that downloads text and runs it (``iex (iwr URL)``,
    ``irm URL | iex``, ``IEX (New-Object Net.WebClient).DownloadString(URL)``): code from that URL,
    judged as code installed from outside the verified channel (kind ``source``). A download saved
    to a file, or a script that runs only what it shows, is not this. The scripts run through
    ``cmd /c`` are read too."""
    for argv in [*commands, *_windows_commands(line, commands)]:
        if not argv or argv[0].lower() not in ("powershell", "powershell.exe", "pwsh", "pwsh.exe"):
            continue
        script = _powershell_script(argv)
        if not script:
            continue
        fetched = _PS_FETCH.search(script)
        if fetched and _PS_RUN.search(script):
            url = fetched.group(1) or fetched.group(2) or ""
            yield _fx("source", "PowerShell runs text it downloads", url)
            return
    # the line is itself PowerShell (an agent whose shell is PowerShell types the cradle bare)
    if line and any(argv and argv[0].lower() in _PS_RUNNERS for argv in commands):
        fetched = _PS_FETCH.search(line)
        if fetched and _PS_RUN.search(line):
            yield _fx(
                "source", "PowerShell runs text it downloads", fetched.group(1) or fetched.group(2) or ""
            )
