"""Effects of the techniques a blind probe (tests/corpus/probe4) found unread outside the cloud:
container escapes that never say ``docker run``, attacker tooling run by name, credentials taken
from vaults and the wire, defences removed through their own control programs, and data carried
in ICMP. Each is read as an effect, not a spelling:

- ``host-escape``: the container engine driven through its API socket with a mutating request
  (``curl --unix-socket .../docker.sock -X POST``, ``socat``/``nc -U`` to the socket), a cgroup
  v1 hierarchy mounted or its ``release_agent``/``notify_on_release`` written, ``nsenter`` into
  pid 1's namespaces, a ``chroot`` run inside a container (into the host's mounted root), and
  escape toolkits run by name;
- ``shell-listener``: handlers that wait for reverse shells (pwncat, penelope, Metasploit's
  console, sliver and the like) and ``nc``/``ncat`` listening with a program to hand out;
- ``secret-hunt``: credential dumpers run by name (also as ``python3 dumper.py``) and
  packet captures printed and searched for authorization headers or passwords;
- ``keychain``: a password manager's whole vault exported;
- ``defense-off``: a security agent's own CLI told to uninstall, unload or disable it, a firewall
  table or chain deleted, a bind mount over ``/proc/<pid>`` (hides a process), a code signature
  stripped from an installed application;
- ``tunnel``: data carried in ICMP padding (``ping -p``, ``hping3 -E``, ``nping --data``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect, runs
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.effects.security_products import CONTROL_PROGRAMS, INSTALL_FOLDERS
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS", "escape_command_acts", "escape_line_acts", "uninstalled_agents"]

_ENGINE_SOCKET = lazy_compile(r"(?:docker|containerd|podman|crio|cri-dockerd|dockershim|buildkitd?)\.sock\b")
_MUTATING_FLAG = lazy_compile(
    r"^(?:-X|--request)(?:=?(?:POST|PUT|DELETE|PATCH))?$|^-[dF]|^--data|^--form|^-T$"
)


_SCRIPT_EXTENSION = lazy_compile(r"\.(?:py|pl|rb|sh|exe|ps1|js|bin)$")


def _stem(word: str) -> str:
    """A program or script name without its folder and extension, lower-cased."""
    base = word.rsplit("/", 1)[-1].lower()
    return _SCRIPT_EXTENSION.sub("", base)


_SCRIPT_RUNNERS = lazy_compile(r"^(?:python[0-9.]*|pypy[0-9.]*|perl|ruby|node|bash|sh|zsh|dash|php)$")
"""Programs whose first operands :func:`_named` also counts as the names a command runs."""


def _named(argv: list[str]) -> list[str]:
    """The names a command runs: its program, and the script an interpreter or shell is given."""
    names = [_stem(argv[0])]
    if _SCRIPT_RUNNERS.match(argv[0]):
        names.extend(_stem(a) for a in argv[1:3] if not a.startswith("-"))
    return names


_ESCAPE_TOOLS = frozenset({"deepce", "botb", "break-out-the-box", "cdk-escape", "kubeletctl-exec"})
_DUMPERS = frozenset(
    {"mimipenguin", "lazagne", "mimikatz", "pypykatz", "secretsdump", "gosecretsdump", "hack-browser-data",
     "firefox_decrypt", "firepwd", "chromepass", "sharpchrome", "dploot", "3snake", "swap_digger",
     "truffleproc", "linikatz", "keytabextract", "lsassy", "nanodump"}
)  # fmt: skip
_SNIFFERS = frozenset(
    {"dsniff", "ettercap", "bettercap", "responder", "net-creds", "pcredz", "credsniper", "arpspoof",
     "dnsspoof", "mitm6", "macof", "urlsnarf", "mailsnarf", "msgsnarf"}
)  # fmt: skip
_HANDLERS = frozenset(
    {"pwncat", "pwncat-cs", "pwncat-vl", "penelope", "villain", "hoaxshell", "msfconsole", "sliver-server",
     "sliver-client", "sliver", "havoc", "empire", "powershell-empire", "covenant", "mythic-cli"}
)  # fmt: skip
_REMOVE_VERBS = lazy_compile(
    r"^(?:-d|--delete|uninstall|--uninstall|unload|remove|disable|disabled|stop|unprotect|unmanage|--disable[\w-]*"
    r"|removeFramework|--unload)$"
)
_SECRET_WORDS = lazy_compile(
    r"(?i)authori[sz]ation|\bpass(?:w(?:or)?d)?\b|passw|pwd=|pass=|cookie|token|secret|bearer|credential|user(?:name)?="
)


_SOCKET_CLIENTS = frozenset({"socat", "nc", "ncat", "netcat"})


def _engine_api(argv: list[str]) -> Iterator[Effect]:
    tool = argv[0]
    if tool == "curl":
        socket = _value(argv, "--unix-socket", "--abstract-unix-socket") or ""
        mutating = any(_MUTATING_FLAG.match(a) for a in argv[1:]) or any(
            re.search(r"/(?:containers/create|exec|containers/[^/\s]+/(?:start|exec)|services/create)\b", a)
            for a in argv[1:]
        )
        if _ENGINE_SOCKET.search(socket) and mutating:
            yield _fx("host-escape", "drives the container engine's API through its socket", socket)
    elif tool in _SOCKET_CLIENTS and any(_ENGINE_SOCKET.search(a) for a in argv[1:]):
        yield _fx("host-escape", f"{tool} talks to the container engine's socket", " ".join(argv[1:3]))


def _joins_pid_one(rest: list[str]) -> bool:
    return (
        any(re.match(r"^(?:-t|--target)=?1$", a) for a in rest)
        or any(rest[i] in ("-t", "--target") and rest[i + 1] == "1" for i in range(len(rest) - 1))
        or any(re.search(r"/proc/+1/+ns/", a) for a in rest)
    )


_BLOCK_DEVICE = lazy_compile(
    r"^/+dev/+(?:(?:s|h|v|xv)d[a-z]+\d*|nvme\d+n\d+(?:p\d+)?|mmcblk\d+(?:p\d+)?|dm-\d+|mapper/|disk/)"
)
_EXEC_RIGHTS = lazy_compile(r"(?:^|,)(?:suid|exec|dev)(?:,|$)")


def _adds_exec_rights(rest: list[str]) -> bool:
    """``mount -o remount,suid,exec /tmp``: a hardened mount's noexec/nosuid/nodev taken back."""
    options = [rest[i + 1] for i in range(len(rest) - 1) if rest[i] == "-o"]
    options += [a.split("=", 1)[1] for a in rest if a.startswith("--options=")]
    return any("remount" in o and _EXEC_RIGHTS.search(o) for o in options)


def _escape(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    if tool == "mount" and (
        any(a == "cgroup" for a in rest) and ("-t" in rest or any(a.startswith("--types") for a in rest))
    ):
        yield _fx("host-escape", "mounts a cgroup v1 hierarchy (release_agent escape)", " ".join(rest))
    elif tool == "mount" and any(_BLOCK_DEVICE.match(a) for a in rest):
        # the host's disk read and written under the container's (or the user's) own rules
        yield _fx("host-escape", "mounts a raw disk device", next(a for a in rest if _BLOCK_DEVICE.match(a)))
    elif tool == "mount" and _adds_exec_rights(rest):
        yield _fx("privilege", "remounts a file system allowing set-uid or executable files", " ".join(rest))
    elif "nsenter" in argv and _joins_pid_one(argv[argv.index("nsenter") + 1 :]):
        # also inside a container runtime's exec (crictl exec ID nsenter ..., docker exec ...)
        yield _fx("host-escape", "nsenter joins the host's pid 1 namespaces", " ".join(rest))
    elif (
        (names := _named(argv))
        and (  # never empty: named only past the cheaper tests
            any(n in _ESCAPE_TOOLS for n in names)
            or (names[0] == "cdk" and rest[:1] in (["run"], ["auto-escape"], ["evaluate"], ["auto-pwn"]))
        )
    ):
        yield _fx("host-escape", f"runs a container escape toolkit ({names[-1]})", " ".join(rest[:3]))


_NARROWED_LISTING = ("--search", "--url", "--folderid", "--collectionid")
_VAULTS = frozenset({"bw", "lpass", "keepassxc-cli", "dcli", "op", "gopass", "rbw"})


def _names_credential_tool(program: str) -> bool:
    """Whether :func:`_credentials` reads commands of ``program``: a dumper or sniffer by name, a
    script runner (its script may be one), or a password vault's client."""
    return (
        bool(_SCRIPT_RUNNERS.match(program)) or _stem(program) in _DUMPERS | _SNIFFERS or program in _VAULTS
    )


def _credentials(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    names = _named(argv)
    hit = next((n for n in names if n in _DUMPERS or n in _SNIFFERS), "")
    if hit:
        yield _fx("secret-hunt", f"runs a credential dumper or sniffer ({hit})", " ".join(rest[:3]))
    words = _words(argv)
    if (
        (tool == "bw" and words[:1] == ["export"])
        # every item of the vault with its secrets (a search or a folder narrows it to a lookup)
        or (
            tool == "bw"
            and words[:2] == ["list", "items"]
            and not any(a.split("=")[0] in _NARROWED_LISTING for a in rest)
        )
        or (tool == "lpass" and words[:1] == ["export"])
        or (tool == "keepassxc-cli" and words[:1] in (["export"], ["show"]) and "-s" in rest)
        or (tool == "keepassxc-cli" and words[:1] == ["export"])
        or (tool == "dcli" and words[:1] == ["export"])
        or (tool == "op" and words[:1] == ["export"])
        or (tool in ("gopass", "rbw") and words[:1] in (["export"], ["sync-dump"]))
    ):
        yield _fx("keychain", f"{tool} exports a password vault", " ".join(words[:2]))


def _defences(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    if tool in CONTROL_PROGRAMS and any(_REMOVE_VERBS.match(a) for a in rest):
        yield _fx("defense-off", f"{tool} removes or disables its own security agent", " ".join(rest[:3]))
    elif tool == "nft" and len(_words(argv)) >= 2 and _words(argv)[0] in ("delete", "destroy", "flush"):
        what = _words(argv)[1]
        if what in ("table", "chain", "ruleset"):
            yield _fx("defense-off", f"nft {_words(argv)[0]}s a firewall {what}", " ".join(rest))
    elif tool == "mount" and (
        any(a in ("--bind", "-B", "--rbind") for a in rest)
        or re.search(r"\br?bind\b", _value(argv, "-o", "--options") or "")
    ):
        options = _value(argv, "-o", "--options")
        bound = [a for a in rest if not a.startswith("-") and a != options]
        if bound and re.match(r"^/+proc/+[^/]+", bound[-1]) and not re.match(r"^/+proc/+sys\b", bound[-1]):
            yield _fx("defense-off", "bind-mounts over a /proc entry (hides a process)", bound[-1])
    elif tool == "codesign" and (
        "--remove-signature" in rest or (any(a in ("-f", "--force") for a in rest) and "-" in rest)
    ):
        targets = [a for a in rest if a.startswith("/")]
        if any(re.match(r"^/+(?:Applications|System|Library|usr|opt|bin|sbin)/", t) for t in targets):
            yield _fx(
                "defense-off", "strips or replaces the code signature of an installed program", targets[-1]
            )


_PINGS = frozenset({"ping", "ping6"})
_NETCATS = frozenset({"nc", "ncat", "netcat", "nc.traditional", "nc.openbsd"})


def _network(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    if tool in _PINGS and any(a == "-p" or re.match(r"^-[a-zA-Z]*p\S", a) for a in rest):
        yield _fx("tunnel", "ping carries data in its ICMP padding", " ".join(rest))
    elif tool == "hping3" and any(a in ("-E", "--file", "-e", "--sign") for a in rest):
        yield _fx("tunnel", "hping3 carries file data in packets", " ".join(rest))
    elif tool == "nping" and any(a.startswith(("--data", "--data-string")) for a in rest):
        yield _fx("tunnel", "nping carries data in packets", " ".join(rest))
    elif _stem(tool) in _HANDLERS:
        yield _fx("shell-listener", f"{tool} waits for reverse shells", " ".join(rest[:3]))
    elif (
        tool in _NETCATS
        and any(re.match(r"^-[a-zA-Z]*l", a) or a == "--listen" for a in rest)
        and any(re.match(r"^-[a-zA-Z]*[ec]$", a) or a in ("--exec", "--sh-exec", "--lua-exec") for a in rest)
    ):
        yield _fx("shell-listener", f"{tool} listens and hands a program to whoever connects", " ".join(rest))


COMMAND_READERS: tuple[CommandReader, ...] = (
    (_SOCKET_CLIENTS | {"curl"}, _engine_api),
    (None, _escape),  # nsenter is read wherever it sits in the command (crictl exec ID nsenter ...)
    (_names_credential_tool, _credentials),
    (CONTROL_PROGRAMS | {"nft", "mount", "codesign"}, _defences),
    (
        lambda program: program in _PINGS | _NETCATS | {"hping3", "nping"} or _stem(program) in _HANDLERS,
        _network,
    ),
)
"""The per-command readers here in order, each with the programs it reads (``shell.acts``
dispatches on them)."""


def escape_command_acts(argv: list[str]) -> list[Effect]:
    """The effects above for one unwrapped command (argv[0] is a basename)."""
    return [
        effect for programs, reader in COMMAND_READERS if runs(programs, argv[0]) for effect in reader(argv)
    ]


def uninstalled_agents(line: str, commands: list[list[str]]) -> Iterator[Effect]:
    """A security product's uninstaller run from its install folder
    (``sudo /opt/sophos-spl/bin/uninstall.sh``, ``bash .../Falcon/.../uninstall``). The reader
    keeps only a program's base name, so the line's words are searched: a path whose last part
    names an uninstaller and whose folders name a security product."""
    if not any(any("uninstall" in n or "remove" in n for n in _named(c)) for c in commands if c):
        return
    for word in re.split(r"[\s;&|()]+", line):
        folder, _, last = word.strip("\"'").rpartition("/")
        if folder and re.search(r"(?i)uninstall|remove", last) and INSTALL_FOLDERS.search(folder):
            yield _fx("defense-off", "runs a security product's uninstaller", word.strip("\"'"))
            return


_ENGINES = frozenset({"docker", "podman", "nerdctl", "kubectl", "oc", "kubecolor", "crictl", "ctr"})


def _chroot_in_container(commands: list[list[str]]) -> Iterator[Effect]:
    """``kubectl exec -it pod -- chroot /host bash``, ``docker run -v /:/h img chroot /h``: a
    container has no other root file system to change into than one mounted from its host, so a
    chroot run inside one (the reader lists the engine, then what it runs) enters the host."""
    engine_seen = False
    for argv in commands:
        if argv[0] in _ENGINES and any(w in ("exec", "run", "debug") for w in argv[1:]):
            engine_seen = True
        elif engine_seen and argv[0] == "chroot":
            root = next((a for a in argv[1:] if not a.startswith("-")), "")
            if root not in ("", "/", "."):
                yield _fx("host-escape", "chroot inside a container enters the host's file system", root)
                return


def escape_line_acts(commands: list[list[str]], write_targets: list[str]) -> Iterator[Effect]:
    """Line-level effects: a cgroup ``release_agent``/``notify_on_release`` or the kernel's
    ``uevent_helper`` written (by redirection or tee), and a packet capture that prints payloads
    into a search for credentials (``tcpdump -A ... | grep -i authorization``)."""
    for target in write_targets:
        if re.search(r"/(?:release_agent|notify_on_release)$|/sys/+kernel/+uevent_helper$", target):
            yield _fx(
                "host-escape", "writes a cgroup release agent or kernel helper (runs on the host)", target
            )
            return
    yield from _chroot_in_container(commands)
    captures = any(
        (c[0] == "tcpdump" and any(re.match(r"^-[a-zA-Z]*[AXx]", a) for a in c[1:]))
        or c[0] in ("tshark", "ngrep", "tcpflow", "termshark")
        for c in commands
    )
    if captures and any(
        _SECRET_WORDS.search(a)
        for c in commands
        for a in c[1:]
        if c[0] in ("grep", "egrep", "rg", "ngrep", "tshark", "awk") or c[0] == "ngrep"
    ):
        yield _fx("secret-hunt", "captures traffic and searches it for credentials", "")
