"""Which options of common programs write files, and where programs that unpack write: a table
read from each program's manual, so that a reader knows ``curl -oFILE``, ``wget -O FILE``,
``tar -x -C DIR`` or ``patch -d DIR`` writes without knowing any one spelling of them.

:func:`written_operands` answers for one argv: the words it writes as files, and the folders it
writes into (a whole tree: what lands there is named by an archive or a diff nobody has read).
Everything a program's table does not mention is left to the caller (a program that is not a
reader is taken to write every operand it names).

Sources: GNU tar, cpio, coreutils (``sort``, ``install``, ``ln``, ``split``), GNU patch, Info-ZIP
``unzip``, p7zip, curl, GNU Wget, aria2, yt-dlp, HTTPie, xh, GNU Stow, rsync, pip, git and
util-linux ``mount`` manuals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from dsh_policy.cmdline.programs import operands as operands_of
from dsh_policy.cmdline.programs import sed_written as _sed_written

Target = Literal["file", "folder"]

# Options whose value is written: as a file, or as a folder things are written into. Short ones
# also take their value attached (``-oFILE``), long ones after ``=`` (``--output=FILE``).
WRITE_OPTIONS: Final[dict[str, dict[str, Target]]] = {
    "curl": {
        "-o": "file",
        "--output": "file",
        "--output-dir": "folder",
        "-D": "file",
        "--dump-header": "file",
        "-c": "file",
        "--cookie-jar": "file",
        "--trace": "file",
        "--trace-ascii": "file",
        "--stderr": "file",
        "--libcurl": "file",
        "--etag-save": "file",
        "--hsts": "file",
        "--alt-svc": "file",
    },
    "wget": {
        "-O": "file",
        "--output-document": "file",
        "-P": "folder",
        "--directory-prefix": "folder",
        "-o": "file",
        "--output-file": "file",
        "-a": "file",
        "--append-output": "file",
        "--save-cookies": "file",
        "--warc-file": "file",
    },
    # find's actions that print into a file instead of stdout (GNU findutils), and bash's history
    # written or appended to a named file: both write whatever text the line chose
    "find": {"-fprint": "file", "-fprint0": "file", "-fprintf": "file", "-fls": "file"},
    "history": {"-a": "file", "-w": "file"},
    "tar": {"-C": "folder", "--directory": "folder"},
    "bsdtar": {"-C": "folder", "--directory": "folder"},
    "unzip": {"-d": "folder"},
    "cpio": {"-D": "folder", "--directory": "folder"},
    "patch": {
        "-d": "folder",
        "--directory": "folder",
        "-o": "file",
        "--output": "file",
        "-r": "file",
        "--reject-file": "file",
        "-B": "folder",
        "--prefix": "folder",
    },
    "7z": {"-o": "folder"},
    "7za": {"-o": "folder"},
    "7zr": {"-o": "folder"},
    "sort": {"-o": "file", "--output": "file"},
    "install": {"-t": "folder", "--target-directory": "folder"},
    "cp": {"-t": "folder", "--target-directory": "folder", "--backup": "file"},
    "mv": {"-t": "folder", "--target-directory": "folder"},
    "ln": {"-t": "folder", "--target-directory": "folder"},
    "rsync": {
        "--backup-dir": "folder",
        "--log-file": "file",
        "--temp-dir": "folder",
        "--partial-dir": "folder",
    },
    "pip": {
        "-t": "folder",
        "--target": "folder",
        "--prefix": "folder",
        "--root": "folder",
        "--src": "folder",
        "-d": "folder",  # pip download
        "--dest": "folder",
        "-w": "folder",  # pip wheel
        "--wheel-dir": "folder",
    },
    # Sandboxes that mount over a path (bubblewrap's two-operand options are read below).
    "bwrap": {"--tmpfs": "folder", "--dir": "folder", "--remount-ro": "folder"},
    "split": {},
    "openssl": {"-out": "file", "-keyout": "file"},
    "gpg": {"-o": "file", "--output": "file"},
    "ssh-keygen": {"-f": "file"},
    "gcc": {"-o": "file"},
    "cc": {"-o": "file"},
    "go": {"-o": "file"},
    "git": {"-o": "file", "--output": "file", "--output-directory": "folder"},
    "zip": {"-O": "file", "--output-file": "file"},
    "xz": {},
    # Downloaders: where the download lands (``aria2c -d DIR -o NAME``, ``yt-dlp -P DIR``).
    "aria2c": {
        "-d": "folder",
        "--dir": "folder",
        "-o": "file",
        "--out": "file",
        "-l": "file",
        "--log": "file",
        "--save-session": "file",
        "--save-cookies": "file",
    },
    "axel": {"-o": "file", "--output": "file"},
    "wget2": {"-O": "file", "--output-document": "file", "-P": "folder", "--directory-prefix": "folder"},
    "yt-dlp": {"-o": "file", "--output": "file", "-P": "folder", "--paths": "folder"},
    "http": {"-o": "file", "--output": "file"},
    "https": {"-o": "file", "--output": "file"},
    "xh": {"-o": "file", "--output": "file"},
    "lwp-download": {},
}
# GNU Stow options that replace or remove what is in the target folder: ``--adopt`` moves each
# target file into the package and links it back, ``-D``/``-R`` remove the links it made.
_STOW_CHANGES: Final[frozenset[str]] = frozenset({"--adopt", "-D", "--delete", "-R", "--restow"})

# Options that take a value which is not written (so the word after them is not an operand).
VALUE_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "tar": frozenset(
        {"-f", "--file", "-T", "--files-from", "-X", "--exclude-from", "-I", "--use-compress-program"}
    ),
    "bsdtar": frozenset({"-f", "--file", "-T", "-X"}),
    "unzip": frozenset({"-x"}),
    "patch": frozenset({"-i", "--input", "-p", "-F", "--fuzz", "-D", "-V", "-z", "--suffix", "-Y"}),
    "cpio": frozenset({"-F", "--file", "-H", "--format", "-E", "-I", "-O"}),
}

# Programs that unpack or apply into a folder: with no folder option they write into the one they
# are run in.
UNPACKERS: Final[frozenset[str]] = frozenset({"tar", "bsdtar", "unzip", "cpio", "7z", "7za", "7zr", "patch"})

# Programs that copy or pack whole folders they are given (their source operands are read in
# full, secrets included): ``cp -r``, ``rsync``, ``scp -r``, archivers.
TREE_COPIERS: Final[frozenset[str]] = frozenset(
    {
        "cp",
        "rsync",
        "scp",
        "tar",
        "bsdtar",
        "zip",
        "7z",
        "7za",
        "7zr",
        "cpio",
        "rclone",
        "pax",
        "ditto",
        "sftp",
        # backup tools: each packs the folders it is given, to a repository or an image
        "restic",
        "borg",
        "kopia",
        "duplicity",
        "rdiff-backup",
        "tarsnap",
        "dar",
        "mksquashfs",
        "xorriso",
        "mkisofs",
        "genisoimage",
        "afio",
    }
)

# Readers that read every file under a folder they are given, when recursive.
RECURSIVE_READERS: Final[frozenset[str]] = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "diff"})


@dataclass
class Written:
    """What one argv writes: files, and folders written into as whole trees."""

    files: list[str] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    unpacks_here: bool = False


def _option_value(
    word: str, following: str | None, options: dict[str, Target]
) -> tuple[str, Target, bool] | None:
    """``(value, target, consumed_next)`` when ``word`` is one of ``options`` (separate, attached
    or after ``=``)."""
    if word in options and following is not None:
        return following, options[word], True
    if word.startswith("--") and "=" in word:
        name, value = word.split("=", 1)
        if name in options:
            return value, options[name], False
        return None
    for name, target in options.items():
        if not name.startswith("--") and word.startswith(name) and len(word) > len(name):
            return word[len(name) :], target, False
    return None


def tar_mode(words: Sequence[str]) -> str:
    """``x``, ``c`` (create, append, update) or ``t``: from the first bundle or any mode option."""
    for index, word in enumerate(words):
        if word in ("--extract", "--get", "-x"):
            return "x"
        if word in ("--create", "--append", "--update", "--concatenate", "-c", "-r", "-u", "-A"):
            return "c"
        if word in ("--list", "-t"):
            return "t"
        bundle = (
            word[1:] if word.startswith("-") and not word.startswith("--") else (word if index == 0 else "")
        )
        for letter in bundle:
            if letter == "x":
                return "x"
            if letter in "cruA":
                return "c"
            if letter == "t":
                return "t"
    return ""


_READ_BY_CODE: Final[frozenset[str]] = frozenset(
    {
        "tar",
        "bsdtar",
        "bwrap",
        "firejail",
        "unzip",
        "cpio",
        "7z",
        "7za",
        "7zr",
        "patch",
        "stow",
        "mount",
        "umount",
    }
)
"""The programs :func:`written_operands` reads with code of their own, beside the option table."""


_SED = frozenset({"sed", "gsed"})  # their scripts' `w FILE` commands write (programs.sed_written)


def writes_operands(program: str) -> bool:
    """Whether :func:`written_operands` can find anything ``program`` (a base name) writes."""
    program = program.rsplit("/", 1)[-1]
    described = program in WRITE_OPTIONS or program in _READ_BY_CODE or program in _SED
    return described or program.startswith("pip")


def written_operands(argv: Sequence[str]) -> Written:
    """What ``argv`` writes according to the table (empty for programs it does not describe)."""
    out = Written()
    if not argv:
        return out
    program = argv[0].rsplit("/", 1)[-1]
    if program.startswith("pip"):
        program = "pip"
    words = list(argv[1:])
    options = WRITE_OPTIONS.get(program, {})
    skip = False
    for index, word in enumerate(words):
        if skip:
            skip = False
            continue
        following = words[index + 1] if index + 1 < len(words) else None
        found = _option_value(word, following, options) if word.startswith("-") else None
        if found is not None:
            value, target, skip = found
            (out.files if target == "file" else out.folders).append(value)
    if program in ("tar", "bsdtar"):
        mode = tar_mode(words)
        if mode == "x":
            out.unpacks_here = not out.folders
        else:  # ``-C`` is where an archive is made from: read, not written
            out.folders.clear()
            if mode == "c":
                out.files.extend(_tar_archive(words))
            if "--remove-files" in words:  # GNU tar deletes every member it packed
                out.folders.extend(
                    f"{folder.rstrip('/')}/{member}" if folder else member
                    for folder, member in tar_members(words)
                )
    elif program in _SED:
        out.files.extend(_sed_written(words))
    elif program == "bwrap":
        out.folders.extend(_bwrap_covered(words))
    elif program == "firejail":  # ``--opt=PATH`` only; a bare ``--private`` hides the home folder
        for word in words:
            name, _, value = word.partition("=")
            if name in ("--tmpfs", "--blacklist", "--private", "--read-only", "--bind") and value:
                out.folders.append(value.rsplit(",", 1)[-1])
            elif word == "--private":
                out.folders.append("~")
    elif program == "unzip":
        out.unpacks_here = not out.folders and "-l" not in words and "-t" not in words
    elif program == "cpio":
        bundle = "".join(w[1:] for w in words if w.startswith("-") and not w.startswith("--"))
        if "i" in bundle or "--extract" in words:
            out.unpacks_here = not out.folders
        elif "p" in bundle or "--pass-through" in words:
            out.folders.extend(w for w in words if not w.startswith("-"))
    elif program in ("7z", "7za", "7zr"):
        command = next((w for w in words if not w.startswith("-")), "")
        if command in ("x", "e"):
            out.unpacks_here = not out.folders
        elif command in ("a", "u", "d", "rn"):
            operands = [w for w in words if not w.startswith("-")]
            out.files.extend(operands[1:2])
    elif program == "patch":
        operands = operands_of(words, VALUE_OPTIONS["patch"])
        out.files.extend(operands[:1])
        out.unpacks_here = not operands and not out.folders
    elif program == "stow" and _STOW_CHANGES.intersection(words):
        out.folders.append(stow_target(words))
    elif program == "mount" or program == "umount":
        operands = operands_of(words, frozenset({"-t", "-o", "-L", "-U", "--bind", "-B"}))
        out.folders.extend(operands[-1:])
    return out


def stow_target(words: Sequence[str]) -> str:
    """Stow's target folder: ``-t``/``--target``, else the parent of ``-d``/``--dir``, else the
    parent of the folder it runs in (the stow manual's defaults)."""
    found: dict[str, str] = {}
    for index, word in enumerate(words):
        name, equals, value = word.partition("=")
        if name in ("-t", "--target", "-d", "--dir"):
            given = value if equals else (words[index + 1] if index + 1 < len(words) else "")
            found["target" if name in ("-t", "--target") else "dir"] = given
        elif word.startswith(("-t", "-d")) and len(word) > 2:
            found["target" if word[1] == "t" else "dir"] = word[2:]
    if "target" in found:
        return found["target"]
    return (found.get("dir", ".").rstrip("/") or "/") + "/.."


# bubblewrap options that mount SOURCE over DEST (two operands): what is at DEST is hidden from
# everything the sandbox runs (``--ro-bind /tmp/empty ~/.claude``). ``--bind / /`` hides nothing.
_BWRAP_PAIRS: Final[frozenset[str]] = frozenset(
    {
        "--bind",
        "--bind-try",
        "--dev-bind",
        "--dev-bind-try",
        "--ro-bind",
        "--ro-bind-try",
        "--symlink",
        "--file",
        "--bind-data",
        "--ro-bind-data",
        "--chmod",
    }
)


def _bwrap_covered(words: Sequence[str]) -> list[str]:
    out: list[str] = []
    for index, word in enumerate(words):
        if word in _BWRAP_PAIRS and index + 2 < len(words):
            source, destination = words[index + 1], words[index + 2]
            if source.rstrip("/") != destination.rstrip("/"):
                out.append(destination)
    return out


def follows_links(argv: Sequence[str]) -> bool:
    """Whether a copier, archiver or recursive reader follows symbolic links inside the folders
    it is given (so a link there to another folder copies or reads that folder too): ``cp -L``,
    ``rsync -L``/``--copy-links``/``-k``, ``tar -h``, ``zip -r`` unless ``-y``, ``scp -r``,
    ``grep -R``, ``rg -L``, ``ag -f``, ``rclone -L``. From each program's manual."""
    program = argv[0].rsplit("/", 1)[-1] if argv else ""
    words = list(argv[1:])
    shorts = "".join(w[1:] for w in words if w.startswith("-") and not w.startswith("--"))
    longs = {w.split("=", 1)[0] for w in words if w.startswith("--")}
    if program == "cp":
        return "L" in shorts or "--dereference" in longs
    if program == "rsync":
        return bool({"L", "k"} & set(shorts)) or bool(
            {"--copy-links", "--copy-unsafe-links", "--copy-dirlinks"} & longs
        )
    if program in ("tar", "bsdtar"):
        return "h" in shorts or "--dereference" in longs or "-L" in words
    if program == "zip":
        return "y" not in shorts and "--symlinks" not in longs
    if program == "scp":
        return "r" in shorts
    if program in ("grep", "egrep", "fgrep"):
        return "R" in shorts or "--dereference-recursive" in longs
    if program == "rg":
        return "L" in shorts or "--follow" in longs
    if program == "ag":
        return "f" in shorts or "--follow" in longs
    if program in ("ack", "rclone"):
        return "--follow" in longs or "L" in shorts or "--copy-links" in longs
    return False


def _tar_archive(words: Sequence[str]) -> list[str]:
    for index, word in enumerate(words):
        if word in ("-f", "--file") and index + 1 < len(words):
            return [words[index + 1]]
        if word.startswith("--file="):
            return [word.split("=", 1)[1]]
        if (
            word.startswith("-")
            and not word.startswith("--")
            and word.endswith("f")
            and index + 1 < len(words)
        ):
            return [words[index + 1]]
        if index == 0 and not word.startswith("-") and "f" in word and index + 1 < len(words):
            return [words[index + 1]]
    return []


# GNU tar's short options that take a value (the next word, or the rest of the bundle), and the
# long ones that take the next word when written without ``=``.
_TAR_SHORT_VALUES: Final[str] = "fCTXbgHIKLNVF"
_TAR_LONG_VALUES: Final[frozenset[str]] = frozenset(
    {
        "--file",
        "--directory",
        "--files-from",
        "--exclude-from",
        "--exclude",
        "--transform",
        "--use-compress-program",
        "--format",
        "--owner",
        "--group",
        "--mode",
        "--mtime",
        "--label",
        "--blocking-factor",
        "--newer",
        "--after-date",
        "--listed-incremental",
        "--index-file",
        "--to-command",
    }
)


def tar_members(words: Sequence[str]) -> list[tuple[str | None, str]]:
    """The members a ``tar`` argv packs, each with the folder of the ``-C``/``--directory`` before
    it (``None``: the folder tar runs in). ``tar czf OUT -C DIR src`` packs ``DIR/src``, not
    ``DIR``: option values (the archive, the folder changed to) are no members."""
    members: list[tuple[str | None, str]] = []
    folder: str | None = None
    pending: list[str] = []  # the options whose values come next, in order
    for index, word in enumerate(words):
        if pending:
            if pending.pop(0) == "C":
                folder = word
            continue
        if word.startswith("--"):
            name, equals, value = word.partition("=")
            if name == "--directory" and equals:
                folder = value
            elif name in _TAR_LONG_VALUES and not equals:
                pending.append("C" if name == "--directory" else "v")
            continue
        bundle = word[1:] if word.startswith("-") and len(word) > 1 else (word if index == 0 else "")
        if not bundle:
            members.append((folder, word))
            continue
        for position, letter in enumerate(bundle):
            if letter in _TAR_SHORT_VALUES:
                rest = bundle[position + 1 :]
                if word.startswith("-") and rest:  # ``-Cdir``, ``-fout.tar``: the value is attached
                    if letter == "C":
                        folder = rest
                    break
                pending.append("C" if letter == "C" else "v")
    return members


def copies_trees(argv: Sequence[str]) -> bool:
    """Whether ``argv`` copies or packs whole folders it names (``cp -r``, ``tar c``, ``zip -r``)."""
    program = argv[0].rsplit("/", 1)[-1] if argv else ""
    words = argv[1:]
    if program in ("cp", "scp"):
        return any(
            w in ("--recursive", "--archive")
            or (w.startswith("-") and not w.startswith("--") and any(c in w for c in "rRa"))
            for w in words
        )
    if program == "zip":
        return (
            any(w.startswith("-") and not w.startswith("--") and "r" in w for w in words)
            or "--recurse-paths" in words
        )
    if program in ("tar", "bsdtar"):
        return tar_mode(words) == "c"
    if program in ("7z", "7za", "7zr"):
        return next((w for w in words if not w.startswith("-")), "") in ("a", "u")
    return program in TREE_COPIERS


def reads_recursively(argv: Sequence[str]) -> bool:
    """Whether a reader reads every file under the folders it is given (``grep -r``, ``rg``)."""
    program = argv[0].rsplit("/", 1)[-1] if argv else ""
    words = argv[1:]
    if program in ("rg", "ag", "ack"):
        return True
    if program in ("grep", "egrep", "fgrep", "diff"):
        return any(
            w in ("--recursive", "--dereference-recursive")
            or (w.startswith("-") and not w.startswith("--") and ("r" in w or "R" in w))
            for w in words
        )
    return False
