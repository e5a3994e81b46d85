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
- ``break-system``: every process of an account killed, chosen by owner and not by name (``pkill
  -u dev``, ``killall -u root``);
- ``break-system``: services stopped, killed or masked from a listing of every running unit
  (``for s in $(systemctl list-units --state=running ...); do systemctl stop $s; done``): chosen by
  being up, not by name.

Locking one's own screen, a firewall rule for one port or source, restarting a service and
stopping one named service stay allowed.
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


_KILL_VALUE_OPTIONS = frozenset({
    "-u", "--euid", "-U", "--uid", "--user", "-g", "--pgroup", "-G", "--group", "-P", "--parent",
    "-s", "--session", "--signal", "-t", "--terminal", "-F", "--pidfile", "-o", "--older-than",
    "-y", "--younger-than",
})  # fmt: skip
_USER_OPTIONS = frozenset({"-u", "--euid", "-U", "--uid", "--user"})


def _kills_a_users_processes(argv: list[str]) -> Iterator[Effect]:
    """``pkill -u dev``, ``killall -u root``: every process of an account, chosen by owner and not
    by name - the user's session, shells and services end together (ATT&CK T1531)."""
    users: list[str] = []
    named = False
    i = 1
    while i < len(argv):
        arg = argv[i]
        option, equals, value = arg.partition("=")
        if arg in _KILL_VALUE_OPTIONS and i + 1 < len(argv):
            if arg in _USER_OPTIONS:
                users.append(argv[i + 1])
            i += 2
            continue
        if equals and option in _USER_OPTIONS:
            users.append(value)
        elif not arg.startswith("-"):
            named = True
        i += 1
    if users and not named:
        yield _fx("break-system", f"{argv[0]} kills every process of {users[0]}", users[0])


def lockout_command_acts(argv: list[str]) -> list[Effect]:
    """The per-command effects above (argv[0] is a basename)."""
    tool = argv[0]
    if tool in ("passwd", "usermod", "chage"):
        return list(_locks_accounts(argv))
    if tool in _FIREWALLS or tool in ("ufw", "ip", "route"):
        return list(_cuts_off(argv))
    if tool in ("pkill", "killall"):
        return [*_kills_data_services(argv), *_kills_a_users_processes(argv)]
    return []


def lockout_line_acts(line: str, commands: list[list[str]]) -> Iterator[Effect]:
    """Services stopped, killed or masked from a listing of every unit on the same line."""
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
        _FIREWALLS | {"passwd", "usermod", "chage", "ufw", "ip", "route", "pkill", "killall"},
        lockout_command_acts,
    ),
)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
