"""The resident gateway as a process: which lines would stop, freeze, starve or stand in for it,
and which would fill the disk its audit log is written to.

Judged by method, not by spelling: the gateway's own processes are found at check time (the PIDs
its lock files name, the deciding process itself) and a signal sender's target is matched against
them the way the sender matches (``pkill``'s pattern against their names and command lines, a PID
against their PIDs); a PID computed when the line runs (``$(pgrep ...)``, ``| xargs kill``) is
judged by what computes it. A write's size is compared with the free space of the log's
filesystem.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.programs import operands as operands_of

# Programs that send signals or otherwise stop, freeze or starve a process they are given.
SIGNAL_SENDERS: Final[frozenset[str]] = frozenset(
    {
        "kill",
        "pkill",
        "killall",
        "skill",
        "snice",
        "killall5",
        "fuser",
        "cpulimit",
        "renice",
        "ionice",
        "taskset",
        "chrt",
        "prlimit",
        "gdb",
        "strace",
        "ltrace",
        "gcore",
        "kill.exe",
        "tkill",
        "xkill",
    }
)
# Programs whose matching is a pattern over process names (and with -f, command lines).
PATTERN_SENDERS: Final[frozenset[str]] = frozenset({"pkill", "killall", "skill", "snice"})
# systemctl/launchctl verbs that stop a service.
SERVICE_STOPS: Final[frozenset[str]] = frozenset(
    {
        "stop",
        "kill",
        "disable",
        "mask",
        "restart",
        "reload",
        "freeze",
        "unload",
        "bootout",
        "remove",
        "isolate",
    }
)
# Words that name the gateway itself wherever they appear in a command that finds processes.
OWN_NAMES: Final[re.Pattern[str]] = lazy_compile(r"dsh[-_.]?policy|policy\.cli|\bserve\b")
# Environment variables that decide where the hook client looks for its gateway, or whether a
# nested harness's hooks apply at all.
REDIRECTING_ENV: Final[re.Pattern[str]] = lazy_compile(
    r"(?:^|[\s;&|(`]|\benv\s+(?:-\S+\s+)*)(?:export\s+|declare\s+-x\s+|setenv\s+)?"
    r"(DSH_POLICY_[A-Z_]+|XDG_RUNTIME_DIR|TMPDIR|HOME|XDG_CONFIG_HOME|CLAUDE_CONFIG_DIR|CODEX_HOME"
    r"|GEMINI_CLI_HOME|CLAUDE_CODE_[A-Z_]+|CODEX_[A-Z_]+"
    # other clients' settings locations (their hook files or plugins live there) and approvals
    r"|GEMINI_CLI_SYSTEM_SETTINGS_PATH|GEMINI_CLI_SYSTEM_DEFAULTS_PATH|COPILOT_HOME|COPILOT_ALLOW_ALL"
    r"|OPENCODE_CONFIG|OPENCODE_CONFIG_DIR|OPENCODE_CONFIG_CONTENT|OPENCODE_DISABLE_[A-Z_]+)="
)
# Variables that move the gateway's runtime folder: set anywhere, the next harness started from
# that shell talks to whoever listens there.
RUNTIME_ENV: Final[re.Pattern[str]] = lazy_compile(
    r"(?:^|[\s;&|(`])(?:export\s+|declare\s+-x\s+|setenv\s+)(DSH_POLICY_[A-Z_]+|XDG_RUNTIME_DIR)="
)
SIZE: Final[re.Pattern[str]] = lazy_compile(r"^(\d+(?:\.\d+)?)([KMGTPE]?)(i?B?)?$", re.IGNORECASE)
_UNITS: Final[str] = "KMGTPE"


@dataclass(frozen=True)
class GatewayProcess:
    pid: int
    name: str
    command_line: str


def gateway_processes(runtime_folders: Iterable[str]) -> tuple[GatewayProcess, ...]:
    """The gateway's processes now: the PIDs the runtime folders' lock files hold and this one
    (the process deciding is the gateway, or the hook deciding in process)."""
    pids = {os.getpid()}
    for folder in runtime_folders:
        with contextlib.suppress(OSError):
            for name in os.listdir(folder):
                if name.endswith(".lock"):
                    with contextlib.suppress(OSError, ValueError):
                        with open(os.path.join(folder, name), encoding="ascii") as handle:
                            pid = int(handle.read(32).strip() or 0)
                        if pid > 0:
                            pids.add(pid)
    found = []
    for pid in sorted(pids):
        found.append(
            GatewayProcess(pid, _read(f"/proc/{pid}/comm"), _read(f"/proc/{pid}/cmdline").replace("\0", " "))
        )
    return tuple(found)


def _read(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(65536).decode("utf-8", "replace").strip()
    except OSError:
        return ""


def runtime_files(runtime_folders: Iterable[str]) -> tuple[str, ...]:
    """The sockets and lock files in the gateway's runtime folders, by full path."""
    found: list[str] = []
    for folder in runtime_folders:
        with contextlib.suppress(OSError):
            found.extend(
                os.path.join(folder, name) for name in os.listdir(folder) if name.endswith((".sock", ".lock"))
            )
    return tuple(found)


def pattern_hits(pattern: str, processes: Sequence[GatewayProcess], full: bool) -> bool:
    """Whether a process finder's ``pattern`` (a regular expression) selects a gateway process."""
    if OWN_NAMES.search(pattern):
        return True
    try:
        compiled = re.compile(pattern)
    except re.error:
        compiled = re.compile(re.escape(pattern))
    for process in processes:
        texts = [process.name, process.command_line] if full else [process.name]
        texts.append(os.path.basename(process.command_line.split(" ", 1)[0]))
        if full:  # ``killall -r '^dsh'``: the script or module an interpreter runs is a name too
            texts.extend(run_names(process.command_line))
        if any(text and compiled.search(text) for text in texts):
            return True
    return False


def run_names(command_line: str) -> list[str]:
    """The names a process started by an interpreter is known by besides the interpreter's: the
    script it runs (its base name) or the module of ``-m MODULE`` (``python3 -m
    dsh_policy.policy.cli serve`` is also ``dsh_policy.policy.cli``)."""
    words = command_line.split()
    for index, word in enumerate(words[1:], start=1):
        if word == "-m" and index + 1 < len(words):
            return [words[index + 1]]
        if not word.startswith("-"):
            return [os.path.basename(word)]
    return []


def stops_gateway(
    commands: Sequence[Sequence[str]],
    line: str,
    processes: Sequence[GatewayProcess],
    runtime_files: Sequence[str] = (),
) -> str | None:
    """Why this line would stop, freeze or starve the gateway, or ``None``. ``runtime_files``:
    the sockets and lock files of its runtime folders, which socket listings (``ss -xp``,
    ``lsof``, ``netstat -xp``) show beside the gateway's PID."""
    pids = {str(p.pid) for p in processes}
    senders = [
        argv
        for argv in commands
        if argv and os.path.basename(argv[0]) in SIGNAL_SENDERS and not probes_only(argv)
    ]
    services = ("systemctl", "launchctl", "service", "rc-service", "sv")
    for argv in commands:
        program = os.path.basename(argv[0]) if argv else ""
        if program == "dsh-policy" and argv[1:2] == ["serve"] and "--stop" in argv:
            return "dsh-policy serve --stop would ask the resident gateway to leave"
        if program == "loginctl" and set(argv[1:]) & {
            "kill-user",
            "terminate-user",
            "kill-session",
            "terminate-session",
        }:
            return "loginctl would end every process of a user or session (the gateway's among them)"
        stops = SERVICE_STOPS & set(argv[1:]) or (program in services[2:] and {"stop", "restart"} & set(argv))
        if program in services and stops and OWN_NAMES.search(" ".join(argv[1:])):
            return f"{program} would stop the gateway's service"
        if program in services and stops and _unit_glob_hits(argv[1:]):
            return f"{program} would stop every unit a pattern matches, the gateway's among them"
    for argv in senders:
        program = os.path.basename(argv[0])
        if program == "kill" and "-1" in argv[2:]:
            return "kill -1 would signal every process of this user (the gateway's among them)"
        if program == "killall5":
            return "killall5 would signal every process outside its own session (the gateway's among them)"
        operands = [w for w in argv[1:] if not w.startswith("-") or w.lstrip("-").isdigit()]
        for word in operands:
            bare = word.lstrip("-")
            if bare in pids:
                return f"{program} would signal the gateway (pid {bare})"
            if ("$(" in word or "`" in word) and (OWN_NAMES.search(word) or any(p in word for p in pids)):
                return f"{program} would signal the processes {word} finds (the gateway among them)"
        if program in PATTERN_SENDERS and not _patterns(argv) and _by_user(argv):
            return f"{program} would signal every process of a user (the gateway's among them)"
        if program in PATTERN_SENDERS:
            full = any(
                w in ("-f", "--full")
                or (w.startswith("-") and not w.startswith("--") and "f" in w[1:] and len(w) <= 4)
                for w in argv[1:]
            )
            for word in _patterns(argv):
                if pattern_hits(word, processes, full or program != "pkill"):
                    return f"{program} {word} would match the gateway's process"
    # A PID computed elsewhere in the line (a pipe into ``xargs kill``, a variable, a loop):
    # refused when the line finds processes by a pattern that matches the gateway.
    if senders or re.search(r"\bxargs\b[^|;&]*\bkill\b", line):
        for argv in commands:
            program = os.path.basename(argv[0]) if argv else ""
            if program in ("pgrep", "pidof", "ps", "awk", "grep", "egrep", "sed", "lsof", "fuser"):
                for word in argv[1:]:
                    if (
                        not word.startswith("-")
                        and len(word) >= 3
                        and pattern_hits(word.strip("/"), processes, True)
                    ):
                        return f"{program} {word} picks the gateway's process for a signal"
                    picks_file = _names_runtime(word.strip("/"), runtime_files)
                    if not word.startswith("-") and len(word) >= 3 and picks_file:
                        return f"{program} {word} picks the owner of the gateway's socket for a signal"
        if OWN_NAMES.search(line):
            return "the line signals processes it finds by the gateway's name"
    return None


def _names_runtime(pattern: str, runtime_files: Sequence[str]) -> bool:
    """Whether a finder's pattern selects one of the gateway's runtime files by its path (a
    listing of sockets shows each with its owner's PID)."""
    try:
        compiled = re.compile(pattern)
    except re.error:
        compiled = re.compile(re.escape(pattern))
    for path in runtime_files:
        folder, name = os.path.split(path)
        if len(folder.strip("/")) > 1 and folder.strip("/") in pattern:
            return True  # the runtime folder itself
        # The file's own name (its deployment key), not only a suffix every socket has.
        key = name.rsplit(".", 1)[0]
        match = compiled.search(name)
        if match is not None and match.start() < len(key) and match.end() - match.start() >= 3:
            return True
    return False


# Senders whose signal option may name signal 0, by the option that names it.
_SIGNAL_OPTIONS: Final[frozenset[str]] = frozenset({"-s", "-n", "--signal"})


def probes_only(argv: Sequence[str]) -> bool:
    """Whether a ``kill``/``pkill``/``killall`` names signal 0 (``-0``, ``-s 0``, ``--signal=0``,
    ``-SIG0``): the kernel checks that the process exists and may be signalled but delivers
    nothing, so a liveness probe of the gateway changes nothing. ``killall5 -0`` included."""
    program = os.path.basename(argv[0]) if argv else ""
    if program not in ("kill", "pkill", "killall", "killall5", "skill"):
        return False
    words = list(argv[1:])
    for index, word in enumerate(words):
        if word == "--":
            return False
        value: str | None = None
        if word in _SIGNAL_OPTIONS and index + 1 < len(words):
            value = words[index + 1]
        elif word.startswith("--signal="):
            value = word.split("=", 1)[1]
        elif word.startswith("-") and not word.startswith("--"):
            value = word[1:]
        if value is not None and value.upper().removeprefix("SIG") == "0":
            return True
    return False


# The unit names the gateway's service has (the hardened install's, a user unit of its name).
GATEWAY_UNITS: Final[tuple[str, ...]] = ("dsh-policy-gateway.service", "dsh-policy.service")


def _unit_glob_hits(words: Sequence[str]) -> bool:
    """A unit pattern (systemctl takes shell globs: ``'dsh*'``, ``'*'``) that matches the gateway's
    service."""
    for word in words:
        if word.startswith("-") or not set(word) & set("*?["):
            continue
        pattern = word if "." in word else word + ".service"
        for unit in GATEWAY_UNITS:
            if fnmatch.fnmatchcase(unit, pattern) or fnmatch.fnmatchcase(unit, word):
                return True
    return False


def _patterns(argv: Sequence[str]) -> list[str]:
    """``pkill``/``killall`` patterns: operands that are not options or their values."""
    valued = frozenset(
        {
            "-s",
            "--signal",
            "-u",
            "-U",
            "-g",
            "-G",
            "-P",
            "-t",
            "-F",
            "--pidfile",
            "-n",
            "--ns",
            "--nslist",
            "-o",
            "-y",
            "-e",
        }
    )
    return operands_of(argv[1:], valued)


def _by_user(argv: Sequence[str]) -> bool:
    """``pkill -u USER``/``killall -u USER`` with no name: every process of that user."""
    return any(
        w in ("-u", "-U", "--euid", "--uid", "--user") or w.startswith(("--euid=", "--uid=", "--user="))
        for w in argv[1:]
    )


# Sources that never end: their output grows until the disk is full unless something bounds it.
_ENDLESS_DEVICES: Final[frozenset[str]] = frozenset({"/dev/zero", "/dev/urandom", "/dev/random", "/dev/full"})


def endless(argv: Sequence[str]) -> bool:
    """``yes``, ``cat /dev/zero``, ``pv /dev/urandom``, ``seq inf``, ``tail -f /dev/zero``..."""
    program = os.path.basename(argv[0])
    if program == "yes":
        return True
    if program == "seq":
        return any(w.lower() in ("inf", "infinity") for w in argv[1:])
    if program in ("cat", "pv", "tail", "tac", "base64", "xxd", "od", "tr", "openssl"):
        return any(w in _ENDLESS_DEVICES for w in argv[1:])
    return False


def bounds(argv: Sequence[str]) -> bool:
    """A command that cuts a stream short (``head -c``, ``head -n``, ``dd count=``, ``timeout``)."""
    program = os.path.basename(argv[0])
    if program == "head":
        return True
    if program == "dd":
        return any(w.startswith("count=") for w in argv[1:])
    return program in ("timeout", "ulimit")


def same_filesystem(path: str, other: str) -> bool:
    """Whether ``path`` would be written on the filesystem holding ``other`` (nearest existing
    folders compared)."""

    def device(target: str) -> int | None:
        folder = _existing_folder(target if os.path.isdir(target) else os.path.dirname(target))
        if folder is None:
            return None
        try:
            return os.stat(folder).st_dev
        except (OSError, ValueError):
            return None

    if path.startswith("/dev/") or path.startswith("/proc/"):
        return False
    first, second = device(path), device(other)
    return first is not None and first == second


# cgroup files whose write freezes or kills every process of the group (cgroup v2 and v1).
CGROUP_CONTROLS: Final[frozenset[str]] = frozenset({"cgroup.freeze", "cgroup.kill", "freezer.state"})


def cgroup_of(pid: int) -> str | None:
    """The cgroup v2 folder of a process (``/sys/fs/cgroup/...``), or ``None``."""
    text = _read(f"/proc/{pid}/cgroup")
    for line in text.splitlines():
        if line.startswith("0::"):
            return "/sys/fs/cgroup" + line[3:].rstrip("/")
    return None


def freezes_gateway(target: str, processes: Sequence[GatewayProcess]) -> str | None:
    """A write into a cgroup's freeze or kill file whose group holds the gateway (or that the
    line computes when it runs, ``user-$(id -u).slice``)."""
    if os.path.basename(target) not in CGROUP_CONTROLS:
        return None
    folder = os.path.dirname(target)
    if "$" in folder or "`" in folder or "*" in folder:
        return f"a write into {target}, a group computed when the line runs, would freeze or kill it"
    for process in processes:
        group = cgroup_of(process.pid)
        if group and (group == folder or group.startswith(folder.rstrip("/") + "/")):
            return f"a write into {target} would freeze or kill the gateway's group"
    return None


def redirects_nested(line: str, starts_harness: bool) -> str | None:
    """An environment override that points a hook client (or a nested harness) elsewhere."""
    moved = RUNTIME_ENV.search(line)
    if moved:
        return f"{moved.group(1)} set for later commands would point the hook client at another gateway"
    if starts_harness:
        found = REDIRECTING_ENV.search(line)
        if found:
            return f"a harness started with {found.group(1)} changed would not run this gateway's hooks"
    return None


def size_in_bytes(text: str) -> int | None:
    """``500T``, ``9000G``, ``1MiB``, ``1048576``: a size in bytes (powers of 1024)."""
    match = SIZE.match(text.strip())
    if not match:
        return None
    number, unit = float(match.group(1)), match.group(2).upper()
    return int(number * (1024 ** (_UNITS.index(unit) + 1 if unit else 0)))


def fills_disk(argv: Sequence[str], free: int | None) -> str | None:
    """A write of at least half the free space of the log's filesystem (or unbounded from an
    endless source): the next audit write fails, and a fail-open deployment stops recording."""
    if free is None or not argv:
        return None
    program = os.path.basename(argv[0])
    words = list(argv[1:])
    size: int | None = None
    if program in ("fallocate", "truncate", "xfs_mkfile", "mkfile"):
        for index, word in enumerate(words):
            value = None
            if word in ("-l", "--length", "-s", "--size") and index + 1 < len(words):
                value = words[index + 1]
            elif word.startswith(("--length=", "--size=")):
                value = word.split("=", 1)[1]
            elif word.startswith(("-l", "-s")) and len(word) > 2:
                value = word[2:]
            elif program in ("xfs_mkfile", "mkfile") and not word.startswith("-"):
                value = word
            if value is not None:
                size = size_in_bytes(value.lstrip("+"))
                break
    elif program == "dd":
        settings = dict(w.split("=", 1) for w in words if "=" in w)
        source = settings.get("if", "")
        block = size_in_bytes(settings.get("bs") or settings.get("obs") or "512") or 512
        if "count" in settings:
            count = size_in_bytes(settings["count"]) or 0
            size = block * count
        elif (
            source.startswith("/dev/")
            and source not in ("/dev/null", "/dev/stdin")
            and settings.get("of", "/dev/null") != "/dev/null"
        ):
            return "dd would copy an endless device into a file until the disk is full"
    elif program == "head":
        for index, word in enumerate(words):
            if word == "-c" and index + 1 < len(words):
                size = size_in_bytes(words[index + 1])
            elif word.startswith("-c") and len(word) > 2:
                size = size_in_bytes(word[2:])
            elif word.startswith("--bytes="):
                size = size_in_bytes(word.split("=", 1)[1])
    if size is not None and size >= max(free // 2, 1 << 30):
        return f"{program} would write {size} bytes, filling the disk the audit log is written to"
    return None


def free_bytes(folder: str | None) -> int | None:
    """Free bytes on the filesystem holding ``folder`` (``None`` when unknown)."""
    folder = _existing_folder(folder)
    if folder is None:
        return None
    try:
        info = os.statvfs(folder)
    except (OSError, ValueError):
        return None
    return info.f_bavail * info.f_frsize


def _existing_folder(folder: str | None) -> str | None:
    """``folder`` or its nearest existing ancestor (``None`` when none is found)."""
    while folder and not os.path.isdir(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return folder or None
