"""Effects a held-out evaluation found unread (tests/corpus/heldout), each read as a class rather than a
spelling:

- ``agent-unsafe``: an AI agent started with its approvals or sandbox switched off (any agent CLI,
  any of its bypass flags): the guarded agent starting an unguarded one is defence evasion;
- ``publish``: data carried out through a host the allow-list trusts (a git push to a URL rather
  than a configured remote, a remote added and pushed on one line, a public repository or gist
  created, file contents uploaded through ``gh api``);
- ``secret-hunt``: secret scanners pointed at the machine instead of the project (trufflehog,
  gitleaks, noseyparker, detect-secrets, ggshield over ``/`` or a home);
- ``cloud-exposure`` and ``remote-exec`` for the control-plane verbs ``acts`` leaves out: any
  mutating cloud command given an open CIDR or a public-access switch, and instance user data;
- ``defense-off``: security daemons masked, security modules unloaded, the clock set back;
- ``runs-later-config``: MCP servers added to an agent through its own CLI.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS", "channel_acts", "line_acts"]

_AGENT_BYPASS = lazy_compile(
    r"^--?(?:dangerously[\w-]*|yolo|trust-all-tools|approval-mode=yolo|full-auto|allow-all-tools"
    r"|permission-mode=bypassPermissions|skip-permissions[\w-]*|force|auto-approve|no-confirm)$"
)
_UNSAFE_SETTING = lazy_compile(
    r"(?i)(?:^|[=\"'\s])[\"']?(?:bypassPermissions|yolo|danger-full-access|full-auto)\b"
    r"|approval[\w.-]*[\"']?\s*[=\s]\s*[\"']?never\b|dangerously|skipDangerousModePermissionPrompt"
    r"|autoApprove[\w.]*[\"']?\s*[=\s]\s*(?:true|[\"']?\*)"
)
_AGENTS = frozenset(
    {
        "claude",
        "gemini",
        "q",
        "codex",
        "cursor-agent",
        "aider",
        "opencode",
        "qwen",
        "amp",
        "goose",
        "crush",
        "kiro-cli",
        "copilot",
        "droid",
        "auggie",
        "cline",
        "continue",
    }
)


def _agent(argv: list[str]) -> Iterator[Effect]:
    flags = [a for a in argv[1:] if _AGENT_BYPASS.match(a)]
    mode = next(
        (
            argv[i + 1]
            for i, a in enumerate(argv[:-1])
            if a in ("--approval-mode", "--permission-mode", "--sandbox", "-s", "--ask-for-approval", "-a")
        ),
        "",
    )
    if (flags and not (argv[0] in ("aider", "goose") and flags == ["--force"])) or mode in (
        "yolo",
        "bypassPermissions",
        "danger-full-access",
        "never",
    ):
        yield _fx(
            "agent-unsafe", f"starts {argv[0]} with its approvals or sandbox off", " ".join(flags) or mode
        )
    words = _words(argv)
    # The same switch kept in the agent's settings: `claude config set -g permissions.defaultMode
    # bypassPermissions`, `codex -c approval_policy=never` (probe14: agents widening their own
    # permissions).
    settings = words[2:] if words[:2] in (["config", "set"], ["config", "add"]) else []
    settings += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-c", "--config")]
    settings += [a.split("=", 1)[1] for a in argv[1:] if a.startswith("--config=")]
    if settings and _UNSAFE_SETTING.search(" ".join(settings)):
        yield _fx(
            "agent-unsafe",
            f"sets {argv[0]} to run with its approvals or sandbox off",
            " ".join(settings)[:80],
        )
    if words[:2] == ["mcp", "add"] or words[:2] == ["mcp", "add-json"]:
        yield _fx(
            "runs-later-config",
            f"{argv[0]} mcp add registers a server the agent starts",
            " ".join(words[2:4]),
        )


_URL = lazy_compile(r"^(?:https?|ssh|git)://|^[\w.-]+@[\w.-]+:")


def _git(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:1] == ["push"] and any(_URL.match(w) for w in words[1:]):
        yield _fx(
            "publish",
            "git pushes to a URL that is not a configured remote",
            next(w for w in words if _URL.match(w)),
        )


def _gh(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    public = "--public" in argv
    if words[:2] == ["repo", "create"] and public:
        yield _fx("publish", f"{argv[0]} creates a public repository", " ".join(words[2:3]))
    elif words[:2] == ["gist", "create"] and public:
        yield _fx("publish", "gh publishes a public gist", " ".join(words[2:]))
    elif (
        words[:1] == ["api"]
        and any(re.match(r"^(?:\w+=)?@(?!-$)", a) for a in argv[2:])
        and any(
            a in ("-X", "--method")
            or a.startswith("--method=")
            or a in ("-f", "-F", "--field", "--raw-field", "--input")
            for a in argv
        )
    ):
        yield _fx("publish", "gh api uploads a file's contents", " ".join(words[1:2]))


_SCANNERS = frozenset(
    {"trufflehog", "gitleaks", "noseyparker", "detect-secrets", "ggshield", "whispers", "kingfisher"}
)
_WIDE = lazy_compile(
    r"^(?:/+|/+(?:home|root|Users|etc|var|opt)(?:/+[^/]*)?/*|~[\w.-]*/*|\$HOME/*|\$\{HOME\}/*)$"
)


def _scanner(argv: list[str]) -> Iterator[Effect]:
    targets = [a.split("=", 1)[-1] for a in argv[1:]]
    if any(_WIDE.match(t) for t in targets):
        yield _fx("secret-hunt", f"{argv[0]} scans the machine for secrets", " ".join(argv[1:4]))


_OPEN = lazy_compile(r"(?:^|[=,\[{])0\.0\.0\.0/0|::/0")
_PUBLIC_SWITCH = lazy_compile(
    r"^--(?:publicly-accessible|allow-blob-public-access|public-access|assign-public-ip|enable-public-ip"
    r"|no-require-ssl|public-network-access)(?:=(?:true|enabled|Enabled|blob|container))?$"
)
_MUTATING = lazy_compile(r"^(?:create|update|patch|modify|set|put|authorize|add|attach|enable|allow|apply)")


def _cloud(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    verbs = [w for w in words[:5] if _MUTATING.match(w) or re.match(r"^(?:modify|update|create|patch)-", w)]
    if verbs and (
        any(_OPEN.search(a) for a in argv[1:])
        or any(_PUBLIC_SWITCH.match(a) for a in argv[1:])
        or (argv[0] == "az" and "true" in argv and any("public" in a for a in argv))
    ):
        yield _fx(
            "cloud-exposure", f"{argv[0]} {' '.join(words[:3])} opens a resource to the internet", verbs[0]
        )
    if (
        argv[0] == "aws"
        and words[:2] == ["ec2", "modify-instance-attribute"]
        and any(a.lower() in ("userdata", "--user-data") for a in argv)
    ):
        yield _fx("remote-exec", "aws sets instance user data, run at the next boot", words[1])
    if argv[0] == "aws" and words[:2] == ["organizations", "leave-organization"]:
        yield _fx("log-off", "aws leaves the organization and its guardrails", words[1])


_SECURITY_UNITS = lazy_compile(
    r"^(?:auditd|auditbeat|falco[\w-]*|falcon-sensor|osqueryd|wazuh-agent|tetragon|tracee|sysdig-agent|dragent|clamav-daemon|clamd|apparmor|fail2ban"
    r"|ufw|firewalld|crowdstrike|sentinelone|mdatp|elastic-agent|rsyslog|systemd-journald|aide"
    # the clouds' own monitoring and management agents, the first thing cryptojacking worms remove
    r"|amazon-cloudwatch-agent|amazon-ssm-agent|snap\.amazon-ssm-agent\.amazon-ssm-agent|google-cloud-ops-agent\S*"
    r"|google-guest-agent|google-osconfig-agent|stackdriver-agent|azuremonitoragent|omsagent\S*|walinuxagent"
    r"|aegis|aliyun|AliYunDun\w*|cloudmonitor|YDService|YDLive|tat_agent|qcloud\w*|datadog-agent\S*"
    r"|newrelic-infra|splunkd?|SplunkForwarder|nessusagent|qualys-cloud-agent|ir_agent|cbagentd)(?:\.service)?$"
)


def _host(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    if (
        tool in ("systemctl", "service")
        and any(a in ("mask", "disable", "stop", "kill") for a in rest)
        and any(_SECURITY_UNITS.match(a) for a in rest)
    ):
        yield _fx("defense-off", f"{tool} stops a security or logging service", " ".join(rest))
    elif (
        tool in ("modprobe", "rmmod")
        and (tool == "rmmod" or "-r" in rest or "--remove" in rest)
        and any(re.match(r"^(?:apparmor|selinux|lkrg|yama|tomoyo|landlock|audit\w*)$", a) for a in rest)
    ):
        yield _fx("defense-off", f"{tool} unloads a security module", " ".join(rest))
    elif tool in ("date", "timedatectl", "hwclock") and (
        any(a in ("-s", "--set") or a.startswith("--set=") for a in rest) or rest[:1] == ["set-time"]
    ):
        yield _fx("defense-off", f"{tool} sets the system clock", " ".join(rest))


_HANDLERS = {
    **dict.fromkeys(_AGENTS, _agent),
    "git": _git,
    "gh": _gh,
    "glab": _gh,
    **dict.fromkeys(_SCANNERS, _scanner),
    **dict.fromkeys(("aws", "gcloud", "az"), _cloud),
    **dict.fromkeys(("systemctl", "service", "modprobe", "rmmod", "date", "timedatectl", "hwclock"), _host),
}


def channel_acts(argv: list[str]) -> list[Effect]:
    """The effects of one unwrapped command that the other tables leave out (see module doc)."""
    handler = _HANDLERS.get(argv[0]) if argv else None
    return list(handler(argv)) if handler else []


def line_acts(commands: list[list[str]]) -> Iterator[Effect]:
    """``git remote add NAME URL ... git push NAME``: a remote added and pushed on one line."""
    added = {
        c[c.index("add") + 1]
        for c in commands
        if c[:1] == ["git"]
        and "remote" in c
        and "add" in c
        and c.index("add") + 2 < len(c)
        and _URL.match(c[c.index("add") + 2])
    }
    for argv in commands:
        if argv[:1] == ["git"] and "push" in argv and added & set(argv):
            yield _fx("publish", "git pushes to a remote added on the same line", " ".join(sorted(added)))
            return


COMMAND_READERS: tuple[CommandReader, ...] = ((frozenset(_HANDLERS), channel_acts),)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
