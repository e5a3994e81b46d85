"""What a Windows command does, for agents whose shell is PowerShell or cmd (Codex and other CLIs
run natively on Windows): the Windows spellings of effects the other readers know on Linux and
macOS (ATT&CK's Windows techniques, Atomic Red Team's tests for them).

- ``defense-off``: Defender switched off or told to skip folders and processes
  (``Set-MpPreference -DisableRealtimeMonitoring $true``, ``Add-MpPreference -ExclusionPath``),
  boot recovery switched off (``bcdedit /set ... recoveryenabled no``);
- ``log-off``: event logs cleared (``wevtutil cl``, ``Clear-EventLog``);
- ``persistence``: a Run or RunOnce registry value written (``reg add``, ``New-ItemProperty``,
  ``Set-ItemProperty``), a scheduled task or a service created (``schtasks /create``,
  ``Register-ScheduledTask``, ``sc create``, ``New-Service``);
- ``account``: a local account made or raised to administrator (``net user NAME PASS /add``,
  ``net localgroup administrators NAME /add``, ``New-LocalUser``, ``Add-LocalGroupMember``);
- ``erase-contents``: shadow copies and backup catalogues deleted (``vssadmin delete shadows``,
  ``wmic shadowcopy delete``, ``wbadmin delete catalog``), a volume formatted or a disk cleared
  (``format D:``, ``Clear-Disk -RemoveData``);
- ``secret-store``: the registry hives holding password hashes saved (``reg save HKLM\\SAM``);
  ``memory-access``: LSASS dumped (``comsvcs.dll MiniDump``, ``procdump -ma lsass``); a credential
  file under a Windows home read or copied (``type %USERPROFILE%\\.aws\\credentials``,
  ``Get-Content $env:USERPROFILE\\.ssh\\id_rsa``, Chrome's Login Data, PSReadLine's history);
- ``break-system``: the machine stopped or restarted (``Stop-Computer``, ``Restart-Computer``).

PowerShell's names are case-insensitive, so commands are matched by lower-cased name, ``.exe``
dropped. The POSIX reading of a line eats single backslashes (``HKCU:\\Software\\...\\Run`` arrives
as ``HKCU:Software...Run``), so registry paths are matched with their separators optional. Reading
the state (``Get-MpPreference``, ``schtasks /query``, ``net user``, ``vssadmin list shadows``) stays
ordinary.
"""

from __future__ import annotations

from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.security_products import DAEMON_NAMES
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS"]

_RUN_KEY = lazy_compile(r"(?i)currentversion[\\/]*run(?:once(?:ex)?|services(?:once)?)?(?:[\\/\"']|$)")
_HASH_HIVES = lazy_compile(r"(?i)^(?:hklm|hkey_local_machine)[\\/:]*(?:sam|system|security)$")
_DISABLE_SWITCH = lazy_compile(r"(?i)^-disable\w+$")
_EXCLUSION_SWITCH = lazy_compile(r"(?i)^-exclusion(?:path|process|extension|ipaddress)$")
_FALSE = frozenset({"$false", "0", "false"})
_ADMIN_GROUPS = frozenset({"administrators", "administrateurs", "administradores", "remote desktop users"})


def _name(program: str) -> str:
    name = program.lower()
    return name[:-4] if name.endswith(".exe") else name


def _lower(argv: list[str]) -> list[str]:
    return [a.lower() for a in argv[1:]]


def _defender(tool: str, argv: list[str]) -> Iterator[Effect]:
    rest = argv[1:]
    for i, arg in enumerate(rest):
        value = rest[i + 1].lower() if i + 1 < len(rest) else "$true"
        if tool == "set-mppreference" and _DISABLE_SWITCH.match(arg) and value not in _FALSE:
            yield _fx("defense-off", f"switches Defender's {arg[1:]} on (a protection off)", arg)
            return
        if _EXCLUSION_SWITCH.match(arg):
            yield _fx("defense-off", "tells Defender to skip what it names", " ".join(rest[i : i + 2]))
            return


def _registry_run_value(tool: str, argv: list[str]) -> Iterator[Effect]:
    words = _lower(argv)
    writes = tool in ("new-itemproperty", "set-itemproperty") or (tool == "reg" and words[:1] == ["add"])
    hit = next((a for a in argv[1:] if _RUN_KEY.search(a)), None)
    if writes and hit:
        yield _fx("persistence", "writes a Run key value (a program started at every logon)", hit)


def _tasks_and_services(tool: str, argv: list[str]) -> Iterator[Effect]:
    words = _lower(argv)
    if (
        (tool == "schtasks" and "/create" in words)
        or tool in ("register-scheduledtask", "new-service")
        or (tool == "sc" and words[:1] == ["create"])
    ):
        yield _fx("persistence", f"{argv[0]} makes a task or service that runs later", " ".join(argv[1:4]))


def _accounts(tool: str, argv: list[str]) -> Iterator[Effect]:
    words = _lower(argv)
    if tool in ("net", "net1") and "/add" in words and words[:1] in (["user"], ["localgroup"]):
        group = words[1] if words[:1] == ["localgroup"] and len(words) > 1 else ""
        if words[0] == "user" or group in _ADMIN_GROUPS:
            yield _fx("account", f"net {words[0]} adds an account or an administrator", " ".join(argv[2:4]))
    elif tool == "new-localuser":
        yield _fx("account", "New-LocalUser makes a local account", " ".join(argv[1:3]))
    elif tool == "add-localgroupmember" and any(w in _ADMIN_GROUPS for w in words):
        yield _fx("account", "Add-LocalGroupMember makes an administrator", " ".join(argv[1:5]))


def _recovery(tool: str, argv: list[str]) -> Iterator[Effect]:
    words = _lower(argv)
    if tool == "vssadmin" and words[:2] in (["delete", "shadows"], ["resize", "shadowstorage"]):
        yield _fx(
            "erase-contents", "vssadmin deletes the shadow copies (the restore points)", " ".join(words[:3])
        )
    elif tool == "wmic" and "shadowcopy" in words and "delete" in words:
        yield _fx("erase-contents", "wmic deletes the shadow copies (the restore points)", "shadowcopy")
    elif tool == "wbadmin" and words[:1] == ["delete"]:
        yield _fx("erase-contents", "wbadmin deletes the backup catalogue or backups", " ".join(words[:2]))
    elif tool == "bcdedit" and (
        ("recoveryenabled" in words and "no" in words) or "ignoreallfailures" in words
    ):
        yield _fx("defense-off", "bcdedit switches boot recovery off", " ".join(argv[1:]))


_PROFILE_WRITERS = frozenset({"add-content", "ac", "set-content", "sc", "out-file"})


def _protections(tool: str, argv: list[str]) -> Iterator[Effect]:
    words = _lower(argv)
    if tool == "set-netfirewallprofile" and "-enabled" in words:
        value = words[words.index("-enabled") + 1] if words.index("-enabled") + 1 < len(words) else ""
        if value in _FALSE:
            yield _fx("defense-off", "Set-NetFirewallProfile switches the firewall off", " ".join(argv[1:3]))
    elif tool in ("taskkill", "stop-process", "spps"):
        names = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("/im", "-name", "-processname")] + [
            w.split("=", 1)[1] for w in words if w.startswith("-name=")
        ]
        for name in names:
            # Windows process names (lower-cased here) are security_products' daemons
            if DAEMON_NAMES.match(name.removesuffix(".exe")):
                yield _fx("defense-off", f"{argv[0]} stops a security product's process ({name})", name)
                return
    elif tool in _PROFILE_WRITERS and any(w.startswith("$profile") for w in words):
        # the PowerShell profile runs at every session start, as ~/.bashrc does
        yield _fx("persistence", f"{argv[0]} writes the PowerShell profile (run at every start)", "$PROFILE")


def _disks_and_logs(tool: str, argv: list[str]) -> Iterator[Effect]:
    words = _lower(argv)
    if tool == "format" and words[:1] and len(words[0]) == 2 and words[0].endswith(":"):
        yield _fx("erase-contents", f"format erases the volume {argv[1]}", argv[1])
    elif tool == "clear-disk" and ("-removedata" in words or "-removeoem" in words):
        yield _fx("erase-contents", "Clear-Disk erases a disk", " ".join(argv[1:3]))
    elif (tool == "wevtutil" and words[:1] in (["cl"], ["clear-log"])) or tool in (
        "clear-eventlog",
        "remove-eventlog",
    ):
        yield _fx("log-off", f"{argv[0]} clears an event log", " ".join(argv[1:3]))


def _credentials(tool: str, argv: list[str]) -> Iterator[Effect]:
    words = _lower(argv)
    if tool == "reg" and words[:1] in (["save"], ["export"]) and len(argv) > 2 and _HASH_HIVES.match(argv[2]):
        yield _fx("secret-store", "reg saves a registry hive holding password hashes", argv[2])
    elif tool == "rundll32" and any("comsvcs" in w for w in words) and any("minidump" in w for w in words):
        yield _fx(
            "memory-access", "rundll32 comsvcs.dll MiniDump dumps a process's memory (LSASS)", "comsvcs"
        )
    elif tool in ("procdump", "procdump64") and any("lsass" in w for w in words):
        yield _fx("memory-access", "procdump dumps LSASS (every signed-in user's credentials)", "lsass")


# Credential files under a Windows home, as they arrive after the POSIX reading ate the single
# backslashes (`%USERPROFILE%\.ssh\id_rsa` -> `%USERPROFILE%.sshid_rsa`): matched by their
# dotted folder and file name with the separators optional
_CREDENTIAL_FILE = lazy_compile(
    r"(?i)\.ssh[\\/]*id_(?:rsa|ed25519|ecdsa|dsa)(?!\.pub)|\.aws[\\/]*credentials|\.git-credentials|(?:^|[\\/%:.])_?netrc\b"
    r"|\.docker[\\/]*config\.json|\.kube[\\/]*config\b|\.azure[\\/]*(?:accesstokens|msal_token_cache)"
    r"|psreadline[\\/]*consolehost_history\.txt|user ?data[\\/]*default[\\/]*(?:login ?data|cookies)\b"
)
_FILE_READERS = frozenset(
    {
        "type",
        "gc",
        "get-content",
        "copy",
        "copy-item",
        "cpi",
        "more",
        "xcopy",
        "robocopy",
        "select-string",
        "sls",
    }
)


def _credential_files(tool: str, argv: list[str]) -> Iterator[Effect]:
    if tool in _FILE_READERS:
        for arg in argv[1:]:
            if _CREDENTIAL_FILE.search(arg):
                yield _fx("secret-store", f"{argv[0]} reads a credential file under a Windows home", arg)
                return


def _power(tool: str, argv: list[str]) -> Iterator[Effect]:
    if tool in ("stop-computer", "restart-computer"):
        yield _fx("break-system", f"{argv[0]} stops the machine", " ".join(argv[1:3]))


_READERS = (_defender, _registry_run_value, _tasks_and_services, _accounts, _recovery, _disks_and_logs,
            _credentials, _credential_files, _protections, _power)  # fmt: skip
_PROGRAMS = frozenset(
    {
        "set-mppreference", "add-mppreference", "reg", "new-itemproperty", "set-itemproperty",
        "schtasks", "register-scheduledtask", "new-service", "sc", "net", "net1", "new-localuser",
        "add-localgroupmember", "vssadmin", "wmic", "wbadmin", "bcdedit", "format", "clear-disk",
        "wevtutil", "clear-eventlog", "remove-eventlog", "rundll32", "procdump", "procdump64",
        "stop-computer", "restart-computer", *_FILE_READERS, "set-netfirewallprofile", "taskkill",
        "stop-process", "spps", *_PROFILE_WRITERS,
    }
)  # fmt: skip


def _is_windows_program(program: str) -> bool:
    return _name(program) in _PROGRAMS


def windows_acts(argv: list[str]) -> Iterator[Effect]:
    """The effects above for one command (its program matched case-insensitively)."""
    tool = _name(argv[0])
    for reader in _READERS:
        yield from reader(tool, argv)


COMMAND_READERS: tuple[CommandReader, ...] = ((_is_windows_program, windows_acts),)
"""The per-command reader here, with the test on program names it reads (``shell.acts``)."""
