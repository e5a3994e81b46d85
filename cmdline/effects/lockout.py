"""The machine taken away from its owners and its services stopped wholesale, as lockers do before
they encrypt (ATT&CK T1489, T1531; found by the blind probe tests/corpus/probe10 in CALDERA's impact
abilities and the Linux lockers' scripts, read as classes):

- ``account``: users locked out of their accounts - a password locked (``passwd -l``, ``usermod
  -L``), an account expired (``usermod -e 1``, ``chage -E 0``);
- ``outage``: the host cut off by its own firewall - a default policy of DROP/REJECT on input or
  output, a rule dropping all output, or one dropping the SSH port its administrators come in by
  (``iptables``/``ip6tables``, ``ufw deny ssh``), or by its routes (the default route deleted, the
  routing table flushed); the data services killed together by one pattern
  naming two or more of them (``pkill -f "postgres|mysqld|mongod"``: what frees their files for an
  encryptor, not a developer stopping one server);
- ``break-system``: services stopped, killed or masked from a listing of every running unit
  (``for s in $(systemctl list-units --state=running ...); do systemctl stop $s; done``): chosen by
  being up, not by name.

Locking one's own screen, a firewall rule for one port or source, restarting a service and
stopping one named service stay allowed.

The blind probe tests/corpus/probe22 (commands as tldr-pages, cheat sheets and man pages show them)
added the other spellings of the same effects: ``outage`` for a rule rejecting every input with
nothing to match (``iptables -I INPUT -j REJECT``), nft dropping SSH or making drop an input hook's
policy, firewalld's panic mode or its ssh service removed, ``ufw default deny incoming && ufw
enable`` with no SSH rule on the line, radios blocked wholesale (``rfkill block all``), a link made
to lose most packets (``tc ... netem loss 100%``), single-user and rescue targets (``telinit 1``,
``systemctl isolate rescue.target``), a data service killed with SIGKILL and every process of a
user killed; ``break-system`` for sudo, su, login, the shells or sshd made unexecutable.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS", "lockout_command_acts", "lockout_line_acts"]

_PAST = lazy_compile(r"^(?:-?[01]|19[0-6]\d-\d\d-\d\d|1970-\d\d-\d\d)$")
_DATA_SERVICES = lazy_compile(
    r"(?i)^(?:postgres(?:ql)?|postmaster|mysqld?|mariadbd?|mongod|mongos|redis-server|redis|oracle|ora_\w+"
    r"|sqlservr|elasticsearch|opensearch|cassandra|clickhouse(?:-server)?|etcd|couchdb|influxd|memcached"
    r"|rabbitmq-server|beam\.smp|java|tomcat|httpd|nginx|apache2|php-fpm|vmware-\w+|vmx|qemu-\w+|libvirtd)$"
)
_FIREWALLS = frozenset({"iptables", "ip6tables", "iptables-legacy", "iptables-nft"})
_MATCHES = frozenset({"-p", "--protocol", "-s", "--source", "-d", "--destination", "-o", "--out-interface",
                      "-i", "--in-interface", "-m", "--match", "--dport", "--sport"})  # fmt: skip
_SSH_PORTS = frozenset({"22", "ssh"})
_EVERY_UNIT = lazy_compile(r"\b(?:list-units|list-unit-files)\b")
_UNIT_VERBS = frozenset({"stop", "kill", "mask", "disable"})


def _locks_accounts(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    if tool == "passwd" and any(a in ("-l", "--lock") for a in rest):
        yield _fx("account", "locks an account's password", rest[-1])
    elif tool == "usermod" and (
        any(a in ("-L", "--lock") for a in rest) or _PAST.match(_value(argv, "-e", "--expiredate") or "x")
    ):
        yield _fx("account", "locks or expires an account", rest[-1])
    elif tool == "chage" and _PAST.match(_value(argv, "-E", "--expiredate") or "x"):
        yield _fx("account", "expires an account", rest[-1])


def _cuts_off(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    if tool in _FIREWALLS:
        target = (_value(argv, "-j", "--jump") or "").upper()
        policy = _value(argv, "-P", "--policy")
        chain = policy or _value(argv, "-A", "--append", "-I", "--insert") or ""
        if policy and chain in ("INPUT", "OUTPUT") and rest[-1:] and rest[-1].upper() in ("DROP", "REJECT"):
            yield _fx("outage", f"{tool} drops all {chain.lower()} traffic by default", chain)
        elif target in ("DROP", "REJECT") and chain == "OUTPUT" and not any(a in _MATCHES for a in rest):
            yield _fx("outage", f"{tool} drops all traffic leaving the machine", chain)
        elif (
            target in ("DROP", "REJECT")
            and chain == "INPUT"
            and (_value(argv, "--dport") or "") in _SSH_PORTS
        ):
            source = _value(argv, "-s", "--source") or ""
            if not source:
                yield _fx("outage", f"{tool} locks administrators out (SSH dropped)", chain)
    elif (
        tool == "ufw"
        and rest[:1] in (["deny"], ["reject"])
        and rest[-1:]
        and rest[-1] in ("22", "ssh", "22/tcp")
    ):
        yield _fx("outage", "ufw locks administrators out (SSH denied)", rest[-1])
    elif tool in ("ip", "route"):
        yield from _routes_removed(tool, _words(argv))


_IP_ROUTE = lazy_compile(r"^r(?:o(?:u(?:te?)?)?)?$")
_IP_DELETE = lazy_compile(r"^(?:d(?:e(?:l(?:ete)?)?)?|flush|f(?:l(?:u(?:sh?)?)?)?)$")


def _routes_removed(tool: str, words: list[str]) -> Iterator[Effect]:
    """The default route deleted or the routing table flushed (``ip route del default``, ``ip route
    flush table main``, ``route del default``): the host loses every network but its own links.
    Deleting one route to one network, or flushing the route cache, stays ordinary."""
    if tool == "ip":
        if len(words) < 3 or not _IP_ROUTE.match(words[0]) or not _IP_DELETE.match(words[1]):
            return
        verb, rest = words[1], words[2:]
        if verb.startswith("f") and rest[:1] != ["cache"]:
            yield _fx("outage", "ip flushes the routing table (the host loses its networks)", " ".join(rest))
        elif rest[:1] in (["default"], ["0.0.0.0/0"], ["::/0"]):
            yield _fx("outage", "ip deletes the default route (the host loses its networks)", rest[0])
    elif words[:1] in (["del"], ["delete"]) and any(w in ("default", "0.0.0.0") for w in words[1:3]):
        yield _fx("outage", "route deletes the default route (the host loses its networks)", "default")


def _kills_data_services(argv: list[str]) -> Iterator[Effect]:
    names = {
        part.strip("^$ ").lower()
        for a in argv[1:]
        if not a.startswith("-")
        for part in re.split(r"[|()\s]+", a)
        if _DATA_SERVICES.match(part.strip("^$ "))
    }
    if len(names) >= 2:
        yield _fx(
            "outage", f"{argv[0]} kills the machine's data and application services", ", ".join(sorted(names))
        )


_KILL_SIGNALS = frozenset({"-9", "-KILL", "-SIGKILL", "--signal=KILL", "--signal=9", "--signal=SIGKILL"})
_SSH_TEXT = lazy_compile(r"(?i)\b(?:dport|port)\s*(?:\{\s*)?(?:22|ssh)\b")
_NFT_INPUT_DROP = lazy_compile(r"(?i)\bhook\s+input\b[^}]*\bpolicy\s+(?:drop|reject)\b")
_SINGLE_USER = frozenset({"1", "s", "S", "single", "emergency", "rescue"})
_ISOLATE_TARGETS = lazy_compile(r"^(?:rescue|emergency|poweroff|halt|reboot|runlevel[016])(?:\.target)?$")
_NETEM_LOSS = lazy_compile(r"^(\d+(?:\.\d+)?)%?$")
_AUTH_PROGRAMS = lazy_compile(
    r"^/+(?:usr/+)?s?bin/+(?:sudo|su|doas|pkexec|login|passwd|sshd|ssh|bash|sh|dash|systemctl|mount)$"
)
# A mode that leaves other users unable to run the program (the last octal digit without 1, or x
# taken from others or all).
_NO_EXEC_MODE = lazy_compile(r"^(?:[0-7]{2,3}[0246]|[ugo]*[oa][ugoa]*-[rwst]*x[rwst]*|-[rwst]*x[rwst]*)$")


def _closes_session(argv: list[str]) -> Iterator[Effect]:
    """The firewall front ends closed on the session: every input dropped or rejected by one rule
    with nothing to match (``iptables -I INPUT -j REJECT``), nft dropping the SSH port or making
    drop an input hook's policy, firewalld's panic mode or its ssh service/port removed."""
    tool, rest = argv[0], argv[1:]
    if tool in _FIREWALLS:
        target = (_value(argv, "-j", "--jump") or "").upper()
        chain = _value(argv, "-A", "--append", "-I", "--insert") or ""
        if target in ("DROP", "REJECT") and chain == "INPUT" and not any(a in _MATCHES for a in rest):
            yield _fx("outage", f"{tool} drops every connection into the machine", chain)
    elif tool == "nft":
        text = " ".join(rest)
        drops = re.search(r"(?i)\b(?:drop|reject)\b", text)
        if drops and re.search(r"(?i)\binput\b", text) and _SSH_TEXT.search(text):
            yield _fx("outage", "nft locks administrators out (SSH dropped)", "input")
        elif _NFT_INPUT_DROP.search(text):
            yield _fx("outage", "nft drops all input traffic by default", "input")
    elif tool == "firewall-cmd":
        for arg in rest:
            if arg == "--panic-on":
                yield _fx("outage", "firewalld panic mode drops every packet", arg)
                return
            name, _, value = arg.partition("=")
            value = value or (_value(argv, name) or "")
            closes_ssh = (name == "--remove-service" and value == "ssh") or (
                name == "--remove-port" and value.startswith("22/")
            )
            if closes_ssh:
                yield _fx("outage", "firewalld closes SSH (locks administrators out)", value)
                return


def _cuts_links(argv: list[str]) -> Iterator[Effect]:
    """Radios blocked wholesale (``rfkill block all``) and a link made to drop most packets (``tc
    qdisc ... netem loss 100%``)."""
    tool, words = argv[0], _words(argv)
    if tool == "rfkill" and words[:1] == ["block"] and words[1:2] in (["all"], ["wlan"], ["wifi"], ["wwan"]):
        yield _fx("outage", "rfkill switches the machine's radios off", words[1])
    elif tool == "tc" and "netem" in argv:
        for i, arg in enumerate(argv[:-1]):
            found = _NETEM_LOSS.match(argv[i + 1]) if arg == "loss" else None
            if found and float(found.group(1)) >= 50:
                yield _fx("outage", "tc makes the link drop most packets", argv[i + 1])
                return


def _single_user(argv: list[str]) -> Iterator[Effect]:
    """The machine taken to single-user or rescue mode: every service and login stopped
    (``telinit 1``, ``init S``, ``systemctl isolate rescue.target``)."""
    tool, words = argv[0], _words(argv)
    if tool in ("telinit", "init") and words[:1] and words[0] in _SINGLE_USER:
        yield _fx("outage", f"{tool} takes the machine to single-user mode", words[0])
    elif tool == "systemctl" and words[:1] == ["isolate"] and words[1:2] and _ISOLATE_TARGETS.match(words[1]):
        yield _fx("outage", "systemctl isolates a target that stops every service", words[1])


def _kills_hard(argv: list[str]) -> Iterator[Effect]:
    """A data service killed with SIGKILL (no chance to flush: ``killall -9 postgres``) and every
    process of a user killed (``pkill -KILL -u dev``, ``killall -u dev``)."""
    rest = argv[1:]
    signalled = any(a in _KILL_SIGNALS for a in rest) or (_value(argv, "-s", "--signal") or "").upper() in (
        "KILL",
        "9",
        "SIGKILL",
    )
    values = {_value(argv, name) for name in ("-s", "--signal", "-u", "--user", "-U", "--uid", "--euid")} - {
        None
    }
    names = [a for a in _words(argv) if a not in values]
    user = _value(argv, "-u", "--user", "-U", "--uid", "--euid")
    if user and not names:
        yield _fx("outage", f"{argv[0]} kills every process of a user", user)
    elif signalled and any(_DATA_SERVICES.match(n) for n in names):
        yield _fx("outage", f"{argv[0]} kills a data service with SIGKILL", names[0])


def _disables_auth_programs(argv: list[str]) -> Iterator[Effect]:
    """sudo, su, login, the shells or sshd made unexecutable (``chmod 600 /usr/bin/sudo``)."""
    words = [a for a in argv[1:] if not a.startswith("--") and a not in ("-R", "-v", "-f", "-c", "-h")]
    if len(words) >= 2 and _NO_EXEC_MODE.match(words[0]):
        hit = next((w for w in words[1:] if _AUTH_PROGRAMS.match(w)), None)
        if hit:
            yield _fx("break-system", "chmod takes the execute bit off a program logins need", hit)


def lockout_command_acts(argv: list[str]) -> list[Effect]:
    """The per-command effects above (argv[0] is a basename)."""
    tool = argv[0]
    if tool in ("passwd", "usermod", "chage"):
        return list(_locks_accounts(argv))
    if tool in _FIREWALLS:
        return [*_cuts_off(argv), *_closes_session(argv)]
    if tool in ("ufw", "ip", "route"):
        return list(_cuts_off(argv))
    if tool in ("nft", "firewall-cmd"):
        return list(_closes_session(argv))
    if tool in ("pkill", "killall"):
        return list(_kills_data_services(argv)) or list(_kills_hard(argv))
    if tool in ("rfkill", "tc"):
        return list(_cuts_links(argv))
    if tool in ("telinit", "init", "systemctl"):
        return list(_single_user(argv))
    if tool == "chmod":
        return list(_disables_auth_programs(argv))
    return []


def _ufw_closed_on_session(commands: list[list[str]]) -> Iterator[Effect]:
    """``ufw default deny incoming && ufw enable`` with no rule letting SSH in on the same line:
    the session that runs it is cut off when the firewall comes up."""
    ufw = [_words(argv) for argv in commands if argv[0] == "ufw"]
    denies = any(w[:3] in (["default", "deny", "incoming"], ["default", "reject", "incoming"]) for w in ufw)
    enables = any(w[:1] == ["enable"] for w in ufw)
    lets_ssh_in = any(
        w[:1] in (["allow"], ["limit"]) and any(re.match(r"(?i)^(?:22(?:/tcp)?|ssh|openssh)$", x) for x in w)
        for w in ufw
    )
    if denies and enables and not lets_ssh_in:
        yield _fx("outage", "ufw comes up denying every connection, SSH included", "ufw enable")


def lockout_line_acts(line: str, commands: list[list[str]]) -> Iterator[Effect]:
    """Services stopped, killed or masked from a listing of every unit on the same line, and ufw
    enabled denying everything with no SSH rule beside it."""
    if "ufw" in line:
        yield from _ufw_closed_on_session(commands)
    if "systemctl" not in line or not _EVERY_UNIT.search(line):
        return
    listed = any(argv[0] == "systemctl" and _EVERY_UNIT.search(" ".join(argv[1:3])) for argv in commands)
    for argv in commands:
        words = _words(argv)
        if (
            argv[0] == "systemctl"
            and listed
            and words[:1]
            and words[0] in _UNIT_VERBS
            and (any(w.startswith("$") for w in words[1:]) or len(words) == 1)
        ):
            yield _fx("break-system", f"{words[0]}s every service a listing found running", "systemctl")
            return


COMMAND_READERS: tuple[CommandReader, ...] = (
    (
        _FIREWALLS
        | {"passwd", "usermod", "chage", "ufw", "ip", "route", "pkill", "killall"}
        | {"nft", "firewall-cmd", "rfkill", "tc"}
        | {"telinit", "init", "systemctl", "chmod"},
        lockout_command_acts,
    ),
)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
