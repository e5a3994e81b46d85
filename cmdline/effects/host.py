"""Effects of commands on the host itself: defences and accounts (Linux and macOS), other
processes' memory and secrets, machine-wide secret hunts, secret stores, and network paths that
carry no URL (tunnels, display forwarding, miners). The tables are the knowledge; see ``acts``
for how a line is walked."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect, runs
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.security_products import DAEMON_NAMES, PRODUCTS
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = [
    "COMMAND_READERS",
    "HOST_HANDLERS",
    "containerised_tunnels",
    "hidden_staging",
    "hidden_temp_programs",
    "host_command_acts",
    "hunts_through_xargs",
    "killed_daemons",
]

# ----------------------------------------------------------------- host defences and accounts
_KERNEL_GUARDS: dict[str, Callable[[int], bool]] = {
    # switch -> whether a value weakens it (probe26: the secure value a hardening guide sets,
    # `kernel.randomize_va_space=2`, `kptr_restrict=2`, `suid_dumpable=0`, is not tampering)
    "kernel.randomize_va_space": lambda v: v < 2,
    "kernel.yama.ptrace_scope": lambda v: v == 0,
    "kernel.kptr_restrict": lambda v: v == 0,
    "kernel.dmesg_restrict": lambda v: v == 0,
    "kernel.modules_disabled": lambda v: v == 0,
    "kernel.unprivileged_bpf_disabled": lambda v: v == 0,
    "kernel.perf_event_paranoid": lambda v: v < 2,
    "kernel.kexec_load_disabled": lambda v: v == 0,
    "kernel.sysrq": lambda v: v != 0,
    "kernel.unprivileged_userns_clone": lambda v: v != 0,
    "kernel.apparmor_restrict_unprivileged_userns": lambda v: v == 0,
    "kernel.apparmor_restrict_unprivileged_unconfined": lambda v: v == 0,
    "kernel.io_uring_disabled": lambda v: v == 0,
    "fs.suid_dumpable": lambda v: v != 0,
    "user.max_user_namespaces": lambda v: v != 0,
    "vm.mmap_min_addr": lambda v: v < 4096,
    "net.core.bpf_jit_harden": lambda v: v == 0,
    "dev.tty.ldisc_autoload": lambda v: v != 0,
    "dev.tty.legacy_tiocsti": lambda v: v != 0,
    "vm.unprivileged_userfaultfd": lambda v: v != 0,
    "net.ipv4.tcp_syncookies": lambda v: v == 0,
    "net.ipv4.icmp_echo_ignore_broadcasts": lambda v: v == 0,
    "net.ipv4.icmp_ignore_bogus_error_responses": lambda v: v == 0,
}
"""The kernel's security switches and, for each, the values that weaken it (an unreadable value
counts as weakening)."""
_GUARD_FAMILIES = lazy_compile(r"^(?:fs\.protected_\w+|net\.ipv4\.conf\.[\w*]+\.log_martians)$")
"""Switches named by family, weakened by 0 (`fs.protected_symlinks=0`, `...all.log_martians=0`)."""


def _weakens(name: str, value: str) -> bool:
    check = _KERNEL_GUARDS.get(name) or ((lambda v: v == 0) if _GUARD_FAMILIES.match(name) else None)
    if check is None:
        return False
    try:
        return check(int(value.strip("\"' ")))
    except ValueError:
        return True


def _sysctl(argv: list[str]) -> Iterator[Effect]:
    for arg in argv[1:]:
        name, setting, value = arg.replace("/", ".").partition("=")
        name = name.strip()
        if not setting:
            continue  # read, not set (`sysctl -n kernel.kptr_restrict`)
        if name == "kernel.core_pattern":
            # a file name for core dumps (core.%p) is ordinary; a pipe hands crashes to a program
            if value.strip("\"' ").startswith("|"):
                yield _fx("defense-off", "hands every crash dump to a program (kernel.core_pattern)", arg)
        elif _weakens(name, value):
            yield _fx("defense-off", f"weakens a kernel security switch ({name})", arg)


def _chattr(argv: list[str]) -> Iterator[Effect]:
    if any(re.match(r"^[+-=][a-zA-Z]*[ia]", a) for a in argv[1:]):
        yield _fx("defense-off", "changes immutable or append-only bits", " ".join(argv[1:]))


def _touch(argv: list[str]) -> Iterator[Effect]:
    stamped = any(
        a in ("-r", "-d", "-t", "--date")
        or (a.startswith(("--reference", "--date=", "-d", "-t")) and len(a) > 2)
        or a == "--reference"
        for a in argv[1:]
    )
    targets = [a for a in argv[1:] if re.match(r"^(?:/(?!tmp/)|~|\$HOME)", a)]
    if stamped and targets and not any(a.startswith("/tmp") for a in targets):
        yield _fx("defense-off", "back-dates files outside the workspace (timestomp)", targets[-1])


_UNBACKED = lazy_compile(
    r"^(?:/+|~/*|\$\{?HOME\}?/*|/+Users(?:/+[^/]+)?/*"
    r"|(?:~|\$\{?HOME\}?|/+Users/+[^/]+)/+(?:Documents|Desktop|Pictures|Library)/*)$"
)
"""What ``tmutil addexclusion`` must not leave out of backups: the disk, a home, its documents."""
_USER_KEYCHAIN = lazy_compile(
    r"(?i)(?:^|/)(?:login|System|System Roots|metadata)\.keychain(?:-db)?$|/Library/+Keychains/"
)
"""The keychains that hold the user's and the machine's secrets (a CI job's build keychain does not)."""


def _macos(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    joined = " ".join(rest)
    if tool == "spctl" and re.search(r"--(?:master|global)-disable|--disable\b|--add\b", joined):
        yield _fx("defense-off", "turns off Gatekeeper")
    elif tool == "csrutil" and re.search(r"\bdisable\b|authenticated-root\s+disable|clear\b", joined):
        yield _fx("defense-off", "turns off System Integrity Protection")
    elif tool == "fdesetup" and re.search(r"\bdisable\b|\bremove\b", joined):
        yield _fx("defense-off", "turns off FileVault")
    elif (
        tool == "tmutil"
        and (
            re.search(
                r"\b(?:disable|delete|deletelocalsnapshots|thinlocalsnapshots|disablelocal|removedestination)\b",
                joined,
            )
            # leaving a build or cache folder out of backups is routine; the home or its documents not
            or (rest[:1] == ["addexclusion"] and any(_UNBACKED.match(a) for a in rest[1:]))
        )
    ):
        yield _fx("defense-off", "disables or deletes Time Machine backups")
    elif tool == "log" and rest[:1] == ["erase"]:
        yield _fx("log-off", "erases the unified log")
    elif tool == "launchctl" and re.search(r"\b(?:unload|bootout|remove|disable)\b", joined):
        yield _fx("defense-off", "unloads a launch agent or daemon", joined)
    elif tool in ("kextload", "kextutil") or (tool == "kmutil" and rest[:1] in (["load"], ["create"])):
        yield _fx("defense-off", "loads a kernel extension", joined)
    elif (
        tool == "defaults"
        and rest[:1] == ["write"]
        and re.search(
            r"LoginHook|LogoutHook|com\.apple\.alf|LSQuarantine|com\.apple\.security|GKAutoRearm"
            r"|AutomaticCheckEnabled|com\.apple\.SoftwareUpdate|DisableRegistration",
            joined,
        )
    ):
        yield _fx("defense-off", "changes login hooks, the firewall, quarantine or updates", joined)
    elif (
        tool == "defaults"
        and rest[:1] == ["write"]
        and re.search(r"com\.apple\.loginwindow", joined)
        and re.search(
            r"\b(?:HiddenUsersList|Hide500Users|HideAdminUsers|HideLocalUsers|SHOWOTHERUSERS_MANAGED)\b",
            joined,
        )
    ):
        yield _fx("account", "hides an account from the login window", joined)
    elif tool == "socketfilterfw" and re.search(
        r"--set(?:globalstate|stealthmode|blockall)\s+off|--add\b", joined
    ):
        yield _fx("defense-off", "turns off the application firewall")
    elif (
        tool == "xattr"
        and re.search(r"com\.apple\.quarantine|(?:^|\s)-[a-z]*c", joined)
        and not re.search(r"(?:^|\s)-[a-z]*[lp]\b", joined)
    ):
        yield _fx("defense-off", "removes the quarantine attribute (Gatekeeper bypass)", joined)
    elif tool == "tccutil" and rest[:1] == ["reset"] and (len(rest) < 3 or rest[1].lower() == "all"):
        # ``tccutil reset Camera com.acme.MyApp``: one app's own permission, asked again (testing)
        yield _fx("defense-off", "resets privacy (TCC) permissions")
    elif tool == "nvram" and re.search(r"boot-args|csr-active-config|-c\b|-d\b", joined):
        yield _fx("defense-off", "changes firmware boot arguments")
    elif tool == "systemsetup" and re.search(
        r"-setremote(?:login|appleevents)\s+on|-setwakeonnetworkaccess", joined
    ):
        yield _fx("defense-off", "turns on remote access")
    elif tool == "kickstart" and re.search(r"-activate|-configure", joined):
        yield _fx("defense-off", "turns on Apple Remote Desktop")
    elif (
        (tool == "dscl" and re.search(r"-(?:create|append|passwd|delete|change|merge)\b", joined))
        or (
            tool == "sysadminctl"
            and re.search(r"-(?:addUser|deleteUser|resetPasswordFor|secureTokenOn|adminUser)", joined)
        )
        or (tool == "dseditgroup" and re.search(r"-o\s+(?:edit|create)", joined))
        or (tool == "pwpolicy" and "-set" in joined)
        or tool == "createhomedir"
    ):
        yield _fx("account", f"{tool} changes macOS accounts or groups", joined)
    elif (
        tool == "security"
        and (
            re.search(
                r"\b(?:dump-keychain|export|find-(?:generic|internet)-password\b.*(?:^|\s)-[a-zA-Z]*[wg][a-zA-Z]*\b"
                r"|set-keychain-settings|add-trusted-cert|authorizationdb\s+write)\b",
                joined,
            )
            # a build keychain a CI job made and removes is not the user's; the login keychain is
            or (
                rest[:1] in (["delete-keychain"], ["set-key-partition-list"])
                and (
                    not [a for a in rest[1:] if a.endswith((".keychain", ".keychain-db"))]
                    or any(
                        _USER_KEYCHAIN.search(a)
                        for a in rest[1:]
                        if a.endswith((".keychain", ".keychain-db"))
                    )
                )
            )
        )
    ):
        yield _fx("keychain", f"security {rest[0] if rest else ''} reads or changes the keychain", joined)


def _secret_tool(argv: list[str]) -> Iterator[Effect]:
    if (
        (argv[0] == "secret-tool" and argv[1:2] in (["search"], ["lookup"]))
        or argv[0] in ("kwallet-query", "kwalletcli")
        or (argv[0] == "pass" and argv[1:2] in (["show"], ["-c"]))
    ):
        yield _fx("keychain", f"{argv[0]} reads stored secrets", " ".join(argv[1:]))


# ----------------------------------------------------------------- credential access
_PROC_SECRET = lazy_compile(
    r"^/proc/+(?:[0-9]+|self|\*|\$\w+|\$\(.*\))/+(?:mem|environ|maps)$|^if=/proc/+[^/]+/+mem$"
    r"|^/dev/+(?:k?mem|crash)$|^/proc/+kcore$"
)


_INTERPRETER = lazy_compile(
    r"^(?:python[0-9.]*|pypy[0-9.]*|perl|ruby|node|nodejs|deno|bun|php|lua[0-9.]*|Rscript)$"
)
_TRACE_CALL = lazy_compile(
    r"\bptrace\s*\(|\b(?:SYS|__NR)_ptrace\b|\bprocess_vm_(?:readv|writev)\b|\bPTRACE_(?:ATTACH|SEIZE|PEEK\w*)\b"
    r"|/proc/+(?:[0-9]+|\{[^}]*\}|%[ds]|\$\w+|\"\s*\+[^+]*\+\s*\")/+mem\b"
)
"""Interpreter code that attaches to or reads another process, whatever the binding (ctypes, ffi,
Fiddle, a syscall wrapper): the system call by name, or a process's mem file."""


def _debugger(argv: list[str]) -> Iterator[Effect]:
    tool = argv[0]
    attaches = tool in ("gdb", "lldb") and (
        any(
            a in ("-p", "--pid", "--attach-pid", "-n", "--attach-name")
            or a.startswith("--pid=")
            or a.startswith("--attach-pid")
            for a in argv
        )
        or any(re.search(r"^attach\s+\S|^process attach", a) for a in argv)
    )
    attaches = attaches or (
        tool in ("strace", "ltrace", "perf-trace")
        and any(a == "-p" or a.startswith("--attach") or re.match(r"^-p\S", a) for a in argv)
    )
    attaches = attaches or tool in ("gcore", "procdump", "memdump", "pmemsave", "avml", "LiME", "dumpcap-mem")
    if attaches:
        yield _fx("memory-access", f"{tool} attaches to or dumps another process", " ".join(argv[1:]))
    elif _INTERPRETER.match(tool) and any(_TRACE_CALL.search(a) for a in argv[1:]):
        yield _fx("memory-access", f"{tool} code traces or reads another process", tool)
    for arg in argv[1:]:
        if arg.startswith(("/", "if=")) and _PROC_SECRET.match(arg):
            yield _fx("memory-access", "reads another process's memory or environment", arg)
    yield from _raw_filesystem(argv)


#: File-system debuggers and forensic readers that open a device's file system themselves, so every
#: file on it (/etc/shadow, keys, another container's data) is readable whatever its permissions.
_RAW_FS_READERS = frozenset(
    {"debugfs", "icat", "fls", "istat", "ils", "ifind", "ffind", "tsk_recover", "ntfscat"}
)
_BLOCK_DEVICE = lazy_compile(
    r"^/+dev/+(?:[shv]d[a-z]|xvd[a-z]|nvme\d|mmcblk\d|dm-\d|md\d|loop\d|mapper/|disk/|r?disk\d|mtdblock\d|root$)"
)


def _raw_filesystem(argv: list[str]) -> Iterator[Effect]:
    """``debugfs /dev/sda1`` (and ``-w``, which also writes), sleuthkit's ``icat``: the disk read
    beneath the file permissions - the privileged-container and disk-group way to root's files."""
    if argv[0] in _RAW_FS_READERS:
        device = next((a for a in argv[1:] if _BLOCK_DEVICE.match(a)), None)
        if device is not None:
            yield _fx("memory-access", f"{argv[0]} reads a disk's files beneath their permissions", device)


_SECRET_NAME = lazy_compile(
    r"(?i)(?:\*?\.(?:pem|key|p12|pfx|ppk|kdbx|keychain|jks|ovpn|env)\b|\bid_(?:rsa|dsa|ecdsa|ed25519)"
    r"|\.env\b|credentials|\.git-credentials|\.netrc|\.npmrc|\.pypirc|\.pgpass|secret|passw|\.aws|\.ssh"
    r"|wallet|shadow|\*key\*|\.tfstate|\btfstate\b|Login Data|logins\.json|key[34]\.db"
    r"|cookies\.sqlite|\bCookies\b|\.kube\b|kubeconfig"
    r"|\.git-credentials|\.vault-token|\.docker/config\.json)"
)
_SECRET_TEXT = lazy_compile(
    r"(?i)passw|secret|api(?:[_-]|\[[^\]]{0,6}\]\??)?key|token|AKIA|ASIA|PRIVATE KEY|BEGIN [A-Z ]*KEY"
    r"|aws_access|ghp_|xox[a-z\[]"
    # the secret scanners' token prefixes (gitleaks, GitGuardian), in a search's regex spelling too
    r"|\b[sr]k_(?:live|test)_|\bshp(?:at|ss|ca|pa)_|\bhvs\\?\.|\bdop_v1_|\bya29\\?\.|pypi-AgE|\bSG\\?\.|\bsq0(?:atp|csp)-|\bglrt-"
    # (a prefix followed by a character class, `sk-[A-Za-z0-9]{20,}`, is a search for the token too)
    r"|sk-[a-z(\[]|credential|glpat-|github_pat_|AIza|hf_[a-z\[]|npm_(?:[a-z0-9]{8}|\[)|://[^@\n]{0,80}:[^@\n]{0,80}@"
)
"""Text a search for secrets looks for. The patterns it is matched against are the searches' own
regular expressions, so a user:password@ URL is found in its regex spelling too
(``postgres://[^ "]+:[^ "]+@``, whose character classes hold spaces)."""
_WIDE_ROOT = lazy_compile(
    r"^(?:/+proc/+\*/.*|/+|/+(?:home|root|Users|etc|var|opt|srv|mnt|media|proc)(?:/+[^/]*)?/*"
    r"|~[A-Za-z0-9._-]*/*|\$HOME/*|\$\{HOME\}/*"
    # the home's hidden folders, where tools keep their tokens (~/.config, ~/.local, ~/.docker),
    # whichever way the home is spelled
    r"|(?:~[A-Za-z0-9._-]*|\$HOME|\$\{HOME\}|/+home/+[^/]+|/+Users/+[^/]+|/+root)/+\.[^/]+/*)$"
)


_WALLET_WORDS = lazy_compile(
    r"(?i)\bseed[ _-]?phrase|\brecovery[ _-]?phrase|\bmnemonic\b|\bprivate[ _-]?key\b"
)
"""Words a search of file contents for a wallet's recovery words looks for."""


def _search(argv: list[str]) -> Iterator[Effect]:
    tool = argv[0]
    if tool == "find":
        roots: list[str] = []
        for arg in argv[1:]:
            if arg.startswith(("-", "(", "!")):
                break
            roots.append(arg)
        patterns = [
            argv[i + 1]
            for i, a in enumerate(argv[:-1])
            if a in ("-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-wholename", "-iwholename")
        ]
        if any(_WIDE_ROOT.match(r) for r in roots) and any(_SECRET_NAME.search(p) for p in patterns):
            yield _fx("secret-hunt", "searches the machine for secret files", " ".join(patterns))
    elif tool in ("grep", "egrep", "fgrep", "rg", "ag", "ack", "ugrep", "git-grep"):
        recursive = tool in ("rg", "ag", "ack", "ugrep") or any(
            re.match(r"^-[a-zA-Z]*[rR]|^--recursive|^--dereference-recursive", a) for a in argv[1:]
        )
        # after `--` every word is an operand (a pattern may start with dashes: `-- '-----BEGIN'`)
        end = argv.index("--") if "--" in argv else len(argv)
        operands = [a for a in argv[1:end] if not a.startswith("-")] + argv[end + 1 :]
        pattern_opt = _value(argv[:end], "-e", "--regexp")
        patterns = [pattern_opt] if pattern_opt else operands[:1]
        paths = operands if pattern_opt else operands[1:]
        every_process = any(p.startswith("/proc/") and "*" in p for p in paths)
        if (
            (recursive or every_process)
            and any(_WIDE_ROOT.match(p) for p in paths)
            and any(
                _SECRET_TEXT.search(p) or _SECRET_NAME.search(p)
                for p in patterns + [a for a in argv if a.startswith("--include")]
            )
        ):
            yield _fx("secret-hunt", "searches the machine for secrets", " ".join(patterns))
    elif tool in ("locate", "mlocate", "plocate", "mdfind") and any(_SECRET_NAME.search(a) for a in argv[1:]):
        yield _fx("secret-hunt", "searches the file index for secret files", " ".join(argv[1:]))
    elif (
        tool == "mdfind"
        and _value(argv, "-onlyin") not in (".", "./")
        and any(
            # Spotlight searches file contents too: ``mdfind "seed phrase"`` hunts for wallet words
            _SECRET_TEXT.search(a) or _WALLET_WORDS.search(a)
            for a in argv[1:]
            if not a.startswith("-")
        )
    ):
        yield _fx("secret-hunt", "searches the file index's contents for secrets", " ".join(argv[1:]))


# VS Code and its forks ship the same Remote Tunnels command (`cursor tunnel`, Straiker's NomShub)
_EDITOR_TUNNELS = frozenset({"code", "code-insiders", "cursor", "windsurf", "codium", "vscodium"})
_LOOPBACK_BIND = lazy_compile(r"^(?:127\.[0-9.]+|localhost|\[?::1\]?)(?::[0-9]+)?$")


def _open_editor_server(argv: list[str]) -> bool:
    """code-server or openvscode-server without authentication on an address other machines reach."""
    words = list(argv[1:])
    no_auth = any(
        w in ("--without-connection-token", "--auth=none")
        or (w == "--auth" and words[i + 1 : i + 2] == ["none"])
        for i, w in enumerate(words)
    )
    binds = [
        w.split("=", 1)[1] if "=" in w else (words[i + 1] if i + 1 < len(words) else "")
        for i, w in enumerate(words)
        if w.split("=", 1)[0] in ("--bind-addr", "--host")
    ]
    return no_auth and any(b and not _LOOPBACK_BIND.match(b) for b in binds)


# ----------------------------------------------------------------- network without a URL
_TUNNELS = frozenset(
    {
        "ngrok",
        "cloudflared",
        "chisel",
        "frpc",
        "frps",
        "bore",
        "lt",
        "localtunnel",
        "tunnelmole",
        "tmole",
        "iodine",
        "iodined",
        "dnscat",
        "dnscat2",
        "tor",
        "proxychains",
        "proxychains4",
        "gost",
        "sshuttle",
        "inlets",
        "zrok",
        "pinggy",
        "localxpose",
        "loclx",
        "serveo",
        "telebit",
        "rathole",
        "nps",
        "npc",
        "ligolo",
        "ligolo-ng",
        "revsocks",
        "dns2tcp",
        "dns2tcpc",
        "udp2raw",
        "ptunnel",
        "ptunnel-ng",
        "hans",
        "untun",
    }
)
_MINERS = frozenset(
    {
        "xmrig",
        "xmr-stak",
        "xmr-stak-cpu",
        "minerd",
        "cpuminer",
        "cpuminer-multi",
        "cpuminer-opt",
        "ccminer",
        "t-rex",
        "nbminer",
        "lolminer",
        "phoenixminer",
        "ethminer",
        "nanominer",
        "srbminer",
        "srbminer-multi",
        "teamredminer",
        "gminer",
        "bfgminer",
        "cgminer",
        "xmrig-notls",
    }
)


_POOL_PORTS = frozenset(
    {
        "3333",
        "3334",
        "4444",
        "5555",
        "6666",
        "7777",
        "8888",
        "9999",
        "14433",
        "14444",
        "45560",
        "45700",
        "10128",
    }
)
"""Ports mining pools listen on (stratum's customary ones)."""
_MINER_SWITCHES = lazy_compile(
    r"^(?:-B|--background|--donate-level(?:=\S*)?|--cpu-priority(?:=\S*)?|--randomx\S*|--coin(?:=\S*)?"
    r"|--rig-id(?:=\S*)?|--nicehash|--max-cpu-usage(?:=\S*)?|-k|--keepalive|--tls-fingerprint\S*"
    r"|(?:-a|--algo=?)\s*(?:rx/\S+|cn\S*|argon2\S*|ghostrider|kawpow|ethash|etchash|kheavyhash|autolykos\S*))$"
)
_MINER_ALGOS = lazy_compile(
    r"^(?:rx/\S+|cn\S*|argon2\S*|ghostrider|kawpow|ethash|etchash|kheavyhash|autolykos\S*)$"
)


def _pool_argument(argv: list[str]) -> bool:
    """An xmrig-style pool argument, whatever the binary is called: ``-o``/``--url`` with a
    scheme-less host:port, and a miner switch, a pool port or a wallet-length user beside it."""
    if "-o" not in argv and "--url" not in argv and not any(a.startswith("--url=") for a in argv):
        return False
    pools = [
        argv[i + 1] if a in ("-o", "--url") else a.split("=", 1)[1]
        for i, a in enumerate(argv)
        if (a in ("-o", "--url") and i + 1 < len(argv)) or a.startswith("--url=")
    ]
    pools = [
        p
        for p in pools
        if re.match(r"^[\w.-]+:\d{2,5}$", p) and not re.match(r"^(?:localhost|127\.|0\.0\.0\.0:)", p)
    ]
    if not pools:
        return False
    user = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-u", "--user")), "")
    algo = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-a", "--algo")), "")
    return (
        any(_MINER_SWITCHES.match(a) for a in argv[1:])
        or _MINER_ALGOS.match(algo) is not None
        or any(p.rsplit(":", 1)[1] in _POOL_PORTS for p in pools)
        or len(re.sub(r"[^A-Za-z0-9]", "", user)) >= 40
    )


_SSH_FORWARD = lazy_compile(r"^-[a-zA-Z0-9]*?([RLDwg])(.*)$")
_SSH_FORWARD_OPTION = lazy_compile(r"(?i)^(?:-o\s*)?(?:(?:Remote|Local|Dynamic)Forward|GatewayPorts)")
# A local forward bound to this machine's loopback: ``PORT:HOST:HOSTPORT`` (ssh binds it to
# localhost unless GatewayPorts or -g say otherwise) or an explicit loopback bind address.
_LOOPBACK_LOCAL_FORWARD = lazy_compile(
    r"^(?:(?:localhost|127\.0\.0\.1|\[::1\]|::1):)?[0-9]{1,5}:(?:\[[0-9A-Fa-f:.]+\]|[\w.-]+):[0-9]{1,5}$"
)


def _ssh_exposing_forward(argv: list[str]) -> bool:
    """Whether ssh forwards a path that carries data without a URL to check: a remote forward
    (-R: the remote side reaches into this machine), a dynamic SOCKS proxy (-D), a tun device
    (-w), forward options in -o, or a local forward (-L) that listens beyond loopback (a bind
    address, ``*``, or -g). A local forward on loopback only makes a remote service reachable
    from this machine, as a client connection to it would: it sends nothing by itself."""
    for index, arg in enumerate(argv[1:], start=1):
        if _SSH_FORWARD_OPTION.match(arg):
            return True
        found = _SSH_FORWARD.match(arg)
        if found is None or arg.startswith("--"):
            continue
        letter, rest = found.groups()
        if letter != "L":
            return True
        spec = rest or (argv[index + 1] if index + 1 < len(argv) else "")
        if not _LOOPBACK_LOCAL_FORWARD.match(spec):
            return True
    return False


_POOL_ADDRESS = lazy_compile(
    r"(?i)^(?:stratum\+?(?:tcp|ssl|tls)?://|.*pool\.[\w.-]+:\d+$|.*\.(?:nanopool|supportxmr"
    r"|moneroocean|minexmr|2miners|f2pool|nicehash)\.)"
)
"""A mining pool's address: a stratum URL, a ``pool.`` host with a port, a known pool's domain."""


def _network(argv: list[str]) -> Iterator[Effect]:
    tool = argv[0]
    if tool in _MINERS or _pool_argument(argv) or any(_POOL_ADDRESS.match(a) for a in argv[1:]):
        yield _fx("miner", f"{tool} mines cryptocurrency", next((a for a in argv[1:] if ":" in a), ""))
    elif (tool in _TUNNELS or _relay_listener(argv)) and not _tunnel_bookkeeping(argv):
        yield _fx("tunnel", f"{tool} opens a tunnel or proxy", " ".join(argv[1:3]))
    elif tool in ("ssh", "autossh"):
        if _ssh_exposing_forward(argv):
            yield _fx("tunnel", "ssh forwards ports", " ".join(argv[1:]))
        elif any(
            re.match(r"^-[a-zA-Z]*[XY]", a) or re.match(r"(?i)^-oForwardX11|ForwardX11\s*=?\s*yes", a)
            for a in argv[1:]
        ):
            yield _fx("x-display", "ssh forwards the X display", " ".join(argv[1:]))
    elif tool == "xhost" and any(a.startswith("+") for a in argv[1:]):
        yield _fx("x-display", "opens the X display to other hosts", " ".join(argv[1:]))
    elif (tool in _EDITOR_TUNNELS and argv[1:2] == ["tunnel"]) or (
        tool == "tailscale" and argv[1:2] in (["funnel"], ["serve"])
    ):
        yield _fx("tunnel", f"{tool} exposes this machine", " ".join(argv[1:3]))
    elif tool in ("code-server", "openvscode-server") and _open_editor_server(argv):
        # the editor (a terminal, the files) served to other machines without a password (the
        # Manus kill chain exposed its VS Code server this way)
        yield _fx("tunnel", f"{tool} serves an editor and shell without authentication", " ".join(argv[1:]))
    elif (
        tool == "socat"
        and any(re.match(r"(?i)^(?:tcp|tcp4|tcp6|openssl|udp)(?:-listen)?:", a) for a in argv[1:])
        and any(re.match(r"(?i)^(?:exec|system|tcp|openssl):", a) for a in argv[2:])
        and not all(_LOCAL_SOCAT_ADDRESS.match(a) for a in argv[1:] if not a.startswith("-"))
    ):
        yield _fx("tunnel", "socat relays a connection", " ".join(argv[1:]))


_TUNNEL_BOOKKEEPING = {
    "cloudflared": lazy_compile(
        r"^(?:-v|--version|version|help|-h|--help|update|login"
        r"|tunnel (?:login|create|list|info|delete|cleanup|token|route|ingress (?:validate|rule))(?: \S+)*)$"
        r"|^access (?:login|token|curl|tcp|ssh|rdp)\b"
    ),
    "ngrok": lazy_compile(
        r"^(?:-v|--version|version|help|-h|--help|update|diagnose|completion(?: \S+)?"
        r"|config (?:check|upgrade|edit)|config add-authtoken \S+|api(?: \S+)*)$"
    ),
    "zrok": lazy_compile(r"^(?:version|status|overview|enable \S+|disable|ls|login|invite)$"),
    "devtunnel": lazy_compile(
        r"^(?:-v|--version|user (?:login|logout|show)(?: \S+)*|list|show(?: \S+)?|delete(?: \S+)*)$"
    ),
}
"""What a tunnel client does besides running a tunnel: sign in, create or list named tunnels,
check its configuration, print its version, or (``cloudflared access``) connect out as a client
through an access proxy, as ``ssh -L`` on loopback does. None of it exposes this machine."""


_CONTAINER_ENGINES = frozenset({"docker", "podman", "nerdctl"})


def containerised_tunnels(commands: list[list[str]]) -> Iterator[Effect]:
    """``docker run --net host cloudflare/cloudflared tunnel --url ssh://localhost:22``: a tunnel
    client's image run, read as the client itself with the container's command as its arguments
    (the unwrapper lists the engine's line up to the image, then the container's command). An
    image run without a command of its own keeps its entrypoint's defaults, which the line does not
    show, and is read as a tunnel."""
    for index, argv in enumerate(commands):
        if argv[0] not in _CONTAINER_ENGINES or "run" not in argv[1:4] or len(argv) < 3:
            continue
        name = argv[-1].rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
        if name in _TUNNELS:
            after = commands[index + 1] if index + 1 < len(commands) else []
            yield from _network([name, *after])


_ONLY_HELP = frozenset({"-h", "--help", "-help", "help", "-V", "--version", "-version", "version"})
_LOOPBACK_HOST = lazy_compile(r"^(?:127(?:\.\d+){3}|localhost|::1|\[::1\])$")


def _tunnel_bookkeeping(argv: list[str]) -> bool:
    """A tunnel client asked only for its help or version, a chisel server bound to loopback (no
    one outside reaches it), or the client's own bookkeeping verbs (sign-in, list, ...)."""
    if len(argv) > 1 and all(a in _ONLY_HELP for a in argv[1:]):
        return True
    if argv[0] == "chisel" and argv[1:2] == ["server"] and _LOOPBACK_HOST.match(_value(argv, "--host") or ""):
        return True
    pattern = _TUNNEL_BOOKKEEPING.get(argv[0])
    if pattern is None:
        return False
    spoken = " ".join(a for a in argv[1:] if not a.startswith("--") or a in ("--version", "--help"))
    return bool(pattern.match(spoken.strip()))


def _relay_listener(argv: list[str]) -> bool:
    """Relay clients that publish this machine through a third party's relay without being named
    tunnels: Microsoft Dev Tunnels hosting a port, gsocket's netcat or shell listening on the
    relay (``gs-netcat -l``, ``-i`` for an interactive shell), and web terminals serving a shell
    on every interface."""
    tool, rest = argv[0], argv[1:]
    if tool == "devtunnel":
        return bool(rest) and rest[0] == "host"
    if tool in ("gs-netcat", "gs-sftp", "gs-mount", "gsocket"):
        return True
    if tool in ("ttyd", "gotty", "wetty", "sshx", "upterm", "tmate"):
        return tool != "tmate" or not rest or rest[0] not in ("-V", "--version")
    return False


_LOCAL_SOCAT_ADDRESS = lazy_compile(
    r"(?i)^(?:tcp[46]?|udp[46]?)-listen:[0-9]+(?:,[^,]*)*,bind=(?:127\.0\.0\.1|localhost|\[?::1\]?)(?:,[^,]*)*$"
    r"|^(?:tcp[46]?|udp[46]?):(?:127\.0\.0\.1|localhost|\[::1\]):[0-9]+(?:,[^,]*)*$"
)
"""A socat address on this machine only: a listener bound to loopback, a connection to loopback
(a listener without ``bind=`` listens on every interface and is not this)."""

_SECRET_STORES = lazy_compile(
    r"(?i)(?:google-chrome|chromium|chrome|brave|BraveSoftware|microsoft-edge|Edge|vivaldi|opera"
    r"|yandex)[^\n]*/(?:Cookies|Login Data|Web Data|Local State|Network/+Cookies)(?:-journal)?$"
    r"|/(?:cookies\.sqlite|logins\.json|key[34]\.db|signons\.sqlite|cert9\.db|formhistory\.sqlite)$"
    r"|Cookies\.binarycookies$"
    r"|/Library/+Keychains(?:/|$)|\.keychain(?:-db)?$|/\.local/+share/+keyrings/|/kwalletd?/|\.kwl$"
    # the local directory's user records (each holds its ShadowHashData), and the wallets and
    # messengers the macOS stealers take (AMOS, Banshee, Poseidon: Ledger Live, Atomic, Discord)
    r"|/var/+db/+dslocal/+nodes(?:/|$)"
    r"|/Library/+Application Support/+(?:Ledger Live|atomic|Guarda|Coinomi|Wasabi|Binance|Exodus|Electrum"
    r"|discord/+Local Storage|Telegram Desktop)(?:/|$)"
    r"|/com\.apple\.TCC/+TCC\.db$|/TCC\.db$"
    r"|/\.config/+(?:gh/+hosts\.yml|hub|op/+config|Bitwarden[^/]*/+data\.json)$|\.kdbx$|/Library/+Cookies/"
    r"|/krb5cc_[^/]*$"  # Kerberos ticket caches
)


_KEYCHAIN_SETUP = frozenset(
    {"create-keychain", "import", "set-key-partition-list", "delete-keychain", "unlock-keychain",
     "list-keychains", "default-keychain", "set-keychain-settings", "show-keychain-info"}
)  # fmt: skip
"""``security`` sub-commands that make, fill, unlock or remove a keychain without printing it: of
a CI job's own build keychain (``$RUNNER_TEMP/app-signing.keychain-db``) they read no one's
secrets; of the login keychain the ``_macos`` table judges them."""


def _stores(argv: list[str]) -> Iterator[Effect]:
    own_keychain = argv[0] == "security" and argv[1:2] and argv[1] in _KEYCHAIN_SETUP
    for arg in argv[1:]:
        if "/" not in arg:
            continue  # nor in the path taken from it
        path = arg[5:] if arg.startswith("file:") else arg
        path = path.split("?", 1)[0]
        if own_keychain and path.endswith((".keychain", ".keychain-db")) and not _USER_KEYCHAIN.search(path):
            continue
        if "/" in path and _SECRET_STORES.search(path):
            yield _fx("secret-store", f"{argv[0]} touches a browser, keychain or privacy store", path)
            return
    if argv[0] in ("tar", "bsdtar", "gtar"):
        # ``tar czf k.tgz -C ~/Library Keychains``: the members are named relative to -C's folder
        folder = _value(argv, "-C", "--directory")
        if folder:
            for arg in argv[1:]:
                if not arg.startswith("-") and arg != folder and _SECRET_STORES.search(f"{folder}/{arg}"):
                    yield _fx("secret-store", f"{argv[0]} packs a browser, keychain or privacy store", arg)
                    return


_GUARDED_MOUNTS = frozenset({"mount", "umount"})
_OSASCRIPT_PERSISTS = lazy_compile(
    r"(?i)\b(?:make|new|delete)\b[^\n]*\blogin item|loginItems\s*\.\s*push\s*\(|LoginItem\s*\("
    r"|LaunchAgents|LaunchDaemons|do shell script[^\n]*(?:sudo|administrator privileges)"
    r"|doShellScript\s*\([^\n]*administratorPrivileges\s*:\s*true"
)
"""AppleScript or JXA that adds (or removes) a login item, touches launchd's folders or runs a
shell as root; listing the login items (``get the name of every login item``) is none of these."""
_OSASCRIPT_PERSONAL = lazy_compile(
    r"(?i)tell app(?:lication)? \"(?:Notes|Mail|Messages)\"[^\n]*"
    r"\b(?:body|plaintext|content|source|every (?:note|message|chat))\b"
    r"|tell app(?:lication)? \"Contacts\"[^\n]*\bevery person\b"
    r"|Application\(\s*[\"'](?:Notes|Mail|Messages|Contacts)[\"']\s*\)[^\n]*"
    r"\.(?:body|plaintext|content|source|people)\s*\("
)
"""AppleScript or JXA reading the bodies of the user's notes, mail or messages, or every contact
(the Poseidon and AMOS collection step): the stores TCC guards, read through the apps."""


def _host_guards(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    if tool in _GUARDED_MOUNTS and any(
        re.match(r"^/+(?:sys/+fs/+selinux|sys/+kernel/+security|proc/+sys)(?:/|$)", a) for a in rest
    ):
        yield _fx("defense-off", f"{tool} of a kernel security file system", " ".join(rest))
    elif tool == "osascript" and any(_OSASCRIPT_PERSISTS.search(a) for a in rest):
        yield _fx(
            "persistence", "AppleScript adds a login item or runs a privileged shell", " ".join(rest)[:80]
        )
    elif tool == "osascript" and any(_OSASCRIPT_PERSONAL.search(a) for a in rest):
        yield _fx("secret-store", "AppleScript reads the user's notes, mail or messages", " ".join(rest)[:80])
    elif tool == "sfltool" and rest[:1] in (["add-item"], ["resetbtm"], ["clear"]):
        yield _fx("persistence", "sfltool changes login items", " ".join(rest))


def hunts_through_xargs(commands: list[list[str]]) -> Iterator[Effect]:
    """``find / -name config | xargs grep -l 'https://.*:.*@'``: a machine-wide file listing fed
    to a search for secrets, the line-level form of ``grep -r`` over the same root."""
    if not any(c[0] == "xargs" for c in commands):
        return
    wide = any(
        c[0] == "find" and any(_WIDE_ROOT.match(a) for a in c[1:] if not a.startswith(("-", "(", "!")))
        for c in commands
    )
    if not wide:
        return
    for c in commands:
        if c[0] in ("grep", "egrep", "fgrep", "rg", "ag", "ugrep"):
            operands = [a for a in c[1:] if not a.startswith("-")]
            pattern = _value(c, "-e", "--regexp") or (operands[0] if operands else "")
            if pattern and (_SECRET_TEXT.search(pattern) or _SECRET_NAME.search(pattern)):
                yield _fx("secret-hunt", "searches the files of the whole machine for secrets", pattern)
                return


_PATH_WORD = r"[^\s/;&|()`'\"<>]+"
_HIDDEN_TEMP_PATH = lazy_compile(
    r"(?:^|[\s;&|(`])(/+(?:tmp|var/+tmp|dev/+shm)/+(?:"
    + _PATH_WORD
    + r"/+)*\."
    + _PATH_WORD
    + r"(?:/+"
    + _PATH_WORD
    + r")*)"
)
_HIDDEN_HERE = lazy_compile(r"(?:^|[\s;&|(`])\./+(\." + _PATH_WORD + r"(?:/+" + _PATH_WORD + r")*)")
_INTO_TEMP = lazy_compile(r"(?:^|[\s;&|(])cd\s+/+(?:tmp|var/+tmp|dev/+shm)(?:/|\s|;|&|\||$)")


def hidden_temp_programs(line: str, commands: list[list[str]]) -> Iterator[Effect]:
    """A program run from a dot-named file or folder of /tmp, /var/tmp or /dev/shm
    (``nohup /var/tmp/.x/kworker &``, ``cd /dev/shm; ./.d``): where droppers put what they run so
    that a listing of the folder does not show it. The path's last name must be a program the line
    runs, so a file of such a folder only read or written (``cat /tmp/.x/log``) is not this."""
    if "/." not in line and "./." not in line:
        return
    programs = {c[0] for c in commands if c}
    found = [m.group(1) for m in _HIDDEN_TEMP_PATH.finditer(line)]
    if _INTO_TEMP.search(line):
        found.extend(m.group(1) for m in _HIDDEN_HERE.finditer(line))
    for path in found:
        if path.rstrip("/").rsplit("/", 1)[-1] in programs:
            yield _fx(
                "defense-off", "runs a program hidden under a dot-name in a world-writable folder", path
            )
            return


_ENCRYPTING = {
    "7z": ("-p", "-mhe"),
    "7za": ("-p", "-mhe"),
    "7zz": ("-p", "-mhe"),
    "zip": ("-e", "--encrypt", "-P", "--password"),
    "rar": ("-p", "-hp"),
    "gpg": ("-c", "--symmetric"),
    "age": ("-p", "--passphrase"),
}


def _encrypts(argv: list[str]) -> bool:
    name = argv[0].rsplit("/", 1)[-1]
    if name == "openssl":
        return "enc" in argv[1:3] and "-d" not in argv
    switches = _ENCRYPTING.get(name)
    return switches is not None and any(
        a == s or (len(s) == 2 and a.startswith(s)) for a in argv[1:] for s in switches
    )


def hidden_staging(line: str, commands: list[list[str]]) -> Iterator[Effect]:
    """Data staged in a dot-named folder of /tmp, /var/tmp or /dev/shm and packed into a
    password-protected archive or an encrypted file there (``7z a -pX /tmp/.s.7z /tmp/.s/``,
    ``tar czf - /tmp/.s | openssl enc -aes-256-cbc ...``): collection hidden from a listing and
    made unreadable to whoever inspects it before it leaves (T1074.001 local staging, T1560.001
    archive via utility). An encrypted backup into the project or a named folder is not this."""
    if "/." not in line:
        return
    if not _HIDDEN_TEMP_PATH.search(line):
        return
    for argv in commands:
        if argv and _encrypts(argv):
            yield _fx(
                "defense-off",
                "packs data staged in a hidden temp folder into an encrypted archive",
                " ".join(argv[:3]),
            )
            return


_LISTERS = frozenset({"ps", "top", "htop", "pstree", "pgrep", "pidof"})
_FILTERS = frozenset({"grep", "egrep", "fgrep", "rg", "awk", "gawk", "mawk", "sed"})
_DAEMON_LITERALS: tuple[str, ...] = tuple(n.removesuffix("*").lower() for p in PRODUCTS for n in p.daemons)
"""Every product daemon's name (a ``*`` family by its prefix), lower case: what a substring
pattern is searched in."""


def _filter_patterns(argv: list[str]) -> list[str]:
    """The patterns a process listing's filter selects lines by: grep's operands (not an inverted
    ``grep -v``), awk's and sed's ``/regex/`` addresses."""
    if argv[0] in ("awk", "gawk", "mawk", "sed"):
        return [m.group(1) for a in argv[1:] for m in re.finditer(r"/((?:[^/\\]|\\.)+)/", a)]
    options = [a for a in argv[1:] if a.startswith("-")]
    if any(o == "--invert-match" or (not o.startswith("--") and "v" in o) for o in options):
        return []
    named = [a for a in argv[1:] if not a.startswith("-")]
    explicit = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-e", "--regexp")]
    return explicit or named[:1]


def _selects_daemon(pattern: str) -> bool:
    """Whether a substring pattern (grep's, with the ``[x]yz`` trick undone) matches a security
    or logging daemon's process name: an alternative of 4+ plain characters found in one."""
    text = re.sub(r"\[([^\]^])\]", r"\1", pattern).replace("\\|", "|")
    for part in re.split(r"[|()]+", text):
        part = part.strip("^$ .*").lower()
        if (
            len(part) >= 4
            and re.fullmatch(r"[\w.-]+", part)
            and (DAEMON_NAMES.match(part) or any(part in name for name in _DAEMON_LITERALS))
        ):
            return True
    return False


def killed_daemons(commands: list[list[str]]) -> Iterator[Effect]:
    """``kill $(pgrep auditd)``: a kill on a line that looks up a security daemon's process; and
    the same lookup spelled as a process listing filtered by a pattern (``ps aux | grep -i falc |
    awk '{print $2}' | xargs kill -9``, the ``[w]azuh`` trick included): what ``pkill -f`` of the
    pattern does, whatever the words in between."""
    if any(c[0] in ("kill", "pkill", "killall") for c in commands):
        for argv in commands:
            if argv[0] in ("pgrep", "pidof", "pkill", "killall") and any(
                # a pattern's alternatives each name a process: ``pgrep -f "falcon|osquery"``
                DAEMON_NAMES.match(part.strip("^$ "))
                for a in argv[1:]
                if not a.startswith("-")
                for part in re.split(r"[|()]+", a)
            ):
                yield _fx("defense-off", "kills a security or logging daemon", " ".join(argv[1:]))
                return
        if any(c[0] in _LISTERS for c in commands):
            for argv in commands:
                if argv[0] in _FILTERS and any(_selects_daemon(p) for p in _filter_patterns(argv)):
                    yield _fx(
                        "defense-off",
                        "kills the processes of a security or logging daemon found by a pattern",
                        " ".join(argv[1:])[:80],
                    )
                    return


HOST_HANDLERS = {
    "sysctl": _sysctl,
    "chattr": _chattr,
    "touch": _touch,
    **dict.fromkeys(
        (
            "spctl",
            "csrutil",
            "fdesetup",
            "tmutil",
            "log",
            "launchctl",
            "kextload",
            "kextutil",
            "kmutil",
            "defaults",
            "socketfilterfw",
            "xattr",
            "tccutil",
            "nvram",
            "systemsetup",
            "kickstart",
            "dscl",
            "sysadminctl",
            "dseditgroup",
            "pwpolicy",
            "createhomedir",
            "security",
        ),
        _macos,
    ),
    **dict.fromkeys(("secret-tool", "kwallet-query", "kwalletcli", "pass"), _secret_tool),
    **dict.fromkeys(
        (
            "find",
            "grep",
            "egrep",
            "fgrep",
            "rg",
            "ag",
            "ack",
            "ugrep",
            "locate",
            "mlocate",
            "plocate",
            "mdfind",
        ),
        _search,
    ),
}
"""The host effect readers by program name (argv[0] basename)."""


def _by_program(argv: list[str]) -> Iterable[Effect]:
    reader = HOST_HANDLERS.get(argv[0])
    return reader(argv) if reader is not None else ()


COMMAND_READERS: tuple[CommandReader, ...] = (
    (frozenset(HOST_HANDLERS), _by_program),
    (None, _debugger),
    (None, _network),
    (None, _stores),
    (_GUARDED_MOUNTS | {"osascript", "sfltool"}, _host_guards),
)
"""The per-command readers here in order, each with the programs it reads (``shell.acts``
dispatches on them): the program table, then the readers that look at every command's arguments
(debuggers and /proc, network tools, secret stores), then the kernel file systems' guards."""


def host_command_acts(argv: list[str]) -> list[Effect]:
    """The host effects of one command: its program's table plus the readers that look at every
    command's arguments (debuggers and /proc, network tools, secret stores, kernel file systems)."""
    return [
        effect for programs, reader in COMMAND_READERS if runs(programs, argv[0]) for effect in reader(argv)
    ]
