"""What a command does to the machine's availability and its place on the network, beyond deletes:

- ``break-system`` (ATT&CK T1489, T1499, T1529-like impact without a shutdown): a package the
  system cannot run without removed (the C library, the init system, the shells, the package
  manager itself, the system Python, sudo, ssh) or any package removed with the manager's safety
  switch off (``--force-remove-essential``, ``--force-all``, ``--nodeps``, ``-dd``); every process
  killed through ``killall5``; a service taken down for good (``systemctl disable --now``,
  ``mask``, or stopped and disabled on one line: a restart or a plain stop is everyday); the disk
  filled by a file sized beyond any working set (``fallocate -l 900G``) or by ``dd`` from
  ``/dev/zero`` or ``/dev/urandom`` into a file with no ``count=``; processes killed by rank
  from a listing of every process (``ps -e ... | head | xargs kill -9``), not by name;
- ``log-off``: a container's log file, looked up through the engine (``docker inspect --format
  '{{.LogPath}}'``), emptied or removed;
- ``scan`` (T1046 network service discovery, T1595 active scanning, T1110 brute force): a port
  scanner, or a login sprayer/brute-forcer (crackmapexec/netexec, hydra, medusa, ncrack), pointed
  at anything but loopback;
- ``tunnel`` for shells shared or machines joined to another network without a URL to judge
  (``tmate``, ``upterm host``, ``sshx``, ``ttyd``/``gotty``, ``tailscale up`` with an auth key or
  another control server, ``zerotier-cli join``, ``netbird up`` with a setup key).

The readers for removal read the package manager's own grammar (its remove verbs), so ``apt
purge``, ``dnf erase``, ``pacman -Rdd`` and ``apk del`` are one effect.

The blind probe tests/corpus/probe22 (commands as tldr-pages, cheat sheets and man pages show them)
added: the same removal by ``xbps-remove``, ``emerge --unmerge/-C``, ``flatpak uninstall --all``,
snap's bases, a removal of every installed package through a listing (``pacman -Rns $(pacman
-Qq)``), ``dpkg -i`` with its force switches, a simulated removal (``apt-get -s``, ``--pretend``)
read as nothing; and ``cloud-exposure`` for the machine opened to the network: a firewall accepting
from anyone a port other than SSH and the web ports (``ufw allow from any``, ``ufw allow 3306``,
``iptables -A INPUT --dport 6379 -j ACCEPT`` with no source or state match, ``firewall-cmd
--add-port`` in a public zone with no source), an NFS export to every host or without root
squashing (MongoDB and Redis without authentication are :mod:`.open_services`), a
Kubernetes LoadBalancer or NodePort service, and static file servers (busybox httpd, miniserve,
http-server, serve) handing out ``/``, a home or a system folder on all addresses.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect, runs
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS", "availability_command_acts", "availability_line_acts"]

_ESSENTIAL = lazy_compile(
    r"^(?:libc6|glibc|libc-bin|musl|busybox|alpine-baselayout|systemd|systemd-sysv|init|udev|dbus|bash|dash|zsh|coreutils|util-linux"
    r"|login|passwd|shadow-utils|sudo|openssh-server|openssh|apt|dpkg|rpm|dnf|yum|pacman|apk-tools|zypper"
    r"|python3|python3-minimal|libpython3(?:\.\d+)?-minimal|python3\.\d+|perl-base|grub\S*|linux-image\S*"
    r"|kernel(?:-core)?|base-files|base-passwd|tar|gzip|findutils|grep|sed|mount|e2fsprogs|ca-certificates"
    r"|base-system|xbps|portage|snapd|core\d*|nix)"
    r"(?::\w+)?$"
)
_FORCED = frozenset(
    {"--force-remove-essential", "--force-all", "--force-depends", "--nodeps", "--force-remove-reinstreq",
     "--allow-remove-essential", "--force-broken-world"}
)  # fmt: skip
# (manager, the verbs that remove); pacman and rpm spell removal as an option.
_REMOVE_VERBS = {
    "apt": ("remove", "purge", "autoremove"),
    "apt-get": ("remove", "purge", "autoremove"),
    "aptitude": ("remove", "purge"),
    "dnf": ("remove", "erase", "autoremove"),
    "yum": ("remove", "erase", "autoremove"),
    "microdnf": ("remove",),
    "zypper": ("remove", "rm"),
    "apk": ("del",),
    "snap": ("remove",),
}
_SCANNERS = frozenset(
    {"nmap", "masscan", "zmap", "rustscan", "naabu", "unicornscan", "hping3", "zgrab2", "fscan"}
    # and the login sprayers and brute-forcers that walk the same ranges with passwords
    | {"crackmapexec", "cme", "netexec", "nxc", "hydra", "medusa", "ncrack", "patator", "brutespray"}
)
_LOOPBACK = lazy_compile(r"^(?:localhost|127(?:\.\d+){1,3}(?:/\d+)?|::1|\[::1\])$")
_TARGET = lazy_compile(
    r"^(?:\d{1,3}(?:\.[\d*-]+){3}(?:/\d+)?|[0-9a-fA-F:]+:[0-9a-fA-F:]*(?:/\d+)?|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)$"
)
_SHELL_SHARERS = frozenset({"tmate", "sshx", "ttyd", "gotty", "tty-share", "wetty"})
_HUGE = lazy_compile(r"^(\d+(?:\.\d+)?)([GTPE])i?B?$", re.IGNORECASE)


_SIMULATED = frozenset(
    {"-s", "--simulate", "--just-print", "--dry-run", "--recon", "--no-act", "--assumeno", "--print", "-p",
     "--pretend"}
)  # fmt: skip
_EVERY_INSTALLED = lazy_compile(
    r"(?:\bpacman\s+-Q|\b(?:apt|dnf|yum|zypper|snap|flatpak|brew)\s+list\b|\brpm\s+-qa|\bdpkg(?:-query)?\s+(?:-l|--get-selections|-W)"
    r"|\bapk\s+info\b|\bxbps-query\s+-l)"
)


def _removed(argv: list[str]) -> list[str]:
    """The packages a package manager's command removes (empty when it removes nothing, or only
    says what it would remove: ``apt-get remove --simulate``, ``emerge --pretend``)."""
    tool, rest = argv[0], argv[1:]
    if any(a in _SIMULATED for a in rest) and tool != "dpkg":
        return []
    words = [a for a in rest if not a.startswith("-")]
    if tool == "xbps-remove":
        return words
    if tool == "emerge" and any(a in ("--unmerge", "-C", "--depclean", "-c") for a in rest):
        return [w.rsplit("/", 1)[-1] for w in words]
    if tool in _REMOVE_VERBS:
        verbs = _REMOVE_VERBS[tool]
        return words[1:] if words and words[0] in verbs else []
    if tool == "dpkg" and any(a in ("-r", "-P", "--remove", "--purge") for a in rest):
        return words
    if tool in ("pacman", "yay", "paru") and any(re.match(r"^-R[a-zA-Z]*$", a) for a in rest):
        return words
    if tool == "rpm" and any(re.match(r"^-e[a-zA-Z]*$|^--erase$", a) for a in rest):
        return words
    if tool == "brew" and words[:1] in (["uninstall"], ["remove"], ["rm"]):
        return []  # user-level packages: nothing the system boots with
    return []


def _removes_essentials(argv: list[str]) -> Iterator[Effect]:
    removed = _removed(argv)
    if argv[0] == "dpkg" and any(a in ("-i", "--install") for a in argv[1:]):
        forced = [a for a in argv[1:] if a in _FORCED or a in ("--force-overwrite", "--force-confmiss")]
        if forced:
            yield _fx("break-system", f"dpkg installs with its safety switch off ({forced[0]})", argv[-1])
        return
    if argv[0] == "flatpak" and _words(argv)[:1] in (["uninstall"], ["remove"]) and "--all" in argv:
        yield _fx("break-system", "flatpak removes every installed application", "--all")
        return
    if not removed:
        return
    forced = [
        a
        for a in argv[1:]
        if a in _FORCED
        or re.match(r"^-R\w*dd", a)
        or (argv[0] == "xbps-remove" and re.match(r"^-[a-zA-Z]*f$", a))
    ]
    essential = [p for p in removed if _ESSENTIAL.match(p)]
    listed = [p for p in removed if p.startswith(("$(", "`")) and _EVERY_INSTALLED.search(p)]
    if listed:
        yield _fx("break-system", f"{argv[0]} removes every installed package", listed[0])
    elif essential:
        yield _fx("break-system", f"{argv[0]} removes a package the system runs on", essential[0])
    elif forced:
        yield _fx(
            "break-system", f"{argv[0]} removes packages with its safety switch off ({forced[0]})", removed[0]
        )


def _kills_everything(argv: list[str]) -> Iterator[Effect]:
    if argv[0] == "killall5":
        yield _fx("break-system", "killall5 signals every process", " ".join(argv[1:]))


def _services_down(argv: list[str]) -> Iterator[Effect]:
    if argv[0] != "systemctl" or "--user" in argv:
        return
    words = _words(argv)
    if not words:
        return
    units = words[1:]
    if words[0] == "mask" and units:
        yield _fx("break-system", "systemctl masks a service (it cannot start again)", units[0])
    elif words[0] == "disable" and "--now" in argv and units:
        yield _fx("break-system", "systemctl stops and disables a service", units[0])


_ENDLESS_SOURCES = frozenset({"if=/dev/zero", "if=/dev/urandom", "if=/dev/random"})


def _fills_disk(argv: list[str]) -> Iterator[Effect]:
    if argv[0] == "dd":
        # an endless source copied into a file with no count stops only when the disk is full
        target = next((a[3:] for a in argv[1:] if a.startswith("of=")), "")
        if (
            any(a in _ENDLESS_SOURCES for a in argv[1:])
            and target
            and not target.startswith("/dev/")
            and not any(a.startswith(("count=", "iflag=count_bytes")) for a in argv[1:])
        ):
            yield _fx(
                "break-system", "dd copies an endless source into a file until the disk is full", target
            )
        return
    if argv[0] not in ("fallocate", "truncate"):
        return
    rest = argv[1:]
    sizes = [rest[i + 1] for i in range(len(rest) - 1) if rest[i] in ("-l", "--length", "-s", "--size")]
    sizes += [a.split("=", 1)[1] for a in rest if a.startswith(("--length=", "--size="))]
    for size in sizes:
        found = _HUGE.match(size.lstrip("+"))
        if found and (found.group(2).upper() != "G" or float(found.group(1)) >= 100):
            yield _fx("break-system", f"{argv[0]} makes a file of {size} (fills the disk)", size)
            return


def _scans(argv: list[str]) -> Iterator[Effect]:
    if argv[0] not in _SCANNERS:
        return
    targets = [a for a in argv[1:] if not a.startswith("-") and _TARGET.match(a)]
    outside = [t for t in targets if not _LOOPBACK.match(t)]
    if outside:
        yield _fx("scan", f"{argv[0]} scans hosts on the network", outside[0])


def _shared_shells(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    if tool in _SHELL_SHARERS or (tool == "upterm" and rest[:1] == ["host"]):
        yield _fx("tunnel", f"{tool} shares a shell of this machine with another host", " ".join(rest)[:80])
    elif (
        tool == "tailscale"
        and rest[:1] == ["up"]
        and any(a.startswith(("--authkey", "--auth-key", "--login-server")) for a in rest)
    ):
        yield _fx("tunnel", "tailscale joins the machine to a network another key or server controls", "")
    elif tool == "zerotier-cli" and rest[:1] == ["join"]:
        yield _fx("tunnel", "zerotier joins the machine to another network", " ".join(rest[1:2]))
    elif tool == "netbird" and rest[:1] == ["up"] and any(a.startswith(("--setup-key", "-k")) for a in rest):
        yield _fx("tunnel", "netbird joins the machine to a network another key controls", "")


# ----------------------------------------------------------------- the machine opened to the network
_EVERYDAY_PORTS = frozenset(
    {"22", "80", "443", "ssh", "http", "https", "openssh", "www", "22/tcp", "80/tcp", "443/tcp", "ssh/tcp",
     "http/tcp", "https/tcp", "nginx full", "apache full"}
)  # fmt: skip
_FIREWALLS = frozenset({"iptables", "ip6tables", "iptables-legacy", "iptables-nft"})
_SOURCE_OPTIONS = frozenset({"-s", "--source", "--src-range", "-i", "--in-interface"})
_ANY_HOST = lazy_compile(r"^(?:0\.0\.0\.0|::|\[::\]|\*|all)$")
_SERVED_ROOT = lazy_compile(
    r"^(?:/+|~[^/]*/*|\$HOME/*|\$\{HOME\}/*|/+root/*|/+home(?:/+[^/]+)?/*|/+Users/+[^/]+/*"
    r"|/+(?:etc|var|usr|srv|opt|mnt|media)/*)$"
)
_STATIC_SERVERS = frozenset(
    {"miniserve", "http-server", "serve", "httpd", "busybox", "darkhttpd", "static-web-server"}
)
_PACKAGE_RUNNERS = frozenset({"npx", "pnpx", "bunx"})


def _port_opened(port: str) -> bool:
    return bool(port) and port.lower() not in _EVERYDAY_PORTS


def _firewall_opens(argv: list[str]) -> Iterator[Effect]:
    """A firewall told to accept from anyone what is not the everyday SSH/web ports: ``ufw allow
    from any``, ``ufw allow 3306``, ``iptables -A INPUT --dport 6379 -j ACCEPT`` with no source,
    ``firewall-cmd --add-port=5432/tcp`` with no source."""
    tool, rest, words = argv[0], argv[1:], _words(argv)
    if tool == "ufw" and words[:1] == ["allow"]:
        sources = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "from"]
        ports = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "port"] or (
            words[1:2] if len(words) == 2 else []
        )
        if sources and all(s == "any" for s in sources) and not ports:
            yield _fx("cloud-exposure", "ufw lets every host reach every port", "from any")
        elif (not sources or all(s == "any" for s in sources)) and any(_port_opened(p) for p in ports):
            port = next(p for p in ports if _port_opened(p))
            yield _fx("cloud-exposure", "ufw opens a port to every host", port)
    elif tool in _FIREWALLS:
        chain = _value(argv, "-A", "--append", "-I", "--insert") or ""
        if (_value(argv, "-j", "--jump") or "").upper() != "ACCEPT" or chain != "INPUT":
            return
        if any(a in _SOURCE_OPTIONS or a.startswith(("--source=", "--in-interface=")) for a in rest):
            return
        port = _value(argv, "--dport", "--dports", "--destination-port") or ""
        if "state" in rest or "conntrack" in rest:
            return  # ESTABLISHED,RELATED: replies, not new connections
        if _port_opened(port):
            yield _fx("cloud-exposure", f"{tool} accepts connections to a port from every host", port)
    elif tool == "firewall-cmd":
        if any(a.startswith("--add-source") or a.startswith("--add-rich-rule") for a in rest):
            return
        zone = (_value(argv, "--zone") or "public").lower()
        if zone in ("trusted", "internal", "home", "work", "docker", "libvirt"):
            return
        for arg in rest:
            name, _, value = arg.partition("=")
            if name in ("--add-port", "--add-service") and _port_opened(value or (_value(argv, name) or "")):
                yield _fx("cloud-exposure", "firewalld opens a port to every host", value)
                return


def _services_opened(argv: list[str]) -> Iterator[Effect]:
    """Shares and servers opened to anyone: an NFS export to every host or without root
    squashing (``exportfs -o rw,no_root_squash *:/home``), a Kubernetes service given a public
    load balancer or node port, a static file server handing out ``/``, a home or a system folder
    (MongoDB and Redis without authentication: :mod:`.open_services`)."""
    tool = argv[0]
    if tool == "exportfs":
        options = _value(argv, "-o") or ""
        for word in _words(argv):
            client, _, path = word.partition(":")
            if path and (client in ("*", "") or "no_root_squash" in options or "insecure" in options):
                yield _fx("cloud-exposure", "exportfs shares a folder with every host", word)
                return
    elif tool == "kubectl" and _words(argv)[:1] == ["expose"]:
        kind = (_value(argv, "--type") or "").lower()
        if kind in ("loadbalancer", "nodeport"):
            yield _fx("cloud-exposure", f"kubectl exposes a workload through a {kind} service", kind)
    elif tool in _STATIC_SERVERS or (tool in _PACKAGE_RUNNERS and argv[1:2] and argv[1] in _STATIC_SERVERS):
        inner = argv[1:] if tool in _PACKAGE_RUNNERS else argv
        if inner[0] == "busybox" and inner[1:2] != ["httpd"]:
            return
        served = _value(inner, "-h", "--home", "--public") if inner[0] in ("busybox", "httpd") else None
        binding = _value(inner, "-a", "--address", "--interfaces", "-i", "--host", "--listen", "-l") or ""
        values = {_value(inner, "-p", "--port"), binding}
        operands = [w for w in _words(inner) if w != "httpd" and w not in values]
        targets = [served] if served else operands[:1] or []
        if binding and not _ANY_HOST.match(binding) and binding not in ("0.0.0.0",):
            return  # bound to one address: loopback or the machine's own
        hit = next((t for t in targets if _SERVED_ROOT.match(t)), None)
        if hit:
            yield _fx("cloud-exposure", f"{inner[0]} serves a home or system folder to the network", hit)


COMMAND_READERS: tuple[CommandReader, ...] = (
    (
        frozenset(_REMOVE_VERBS)
        | {"dpkg", "pacman", "yay", "paru", "rpm", "brew", "xbps-remove", "emerge", "flatpak"},
        _removes_essentials,
    ),
    (frozenset({"killall5"}), _kills_everything),
    (frozenset({"systemctl"}), _services_down),
    (frozenset({"fallocate", "truncate", "dd"}), _fills_disk),
    (_SCANNERS, _scans),
    (_SHELL_SHARERS | {"upterm", "tailscale", "zerotier-cli", "netbird"}, _shared_shells),
    (_FIREWALLS | {"ufw", "firewall-cmd"}, _firewall_opens),
    (
        frozenset({"exportfs", "kubectl"}) | _PACKAGE_RUNNERS | _STATIC_SERVERS,
        _services_opened,
    ),
)
"""The per-command readers here in order, each with the programs it reads (``shell.acts``
dispatches on them)."""


def availability_command_acts(argv: list[str]) -> list[Effect]:
    """The effects above for one unwrapped command (argv[0] is a basename)."""
    return [
        effect for programs, reader in COMMAND_READERS if runs(programs, argv[0]) for effect in reader(argv)
    ]


_EVERY_PROCESS = lazy_compile(r"^-[a-zA-Z]*[eA]|^a?u?x$|^aux$|^-ef$")
_FILTERS = frozenset({"grep", "egrep", "fgrep", "rg", "pgrep"})
_PATTERN_PROGRAM = lazy_compile(r"/[^/]+/|~|==")
_LOG_ERASERS = frozenset({"truncate", "rm", "shred", "unlink", "cp", "tee"})


def _blind_kills(commands: list[list[str]]) -> Iterator[Effect]:
    """``ps -eo pid --sort=-%cpu | head | xargs kill -9``: processes picked from a listing of every
    process by rank, not by what they are (a name filter such as ``grep node`` keeps it ordinary)."""
    programs = {argv[0] for argv in commands}
    if not {"ps", "xargs", "kill"} <= programs or programs & _FILTERS:
        return
    if any(
        argv[0] in ("awk", "gawk", "sed") and any(_PATTERN_PROGRAM.search(a) for a in argv[1:])
        for argv in commands
    ):
        return  # awk '/node/ {print $2}', sed -n '/vite/p': chosen by what they are
    lists_all = any(argv[0] == "ps" and any(_EVERY_PROCESS.match(a) for a in argv[1:]) for argv in commands)
    if lists_all:
        yield _fx("break-system", "kills processes picked from a listing of every process", "ps | xargs kill")


def _erased_container_logs(commands: list[list[str]]) -> Iterator[Effect]:
    """``truncate -s 0 $(docker inspect --format '{{.LogPath}}' app)``: a container's log file,
    looked up by the engine and emptied or removed (T1070)."""
    looked_up = any(
        argv[0] in ("docker", "podman", "nerdctl") and "inspect" in argv and any("LogPath" in a for a in argv)
        for argv in commands
    )
    if looked_up and any(argv[0] in _LOG_ERASERS for argv in commands):
        yield _fx("log-off", "empties or removes a container's log file", "LogPath")


_PYTHON = lazy_compile(r"^python[0-9.]*$")


def _serves_the_current_folder(argv: list[str]) -> bool:
    """A file server started on the current folder, on every address: ``python3 -m http.server``
    without ``--directory`` or ``--bind``, ``php -S 0.0.0.0:8000`` without ``-t``."""
    if _PYTHON.match(argv[0]) and "http.server" in argv and argv[argv.index("http.server") - 1] == "-m":
        if any(a in ("-d", "--directory") or a.startswith("--directory=") for a in argv):
            return False
        binding = _value(argv, "-b", "--bind") or ""
        return not binding or bool(_ANY_HOST.match(binding))
    if argv[0] == "php" and "-S" in argv and "-t" not in argv:
        address = _value(argv, "-S") or ""
        return address.startswith(("0.0.0.0:", "[::]:", ":"))
    return False


def _home_served_after_cd(commands: list[list[str]]) -> Iterator[Effect]:
    """``cd ~ && python3 -m http.server``: the folder served is the one a ``cd`` earlier on the line
    moved to, a home, ``/`` or a system folder (probe22)."""
    folder = ""
    for argv in commands:
        if argv[0] in ("cd", "pushd"):
            folder = next((a for a in argv[1:] if not a.startswith("-")), "~")
        elif folder and _SERVED_ROOT.match(folder) and _serves_the_current_folder(argv):
            yield _fx("cloud-exposure", f"{argv[0]} serves a home or system folder to the network", folder)
            return


def availability_line_acts(commands: list[list[str]]) -> Iterator[Effect]:
    """Line-level effects: processes killed blind, a container's log erased, and a system service
    both stopped and disabled on one line (``systemctl stop X && systemctl disable X``: the two
    halves of ``disable --now``); a home or system folder served after a ``cd`` into it."""
    yield from _blind_kills(commands)
    yield from _erased_container_logs(commands)
    if any(argv[0] in ("cd", "pushd") for argv in commands):
        yield from _home_served_after_cd(commands)
    stopped: set[str] = set()
    disabled: set[str] = set()
    for argv in commands:
        if argv[0] != "systemctl" or "--user" in argv:
            continue
        words = _words(argv)
        if words[:1] == ["stop"]:
            stopped.update(words[1:])
        elif words[:1] == ["disable"]:
            disabled.update(words[1:])
    both = sorted(stopped & disabled)
    if both:
        yield _fx("break-system", "stops and disables a service", both[0])
