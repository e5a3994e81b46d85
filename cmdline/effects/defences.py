"""Effects on the machine's defences that a third blind probe (tests/corpus/probe3) found unread,
each read as a class:

- ``defense-off`` from a **security agent's own control program** (CrowdStrike's falconctl,
  SentinelOne's sentinelctl, Defender's mdatp, osquery, Wazuh/OSSEC, Elastic, Jamf): any verb or
  switch that unloads, stops, uninstalls, deregisters or disables it, in whichever spelling the
  vendor uses; reading its status stays ordinary (the programs are :mod:`.security_products`');
- ``log-off`` from the **Linux audit system's rules**: all rules deleted (``auditctl -D``),
  auditing switched off (``-e 0``, ``-e0``, ``--enable 0``) or events excluded by a ``never``
  rule, however the option and its value are joined.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.security_products import CONTROL_PROGRAMS
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["DEFENCE_HANDLERS"]

_DISABLING = lazy_compile(
    r"(?i)^(?:unload|unprotect|uninstall|disable|disabled|stop|remove|removeframework|deregister"
    r"|unregister|kill|off|false|-d|--delete|--uninstall|--disable|--disable-validation|--unload|--stop)$"
)
"""A verb, switch or value that turns a security agent off (falconctl's ``-d`` deletes its
settings, such as the agent id; mdatp's ``--value disabled`` switches a protection off)."""


def _security_agent(argv: list[str]) -> Iterator[Effect]:
    switched = [a for a in argv[1:] if _DISABLING.match(a)]
    if argv[0] == "fail2ban-client" and ("unban" in argv or "unbanip" in argv) and "--all" in argv:
        # probe22: every ban lifted at once (one address unbanned is everyday administration);
        # probe26: also through a jail (`set sshd unbanip --all`)
        yield _fx("defense-off", "fail2ban-client lifts every ban", "unban --all")
    elif argv[0] == "fail2ban-client" and "bantime" in argv and re.match(r"^[0-5]?\d$", argv[-1]):
        yield _fx("defense-off", "fail2ban-client cuts the ban time to seconds", argv[-1])
    elif switched:
        yield _fx("defense-off", f"{argv[0]} unloads, stops or disables a security agent", " ".join(argv[1:]))


def _auditctl(argv: list[str]) -> Iterator[Effect]:
    rest = argv[1:]
    enable = [
        rest[i + 1] if a in ("-e", "--enable") and i + 1 < len(rest) else a[2:] if a.startswith("-e") else ""
        for i, a in enumerate(rest)
        if a in ("-e", "--enable") or re.match(r"^-e\d$", a)
    ]
    never = any(
        (a in ("-a", "-A") and i + 1 < len(rest) and "never" in rest[i + 1].split(","))
        or (re.match(r"^-[aA]\S", a) is not None and "never" in a[2:].split(","))
        for i, a in enumerate(rest)
    )
    # probe26: a rule or watch deleted one by one (-d, -W), an event type excluded (the exclude
    # list), failures made silent (-f 0)
    removes = any(a in ("-d", "-W") or re.match(r"^-[dW]\S", a) for a in rest)
    excludes = any(
        a in ("-a", "-A") and i + 1 < len(rest) and "exclude" in rest[i + 1].split(",")
        for i, a in enumerate(rest)
    )
    silent = any((a == "-f" and rest[i + 1 : i + 2] == ["0"]) or a == "-f0" for i, a in enumerate(rest))
    if "-D" in rest or "0" in enable or never or removes or excludes or silent:
        yield _fx(
            "log-off", "auditctl deletes its rules, turns auditing off or excludes events", " ".join(rest)
        )


DEFENCE_HANDLERS = {**dict.fromkeys(sorted(CONTROL_PROGRAMS), _security_agent), "auditctl": _auditctl}
"""The readers by program name (argv[0] basename)."""
