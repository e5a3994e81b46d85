"""What a shell line's commands do to trust, identity, defences and the network, as *effects*.

The rules once named programs and flags one technique at a time; a new spelling of an old
technique walked past them. Here every command the shell reader finds (already unwrapped from
sudo, env, bash -c, find -exec, ...) is mapped to the effect it has, and the rules judge the
effect: ``tls-off`` is one effect whether it is ``curl -k``, ``npm config set strict-ssl false``,
``git -c http.sslVerify=false`` or ``NODE_TLS_REJECT_UNAUTHORIZED=0``.

Each effect is a map ``{"kind", "what", "target"}``: ``kind`` is one of :data:`KINDS`, ``what``
a short phrase for the message, ``target`` the host, URL, path or key acted on (``""`` when
none). The tables are the whole knowledge; the functions only walk argv. This module reads
package managers, git and cloud control planes; ``host`` reads what commands do to the machine.

Each module lists its per-command readers in ``COMMAND_READERS`` with the programs each reads (a
set of base names, a test on the name, or ``None`` for a reader of every command's arguments);
:data:`COMMAND_READERS` here gathers them in reporting order and :func:`command_acts` calls, for a
command, only the readers of its program (worked out once per program name). A new per-command
reader goes into its module's ``COMMAND_READERS`` with its programs;
``tests/cmdline/test_acts_dispatch.py`` checks that no reader acts on a program it leaves out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache

from dsh_policy.cmdline.effects import (
    apps,
    availability,
    channels,
    checks,
    cloud_abuse,
    cloud_more,
    cloud_takeover,
    code_sources,
    data_platforms,
    escape,
    forge,
    guides,
    hardening,
    host,
    hosted,
    hypervisor,
    lockout,
    lookalikes,
    macos,
    open_services,
    packages,
    platforms,
    reach,
    stored_credentials,
    windows,
    workloads,
)
from dsh_policy.cmdline.effects.availability import availability_line_acts
from dsh_policy.cmdline.effects.build_tools import env_file_acts, exported_code_acts
from dsh_policy.cmdline.effects.channels import line_acts
from dsh_policy.cmdline.effects.checks import check_skip_acts, secret_commit_acts
from dsh_policy.cmdline.effects.chosen_operands import chosen_operand_acts
from dsh_policy.cmdline.effects.code_sources import runner_source_acts
from dsh_policy.cmdline.effects.collection import collection_line_acts
from dsh_policy.cmdline.effects.data_platforms import data_line_acts
from dsh_policy.cmdline.effects.defences import DEFENCE_HANDLERS
from dsh_policy.cmdline.effects.escape import escape_line_acts, uninstalled_agents
from dsh_policy.cmdline.effects.forge import runner_guard_off
from dsh_policy.cmdline.effects.git_rewrites import redirected_pushes, rewrite_target
from dsh_policy.cmdline.effects.harvest import harvest_acts, hash_reader
from dsh_policy.cmdline.effects.hijack import hijack_line_acts
from dsh_policy.cmdline.effects.host import (
    containerised_tunnels,
    hidden_staging,
    hidden_temp_programs,
    hunts_through_xargs,
    killed_daemons,
)
from dsh_policy.cmdline.effects.hosted import hosted_line_acts
from dsh_policy.cmdline.effects.hypervisor import datastore_locker_acts
from dsh_policy.cmdline.effects.lockout import lockout_line_acts
from dsh_policy.cmdline.effects.lookalikes import runner_lookalike_acts
from dsh_policy.cmdline.effects.model import CommandReader, Effect, Handler, runs
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.effects.open_services import open_service_line_acts
from dsh_policy.cmdline.effects.overwrites import overwrite_acts, powershell_cradles
from dsh_policy.cmdline.effects.packages import runner_acts
from dsh_policy.cmdline.effects.reach import reach_line_acts
from dsh_policy.cmdline.effects.sources import SOURCE_HANDLERS, downloaded_archive_runs, downloaded_installs
from dsh_policy.cmdline.effects.stored_credentials import borrowed_agents
from dsh_policy.cmdline.effects.trust_settings import TRUST_HANDLERS, env_switch_acts, narrow_go_private
from dsh_policy.cmdline.effects.workloads import workload_line_acts
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.shell import shell_commands, shell_redirects, shell_scripts
from dsh_policy.cmdline.shell.embedded import GIT_COMMAND_KEYS

__all__ = ["COMMAND_READERS", "KINDS", "command_acts", "readers_for", "shell_acts"]

KINDS = frozenset(
    {
        "runs-later-config",
        "registry",
        "source",
        "tls-off",
        "cloud-identity",
        "cloud-exposure",
        "remote-exec",
        "log-off",
        "defense-off",
        "account",
        "memory-access",
        "secret-hunt",
        "keychain",
        "tunnel",
        "miner",
        "x-display",
        "secret-store",
        "persistence",
        "malicious-package",
        "lookalike-package",
        "agent-unsafe",
        "publish",
        "encrypt-destroy",
        "host-escape",
        "shell-listener",
        "encrypt-hostage",
        "input-capture",
        "privilege",
        "erase-contents",
        "break-system",
        "scan",
        "cloud-spend",
        "outage",
        "rollback",
        "checks-off",
        "secret-commit",
        "protection-off",
    }
)
"""Every effect kind :func:`shell_acts` reports."""

# ----------------------------------------------------------------- package managers and git
_TLS_KEYS = lazy_compile(
    r"(?i)^(?:strict-ssl|enableStrictSsl|ssl_verify|sslverify|http\.sslVerify|http\.[^ ]*\.sslVerify"
    r"|global\.trusted-host|[\w.]*trusted-host|verify_ssl|ssl-verify|cafile|ca-file|ca|insecure)$"
)
_REGISTRY_KEYS = lazy_compile(
    r"(?i)^(?:registry|@[\w-]+:registry|npmRegistryServer|[\w.]*index-url|[\w.]*extra-index-url"
    r"|[\w.]*find-links|global\.index|channels|default_channels|mirror\..*|source|sources)$"
)
_FALSE = lazy_compile(r"(?i)^(?:false|0|no|off)$")
_PLAIN_HTTP = lazy_compile(r"(?i)^http://")
_SCRIPT_DOWNLOAD_SITE = lazy_compile(
    r"(?i)^--(?![\w-]*(?:proxy|registry)\b)[\w-]*(?:site|mirror|host|cdnurl|download[\w-]*url)[\w-]*=[a-z][a-z0-9+.-]*://"
)
_LOOPBACK_ONLY = lazy_compile(r"^[\s\[\]\"',]*(?:(?:localhost|127\.0\.0\.1|::1|\[::1\])[\s\[\]\"',]*)+$")
_YARN_CHECKS_OFF = lazy_compile(r"(?i)^(?:checksumBehavior=(?:ignore|update|reset)|unsafeHttpWhitelist=.+)$")
_LATER_GIT_KEYS = lazy_compile(
    r"(?i)^(?:core\.(?:hookspath|fsmonitor|sshcommand|pager|editor|askpass|gitproxy)|alias\.[\w-]+"
    # the template folder every later clone and init copies its hooks from
    r"|init\.templatedir"
    r"|include(?:if\.[^=]*)?\.path|filter\.[\w-]+\.(?:clean|smudge|process)"
    r"|diff\.[\w-]+\.(?:textconv|command)|credential\.helper|gpg\.program|uploadpack\.packobjectshook"
    r"|sequence\.editor|merge\.[\w-]+\.driver|submodule\.[\w-]+\.update)$"
)


# A public-access block with one of its switches off (``BlockPublicPolicy=false``, JSON ``false``).
_BLOCK_OFF = lazy_compile(r"(?i)(?:Block|Ignore|Restrict)Public\w*[\"']?\s*[=:]\s*false\b")


def _config_pairs(argv: list[str], verbs: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """(key, value) pairs a ``config set``-style command writes: ``set k v``, ``set k=v``."""
    words = [a for a in argv[1:] if not a.startswith("-") or a[1:2].isdigit()]
    for i, word in enumerate(words):
        if word in verbs:
            rest = words[i + 1 :]
            while rest:
                key = rest[0]
                if "=" in key:
                    k, _, v = key.partition("=")
                    yield k, v
                    rest = rest[1:]
                else:
                    yield key, rest[1] if len(rest) > 1 else ""
                    rest = rest[2:]
            return


def _package_config(argv: list[str]) -> Iterator[Effect]:
    tool = argv[0]
    pairs = (
        list(_config_pairs(argv, ("set", "add", "--set", "--add")))
        if any(a in ("config", "set", "sources") for a in argv[1:3])
        else []
    )
    if tool == "conda":
        i = next((j for j, a in enumerate(argv) if a in ("--set", "--add")), -1)
        if i >= 0 and i + 2 < len(argv):
            pairs.append((argv[i + 1], argv[i + 2]))
    if tool == "gem" and "sources" in argv:
        url = _value(argv, "--add", "-a")
        if url:
            yield _fx("registry", "adds a gem source", url)
    for key, value in pairs:
        if _TLS_KEYS.match(key) and (
            _FALSE.match(value) or "trusted-host" in key.lower() or key.lower() in ("cafile", "ca-file", "ca")
        ):
            yield _fx("tls-off", f"turns off TLS verification ({key})", key)
        elif _REGISTRY_KEYS.match(key):
            yield _fx("registry", f"changes the package registry ({key})", value)
            if _PLAIN_HTTP.match(value):
                # even the official registry's name over plain HTTP: anyone on the path serves
                # the packages (the rule exempts a registry on this machine)
                yield _fx("tls-off", f"fetches packages over plain HTTP ({key})", value)
        elif tool == "yarn" and _YARN_CHECKS_OFF.match(f"{key}={value}") and not _LOOPBACK_ONLY.match(value):
            # Berry's checksumBehavior ignore/update/reset accepts whatever archive is served
            # (update rewrites the lockfile to match it); unsafeHttpWhitelist allows plain HTTP
            yield _fx("tls-off", f"turns off yarn's archive checks ({key})", key)
        elif tool in ("npm", "pnpm", "yarn", "bun") and re.match(
            r"^scripts\.(?:pre|post)?(?:install|uninstall)$|^scripts\.prepare$", key
        ):
            yield _fx("runs-later-config", f"adds an install script ({key})", key)


def _npm_pkg(argv: list[str]) -> Iterator[Effect]:
    if len(argv) > 2 and argv[1] == "pkg" and argv[2] == "set":
        for key, _ in _config_pairs(argv, ("set",)):
            if re.match(r"^scripts\.(?:pre|post)?(?:install|uninstall)$|^scripts\.prepare$", key):
                yield _fx("runs-later-config", f"adds an install script ({key})", key)
    elif (
        len(argv) > 3
        and argv[1] == "set-script"
        and re.match(r"^(?:pre|post)?(?:install|uninstall)$|^prepare$", argv[2])
    ):
        # npm 7's verb for the same edit
        yield _fx("runs-later-config", f"adds an install script (scripts.{argv[2]})", argv[2])


def _installer_flags(argv: list[str]) -> Iterator[Effect]:
    tool = argv[0]
    for opt in (
        "--index-url",
        "-i",
        "--extra-index-url",
        "--find-links",
        "-f",
        "--registry",
        "--source",
        "--index",
        "--default-index",
        "--server",
        "--only-server",
    ):
        if tool in ("gem",) and opt in ("-i", "-f"):
            continue
        if (tool == "luarocks") != (opt in ("--server", "--only-server")):
            continue
        if tool in ("npm", "pnpm", "yarn", "bun", "npx") and opt not in ("--registry",):
            continue
        value = _value(argv, opt)
        if value and re.match(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+\.[a-z]{2,}(?::\d+)?/)", value, re.I):
            yield _fx("registry", f"installs from another index ({opt})", value)
    if tool in ("npm", "pnpm", "yarn", "bun"):
        # npm hands every unknown `--key=value` to the install scripts as npm_config_key: the
        # binary-download sites of native modules (node-sass's --sass-binary-site, node-pre-gyp's
        # --<module>_binary_host_mirror, electron_mirror) fetch the code those scripts run
        site = next((a for a in argv[1:] if _SCRIPT_DOWNLOAD_SITE.match(a)), None)
        if site is not None:
            yield _fx("registry", "install scripts download from another site", site.partition("=")[2])
    if _value(argv, "--trusted-host") is not None or any(
        a.startswith("--strict-ssl=false") or a in ("--no-strict-ssl", "--insecure", "--no-verify-ssl")
        for a in argv
    ):
        yield _fx("tls-off", "turns off TLS verification for an install")


def _git(argv: list[str]) -> Iterator[Effect]:
    settings: list[tuple[str, str]] = []
    for i, arg in enumerate(argv):
        if arg == "-c" and i + 1 < len(argv):
            # `git -c core.pager=CMD log` runs CMD now, for this command only, and the reader
            # judges CMD as a command (embedded_lines); nothing is kept to run later.
            if GIT_COMMAND_KEYS.match(argv[i + 1]):
                continue
            k, _, v = argv[i + 1].partition("=")
            settings.append((k, v))
    if "config" in argv[1:4]:
        words = [a for a in argv[argv.index("config") + 1 :] if not a.startswith("-")]
        if words and words[0] in ("set", "unset"):
            words = words[1:] if words[0] == "set" else []
        if len(words) >= 2:
            settings.append((words[0], words[1]))
    for key, value in settings:
        if re.match(r"(?i)^http\.(?:[^ ]*\.)?sslverify$", key) and _FALSE.match(value):
            yield _fx("tls-off", "turns off git's TLS verification", key)
        elif rewrite_target(key, value):
            # every fetch of the prefix's host goes to another host (cmdline.effects.git_rewrites)
            yield _fx(
                "registry", f"git config {key} sends {value} to another host", rewrite_target(key, value)
            )
        elif re.match(r"(?i)^remote\..+\.pushurl$", key) and value:
            # the remote still fetches from where it did, but every push now goes to the value (probe24)
            yield _fx("registry", f"git config {key} sends the remote's pushes elsewhere", value)
        elif (
            _LATER_GIT_KEYS.match(key)
            and (not key.lower().startswith("alias.") or value.startswith("!"))
            and not _ordinary_git_program(key.lower(), value)
        ):
            yield _fx("runs-later-config", f"git config {key} runs a program later", key)


_PLAIN_EDITOR = lazy_compile(
    r"^(?:code|code-insiders|cursor|windsurf|subl|mate|zed|vim|nvim|vi|nano|emacs|emacsclient|micro|hx|kak|idea"
    r"|less|more|cat|delta|bat|diff-so-fancy)(?:\s+--?[A-Za-z][\w-]*)*$"
)
_STOCK_HELPERS = frozenset({"osxkeychain", "manager", "manager-core", "libsecret", "wincred", "cache"})


def _ordinary_git_program(key: str, value: str) -> bool:
    """A setting naming what it exists to name: an editor or pager with its own options, or one of
    git's stock credential helpers that keep secrets in memory or a keychain (``store`` writes
    them in clear to a file and stays a trust change). ``core.hooksPath`` stays a trust change
    even inside the repository: it makes the repository's own files run as hooks, which git
    never does unasked."""
    if key in ("core.editor", "core.pager", "sequence.editor"):
        return bool(_PLAIN_EDITOR.match(value))
    if key == "credential.helper":
        return value.split(" ", 1)[0] in _STOCK_HELPERS
    return False


def _go(argv: list[str]) -> Iterator[Effect]:
    if len(argv) > 2 and argv[1] == "env" and "-w" in argv:
        for arg in argv[2:]:
            key, _, value = arg.partition("=")
            if narrow_go_private(key, value):
                continue  # the organization's own modules, the documented private set-up
            if (
                key in ("GOINSECURE", "GONOSUMDB", "GONOSUMCHECK")
                or (key == "GOSUMDB" and value == "off")
                or (key == "GOFLAGS" and "insecure" in value)
            ):
                yield _fx("tls-off", f"turns off Go module verification ({key})", key)
            elif key in ("GOPROXY", "GOPRIVATE", "GONOPROXY"):
                yield _fx("registry", f"changes the Go module proxy ({key})", value)


def _poetry(argv: list[str]) -> Iterator[Effect]:
    if "source" in argv and "add" in argv:
        urls = [a for a in argv if "://" in a]
        yield _fx("registry", "adds a package source", urls[0] if urls else "")


def _bundle(argv: list[str]) -> Iterator[Effect]:
    if "config" in argv and any(a.startswith("mirror.") for a in argv):
        yield _fx(
            "registry",
            "mirrors the gem source",
            next((a for a in argv if "://" in a and not a.startswith("mirror.")), ""),
        )


def _fetcher(argv: list[str]) -> Iterator[Effect]:
    tool = argv[0]
    insecure = (
        tool == "curl" and any(a == "--insecure" or re.match(r"^-[a-zA-Z]*k[a-zA-Z]*$", a) for a in argv[1:])
    ) or (tool == "wget" and "--no-check-certificate" in argv)
    if insecure:
        urls = [a for a in argv[1:] if "://" in a]
        yield _fx("tls-off", f"{tool} without certificate checks", urls[0] if urls else "")


# ----------------------------------------------------------------- cloud control planes
_AWS_IDENTITY = lazy_compile(
    r"^(?:create-access-key|create-user|create-login-profile|update-login-profile|attach-(?:user|role"
    r"|group)-policy|put-(?:user|role|group)-policy"
    r"|add-user-to-group|update-assume-role-policy|create-role|create-policy-version"
    r"|set-default-policy-version|create-service-specific-credential"
    r"|upload-ssh-public-key|create-virtual-mfa-device|deactivate-mfa-device"
    r"|delete-account-password-policy|update-account-password-policy)$"
)
_AWS_RESOURCE_POLICY = lazy_compile(r"^(?:put|set)-(?:[a-z]+-){0,3}policy$|^set-(?:queue|topic)-attributes$")
# a statement's principal that is everyone, also inside a policy given as an escaped JSON string
_ANY_PRINCIPAL = lazy_compile(
    r'\\?"Principal\\?"\s*:\s*(?:\\?"\*\\?"|\{\s*\\?"AWS\\?"\s*:\s*(?:\\?"\*\\?"|\[\s*\\?"\*\\?"\s*\]))'
)
_OPEN_CIDR = lazy_compile(
    r"(?:^|[^0-9])0\.0\.0\.0/0|::/0|^\*$|^Internet$|^Any$|allUsers|allAuthenticatedUsers"
)


def _aws(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if len(words) < 2:
        return
    service, op = words[0], words[1]
    if service == "iam" and _AWS_IDENTITY.match(op):
        yield _fx("cloud-identity", f"aws iam {op}", op)
    elif (
        service == "ec2"
        and op in ("authorize-security-group-ingress", "authorize-security-group-egress")
        and any(_OPEN_CIDR.search(a) for a in argv)
    ):
        yield _fx("cloud-exposure", "opens a security group to the internet", op)
    elif (
        service in ("ec2", "rds")
        and op
        in (
            "modify-snapshot-attribute",
            "modify-image-attribute",
            "modify-db-snapshot-attribute",
            "modify-db-cluster-snapshot-attribute",
        )
        and any(
            a in ("add", "--values-to-add", "--launch-permission")
            or a.startswith("--values-to-add")
            or a.startswith("--launch-permission")
            for a in argv
        )
    ):
        yield _fx("cloud-exposure", "shares a snapshot or image with other accounts", op)
    elif service == "s3api" and (
        op in ("delete-public-access-block", "put-bucket-policy")
        or (op == "put-public-access-block" and any(_BLOCK_OFF.search(a) for a in argv))
        or (
            op in ("put-bucket-acl", "put-object-acl")
            and any(a.startswith("public") or "AllUsers" in a for a in argv)
        )
    ):
        yield _fx("cloud-exposure", f"aws s3api {op}", op)
    elif (
        service == "s3"
        and op in ("cp", "mv", "sync")
        and "--no-sign-request" in argv
        and words[-1:]
        and words[-1].startswith("s3://")
        and not words[-2].startswith("s3://")
    ):
        # an upload without credentials lands only in a bucket anyone may write: not the account's
        yield _fx("cloud-exposure", "uploads local files to a bucket anyone can write", words[-1])
    elif service == "lambda" and op == "add-permission" and _value(argv, "--principal") == "*":
        yield _fx("cloud-exposure", "lets anyone invoke a function", op)
    elif _AWS_RESOURCE_POLICY.match(op) and any(_ANY_PRINCIPAL.search(a) for a in argv):
        # a resource policy (ECR, SQS, SNS, Secrets Manager, KMS, Glacier, EFS, backup vaults...)
        # whose statement names every principal: anyone may act on the resource
        yield _fx("cloud-exposure", f"aws {service} {op} grants every principal", op)
    elif service == "kms" and op in ("put-key-policy", "create-grant"):
        # who may decrypt with the key: a policy read from a file is not seen here
        yield _fx("cloud-identity", f"aws kms {op} changes who may use an encryption key", op)
    elif (
        (service == "ssm" and op in ("send-command", "start-session"))
        or (service == "ecs" and op == "execute-command")
        or (service == "ec2-instance-connect")
    ):
        yield _fx("remote-exec", f"aws {service} {op} runs commands on other machines", op)
    elif service == "ec2" and op == "get-password-data":
        yield _fx("cloud-identity", "reads an instance's administrator password", op)
    elif (
        (
            service == "cloudtrail"
            and op in ("stop-logging", "delete-trail", "put-event-selectors", "update-trail")
        )
        or (
            service == "guardduty"
            and op in ("delete-detector", "disassociate-from-master-account", "update-detector")
        )
        or (
            service == "config"
            and op
            in ("stop-configuration-recorder", "delete-configuration-recorder", "delete-delivery-channel")
        )
        or (service == "securityhub" and op == "disable-security-hub")
        or (service == "logs" and op in ("delete-log-group", "delete-log-stream"))
    ):
        yield _fx("log-off", f"aws {service} {op}", op)


def _gcloud(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    text = " ".join(words)
    if re.search(
        r"\biam service-accounts keys create\b|\biam service-accounts create\b"
        r"|\badd-iam-policy-binding\b|\bset-iam-policy\b|\biam roles (?:create|update)\b",
        text,
    ):
        kind = (
            "cloud-exposure"
            if any(re.search(r"allUsers|allAuthenticatedUsers", a) for a in argv)
            else "cloud-identity"
        )
        yield _fx(kind, "gcloud " + " ".join(words[:4]), text)
    elif re.search(r"\bcompute firewall-rules (?:create|update)\b", text) and any(
        _OPEN_CIDR.search(a) for a in argv
    ):
        yield _fx("cloud-exposure", "opens a firewall rule to the internet", text)
    elif re.search(
        r"\bcompute ssh\b|\bcompute instances add-metadata\b.*startup-script|\bcompute scp\b"
        r"|\bcloud-shell ssh\b",
        text + " " + " ".join(argv),
    ):
        yield _fx("remote-exec", "gcloud runs commands on another machine", text)
    elif re.search(
        r"\blogging (?:sinks (?:delete|update)|logs delete|buckets delete)\b|\bscc\b.*\bdisable\b", text
    ):
        yield _fx("log-off", "gcloud " + " ".join(words[:3]), text)


def _gsutil(argv: list[str]) -> Iterator[Effect]:
    if "iam" in argv and "ch" in argv and any(re.search(r"allUsers|allAuthenticatedUsers", a) for a in argv):
        yield _fx("cloud-exposure", "makes a bucket public", "")
    elif "acl" in argv and any(re.search(r"AllUsers|public-read", a) for a in argv):
        yield _fx("cloud-exposure", "makes objects public", "")


def _az(argv: list[str]) -> Iterator[Effect]:
    text = " ".join(_words(argv))
    if re.search(
        r"\brole assignment create\b|\bad (?:sp|app) credential reset\b|\bad sp create-for-rbac\b"
        r"|\bad user create\b|\bad group member add\b|\bad app (?:permission grant|credential reset)\b",
        text,
    ):
        yield _fx("cloud-identity", "az " + text[:60], text)
    elif re.search(r"\bnetwork nsg rule (?:create|update)\b", text) and any(
        _OPEN_CIDR.search(a) for a in argv
    ):
        yield _fx("cloud-exposure", "opens a network security group to the internet", text)
    elif re.search(r"\bstorage (?:container set-permission|account update)\b", text) and any(
        a in ("blob", "container", "true") for a in argv
    ):
        yield _fx("cloud-exposure", "makes storage public", text)
    elif re.search(r"\bvm run-command (?:invoke|create)\b|\bvm extension set\b|\bvmss run-command\b", text):
        yield _fx("remote-exec", "az runs commands on a virtual machine", text)
    elif re.search(r"\bmonitor (?:diagnostic-settings|log-profiles) delete\b", text):
        yield _fx("log-off", "az " + text[:60], text)


def _kubectl(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if (
        words[:2] in (["create", "clusterrolebinding"], ["create", "rolebinding"])
        or words[:2] == ["create", "token"]
        or words[:2] == ["certificate", "approve"]
    ):
        yield _fx("cloud-identity", "kubectl " + " ".join(words[:2]), " ".join(words))
    elif words[:1] in (["run"], ["debug"]) and any(
        re.search(
            r"privileged\W*:\s*true|hostPID\W*:\s*true|hostNetwork\W*:\s*true|--profile=sysadmin|node/", a
        )
        for a in argv
    ):
        yield _fx("remote-exec", "kubectl starts a privileged pod on a node", " ".join(words))
    elif (
        words[:1] == ["get"]
        and any(w in ("secret", "secrets") or w.startswith("secret/") for w in words)
        and _prints_values(_value(argv, "-o", "--output") or "")
    ):
        yield _fx("cloud-identity", "kubectl prints secret values", " ".join(words))


_TEMPLATE_VALUES = lazy_compile(
    r"(?i)(?:^|[^a-z])(?:string)?data\b|\{\s*[@.]?\s*\}|\{\s*\.items(?:\[[^\]]*\])?\s*\}"
    r"|\{\{\s*\.\s*\}\}|:\.\s*(?:,|$)"
)


def _prints_values(output: str) -> bool:
    """Whether ``kubectl get secret -o OUTPUT`` prints secret values: whole objects do, a template
    (jsonpath, custom-columns, go-template) only when it names ``.data``/``.stringData`` or a
    whole object; names and types alone (``custom-columns=NAME:.metadata.name``) are no secret."""
    kind, _, template = output.partition("=")
    kind = kind.split("-file")[0] if kind.endswith("-file") else kind
    if kind in ("yaml", "json"):
        return True
    templated = kind in ("jsonpath", "go-template", "custom-columns")
    return templated and bool(_TEMPLATE_VALUES.search(template or "{}"))


_HANDLERS: dict[str, tuple[Handler, ...]] = {}
for _names, _handler in (
    (("npm", "pnpm", "yarn", "bun", "pip", "pip3", "uv", "conda", "mamba", "gem"), _package_config),
    (("npm", "pnpm"), _npm_pkg),
    (
        ("pip", "pip3", "uv", "npm", "pnpm", "yarn", "bun", "gem", "cargo", "poetry", "pipx", "luarocks"),
        _installer_flags,
    ),
    (("git",), _git),
    (("go",), _go),
    (("poetry",), _poetry),
    (("bundle", "bundler"), _bundle),
    (("curl", "wget"), _fetcher),
    (("aws",), _aws),
    (("gcloud",), _gcloud),
    (("gsutil",), _gsutil),
    (("az",), _az),
    (("kubectl", "oc"), _kubectl),
):
    for _name in _names:
        _HANDLERS[_name] = (*_HANDLERS.get(_name, ()), _handler)


def _own_table(argv: list[str]) -> Iterator[Effect]:
    """This module's readers of package managers, git and cloud control planes, by program."""
    for handler in _HANDLERS.get(argv[0], ()):
        yield from handler(argv)


def _defence_table(argv: list[str]) -> Iterable[Effect]:
    reader = DEFENCE_HANDLERS.get(argv[0])
    return reader(argv) if reader is not None else ()


def _trust_table(argv: list[str]) -> Iterable[Effect]:
    reader = TRUST_HANDLERS.get(argv[0])
    return reader(argv) if reader is not None else ()


def _source_table(argv: list[str]) -> Iterator[Effect]:
    for reader in SOURCE_HANDLERS.get(argv[0], ()):
        yield from reader(argv)


COMMAND_READERS: tuple[CommandReader, ...] = (
    (frozenset(_HANDLERS), _own_table),
    *host.COMMAND_READERS,
    *macos.COMMAND_READERS,
    (frozenset(DEFENCE_HANDLERS), _defence_table),
    (frozenset(TRUST_HANDLERS), _trust_table),
    (frozenset(SOURCE_HANDLERS), _source_table),
    (None, hash_reader),  # ShadowHashData is read in any command (dscl, a script's arguments)
    *packages.COMMAND_READERS,
    *code_sources.COMMAND_READERS,
    *lookalikes.COMMAND_READERS,
    *channels.COMMAND_READERS,
    *escape.COMMAND_READERS,
    *cloud_more.COMMAND_READERS,
    *reach.COMMAND_READERS,
    *availability.COMMAND_READERS,
    *stored_credentials.COMMAND_READERS,
    *cloud_abuse.COMMAND_READERS,
    *hardening.COMMAND_READERS,
    *guides.COMMAND_READERS,
    *hypervisor.COMMAND_READERS,
    *apps.COMMAND_READERS,
    *workloads.COMMAND_READERS,
    *lockout.COMMAND_READERS,
    *cloud_takeover.COMMAND_READERS,
    *platforms.COMMAND_READERS,
    *hosted.COMMAND_READERS,
    *forge.COMMAND_READERS,
    *checks.COMMAND_READERS,
    *data_platforms.COMMAND_READERS,
    *open_services.COMMAND_READERS,
    *windows.COMMAND_READERS,
)
"""Every per-command reader in the order its effects are reported, each with the programs it reads.
Most act on a few programs; the ``None`` ones read every command's arguments."""


@lru_cache(maxsize=4096)
def readers_for(program: str) -> tuple[Callable[[list[str]], Iterable[Effect]], ...]:
    """The readers of :data:`COMMAND_READERS` that read commands of ``program``, in order: worked
    out once per program name, so a command pays only for the readers of its own program and the
    few that read every command."""
    return tuple(reader for programs, reader in COMMAND_READERS if runs(programs, program))


def command_acts(argv: list[str]) -> list[Effect]:
    """The effects of one unwrapped command (argv[0] is a basename)."""
    if not argv:
        return []
    found: list[Effect] = []
    for reader in readers_for(argv[0]):
        found.extend(reader(argv))
    return found


def _written(line: str, commands: list[list[str]]) -> list[str]:
    """Files the line writes by redirection or ``tee`` (for the line-level readers)."""
    targets = [a for c in commands if c[0] == "tee" for a in c[1:] if not a.startswith("-")]
    if ">" in line:
        targets.extend(
            r["target"] for r in shell_redirects(line) if r.get("op") in (">", ">>", ">|", "&>", "&>>", "<>")
        )
    return targets


@lru_cache(maxsize=1024)
def _acts(line: str) -> tuple[tuple[tuple[str, str], ...], ...]:
    found: list[Effect] = []
    commands = shell_commands(line)
    for argv in commands:
        found.extend(command_acts(argv))
    found.extend(killed_daemons(commands))
    found.extend(hunts_through_xargs(commands))
    found.extend(containerised_tunnels(commands))
    found.extend(redirected_pushes(commands))
    # Readers that search words rather than commands read the line and every shell text inside it
    # (`bash -c '...'`, `eval`, substitutions): a package runner or an exported switch means the
    # same behind a wrapper. An effect found in both is kept once.
    scripts = shell_scripts(line)
    for script in scripts:
        found.extend(runner_acts(script))
        found.extend(runner_source_acts(script))
        found.extend(runner_lookalike_acts(script))
    found.extend(line_acts(commands))
    found.extend(downloaded_installs(line, commands))
    found.extend(downloaded_archive_runs(line, commands))
    found.extend(harvest_acts(commands))
    written = _written(line, commands)
    found.extend(escape_line_acts(commands, written))
    found.extend(reach_line_acts(commands, written))
    for script in scripts:
        found.extend(uninstalled_agents(script, commands))
    found.extend(availability_line_acts(commands))
    found.extend(chosen_operand_acts(commands))
    found.extend(datastore_locker_acts(line, commands))
    found.extend(hidden_temp_programs(line, commands))
    found.extend(hidden_staging(line, commands))
    found.extend(hijack_line_acts(line, commands, written))
    found.extend(workload_line_acts(line, commands))
    found.extend(lockout_line_acts(line, commands))
    found.extend(env_file_acts(line, written))
    found.extend(overwrite_acts(commands, line))
    found.extend(powershell_cradles(commands, line))
    found.extend(check_skip_acts(line, commands))
    found.extend(secret_commit_acts(commands))
    found.extend(hosted_line_acts(commands))
    found.extend(data_line_acts(line, commands))
    found.extend(open_service_line_acts(commands))
    for script in scripts:
        found.extend(collection_line_acts(script, commands))
    for script in scripts:
        if "=" in script:
            found.extend(env_switch_acts(script))
            found.extend(exported_code_acts(script))
            found.extend(runner_guard_off(script))
            found.extend(borrowed_agents(script))
    return tuple(dict.fromkeys(tuple(sorted(effect.items())) for effect in found))


def shell_acts(line: str) -> list[dict[str, str]]:
    """Every effect of the line's commands on trust, identity, defences and the network (see
    :data:`KINDS`), as ``{"kind", "what", "target"}`` maps. Same limits and errors as
    ``shell.commands``."""
    if not isinstance(line, str):
        raise TypeError("shell.acts expects a string")
    return [dict(effect) for effect in _acts(line)]
