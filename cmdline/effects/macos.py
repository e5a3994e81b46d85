"""Effects of macOS's own administration tools that ``host`` does not read (probe23).

The endpoint-security write-ups and the macOS Security Compliance Project (mSCP) name each control
by the command that checks it; read in reverse, the same commands switch it off: the unified log
silenced rather than erased (``log config --mode level:off``), software and XProtect updates
unscheduled, kernel and system extensions unloaded or uninstalled (how an EDR agent is removed),
the packet filter flushed, the screen lock, guest account, automatic login, root account and
password policy changed through ``sysadminctl``/``pwpolicy``/``dsenableroot``, a FileVault user
added, a file hidden with ``SetFile``; and the preference domains that hold those controls written
with ``defaults write`` (the screen saver's password, loginwindow's auto-login and guest account,
Gatekeeper's SystemPolicy preferences, launchd's overrides that re-enable a disabled service).

Persistence written as preferences (ATT&CK T1543.001/.004, T1647): a LaunchAgent's or
LaunchDaemon's plist edited in place with ``defaults write``, ``PlistBuddy`` or ``plutil`` (what
it runs changed without a file written by name), folder actions switched on, and a Dock item
pointing at an application outside the application folders (the Dock doppelganger).

Reading, listing and status sub-commands (``log show``, ``softwareupdate --list``,
``systemextensionsctl list``, ``sysadminctl -screenLock status``, ``plutil -p``/``-lint``,
``PlistBuddy -c Print``) and preferences of other domains have no effect here. Each reader is
dispatched by program name (``COMMAND_READERS``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS"]

_LAUNCHD_PLIST = lazy_compile(r"(?i)(?:^|/)Library/+Launch(?:Agents|Daemons)/+[^/]+$")
"""A launch agent's or daemon's plist (the user's, the machine's), by path."""

_TRUE = frozenset({"true", "yes", "1"})
_FALSE = frozenset({"false", "no", "0"})
_APPLICATION_FOLDER = lazy_compile(r"^(?:file://)?/+(?:System/+)?Applications/")
_DOCK_PATH = lazy_compile(r"<key>_CFURLString</key>\s*<string>([^<]*)</string>")


def _values(rest: list[str]) -> list[str]:
    """A ``defaults write`` value's words, lower case, type flags dropped (``-bool``, ``-int``)."""
    return [v.lower() for v in rest if not v.startswith("-")]


def _defaults(argv: list[str]) -> Iterator[Effect]:
    rest = argv[1:]
    while rest[:1] in (["-currentHost"], ["-host"]):
        rest = rest[2:] if rest[0] == "-host" else rest[1:]  # the host options come before the verb
    if rest[:1] != ["write"] or len(rest) < 3:
        return
    domain, key, values = rest[1], rest[2], _values(rest[3:])
    joined = " ".join(rest)
    if _LAUNCHD_PLIST.search(domain) or _LAUNCHD_PLIST.search(domain + ".plist"):
        yield _fx("persistence", "defaults writes a launch agent's or daemon's plist", domain)
    elif domain.endswith("com.apple.screensaver"):
        if (key == "askForPassword" and set(values) & _FALSE) or (
            key == "askForPasswordDelay" and any(v.isdigit() and int(v) > 5 for v in values)
        ):
            yield _fx("defense-off", "turns off the screen lock's password", joined)
    elif domain.endswith("com.apple.loginwindow"):
        if key == "autoLoginUser":
            yield _fx("defense-off", "turns on automatic login", joined)
        elif key == "GuestEnabled" and set(values) & _TRUE:
            yield _fx("account", "turns on the guest account", joined)
    elif domain.endswith(("SystemPolicy-prefs.plist", "SystemPolicy-prefs")) and set(values) & _FALSE:
        yield _fx("defense-off", "turns off Gatekeeper's assessments", joined)
    elif domain.endswith(("com.apple.launchd/overrides.plist", "com.apple.launchd/overrides")) and re.search(
        r"Disabled\s+-bool\s+(?:false|no|0)\b", joined, re.IGNORECASE
    ):
        yield _fx("defense-off", "re-enables a disabled system service through launchd's overrides", key)
    elif domain.endswith("com.apple.FolderActionsDispatcher") and set(values) & _TRUE:
        yield _fx("persistence", "turns on folder actions (scripts run when files arrive)", joined)
    elif domain.endswith("com.apple.dock") and key in ("persistent-apps", "persistent-others"):
        paths = [m.group(1) for v in rest[3:] for m in _DOCK_PATH.finditer(v)]
        if any(not _APPLICATION_FOLDER.match(p) for p in paths):
            yield _fx(
                "persistence",
                "adds a Dock item that opens a program outside the application folders",
                paths[0],
            )


def _plist_editors(argv: list[str]) -> Iterator[Effect]:
    """``PlistBuddy -c 'Set :ProgramArguments:0 ...' /Library/LaunchDaemons/x.plist``, ``plutil
    -replace ProgramArguments ...``: what a launch agent or daemon runs, changed in place."""
    tool, rest = argv[0], argv[1:]
    targets = [a for a in rest if _LAUNCHD_PLIST.search(a)]
    if not targets:
        return
    if tool == "PlistBuddy":
        commands = [rest[i + 1] for i, a in enumerate(rest[:-1]) if a == "-c"]
        writes = any(re.match(r"(?i)\s*(?:set|add|delete|merge|import|clear)\b", c) for c in commands)
    else:
        writes = any(a in ("-replace", "-insert", "-remove", "-extract") for a in rest)
    if writes:
        yield _fx("persistence", f"{tool} changes a launch agent's or daemon's plist", targets[-1])


def _settings(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    joined = " ".join(rest)
    if tool == "log":
        if rest[:1] == ["config"] and re.search(r"(?i)(?:level|persist)\s*:\s*off", joined):
            yield _fx("log-off", "turns off the unified log", joined)
    elif tool == "softwareupdate":
        if re.search(r"(?:--schedule|--schedule=)\s*off\b|--ignore\b", joined):
            yield _fx("defense-off", "turns off automatic software and security updates", joined)
    elif tool == "spctl":
        if re.search(r"kext-consent\s+(?:disable|add)\b", joined):
            yield _fx("defense-off", "turns off kernel extension consent", joined)
    elif tool == "systemextensionsctl":
        if rest[:1] in (["uninstall"], ["reset"]) or rest[:2] == ["developer", "on"]:
            yield _fx("defense-off", "removes system extensions or their signing checks", joined)
    elif tool == "kextunload" or (tool == "kmutil" and rest[:1] == ["unload"]):
        yield _fx("defense-off", "unloads a kernel extension", joined)
    elif tool == "pfctl":
        if any(re.match(r"^-[a-zA-Z]*[dF]", a) for a in rest):
            yield _fx("defense-off", "disables or flushes the packet filter", joined)
    elif tool == "sysadminctl":
        if re.search(r"-screenLock\s+off\b|-autologin\s+set\b", joined):
            yield _fx("defense-off", "turns off the screen lock or turns on automatic login", joined)
        elif re.search(r"-guestAccount\s+on\b", joined):
            yield _fx("account", "turns on the guest account", joined)
    elif tool == "pwpolicy":
        if re.search(r"-clear(?:account|global)?policies|(?:^|\s)-?disableuser\b|-clearglobalpolicy", joined):
            yield _fx("account", "clears password policies or disables an account", joined)
    elif tool == "dsenableroot":
        if "-d" not in rest:
            yield _fx("account", "enables the root account", "")
    elif tool == "fdesetup":
        if rest[:1] == ["add"]:
            yield _fx("account", "adds a user who can unlock FileVault", joined)
    elif tool == "SetFile":
        attributes = [rest[i + 1] for i, a in enumerate(rest[:-1]) if a == "-a"]
        if any("V" in a for a in attributes):
            yield _fx("defense-off", "hides a file from the Finder", rest[-1] if rest else "")


_SETTINGS_PROGRAMS = frozenset(
    {
        "log",
        "softwareupdate",
        "spctl",
        "systemextensionsctl",
        "kextunload",
        "kmutil",
        "pfctl",
        "sysadminctl",
        "pwpolicy",
        "dsenableroot",
        "fdesetup",
        "SetFile",
    }
)

COMMAND_READERS: tuple[CommandReader, ...] = (
    (frozenset({"defaults"}), _defaults),
    (frozenset({"PlistBuddy", "plutil"}), _plist_editors),
    (_SETTINGS_PROGRAMS, _settings),
)
"""The readers here, each with the programs it reads."""
