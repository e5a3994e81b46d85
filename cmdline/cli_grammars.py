"""``shell.cli``: the invocations of infrastructure CLIs on a shell line, read with each CLI's
argument grammar, so a rule can ask for "``kubectl delete namespace``" or "``aws ...
terminate-instances``" without regular expressions over words.

A destructive verb is only found reliably when an option's value is not mistaken for a
subcommand: ``kubectl -n delete get pods`` gets pods in the namespace ``delete``, and ``aws
--profile prod ec2 describe-instances`` describes. So each CLI here has its options that take a
value (global and per command) and its short-option aliases, and every invocation becomes::

    {"program": "kubectl", "words": ["delete", "ns", "web"], "flags": {"namespace": "prod", "dry-run": ""}}

``words`` are the positional words in order (the command path, then its operands), ``flags`` the
options by long name (short aliases mapped, leading dashes removed; a flag without a value maps to
``""``; a repeated flag keeps its last value). CLIs read: kubectl (and oc, kubecolor), helm,
terraform (tofu, terragrunt), pulumi, aws, gcloud, gsutil, az, doctl, eksctl, gh, docker
(podman, nerdctl, docker-compose). Everything comes from :func:`shell.commands`, so wrappers,
``bash -c`` and the other spellings it resolves are covered too.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from dsh_policy.cmdline.shell import shell_commands

__all__ = ["CLI_PROGRAMS", "parse_invocation", "shell_cli"]


@dataclass(frozen=True, slots=True)
class Grammar:
    """How one CLI spells its options."""

    values: frozenset[str]  # long names (after aliasing) of options that take a value
    aliases: dict[str, str]  # short letter (or single-dash word) -> long name
    booleans: frozenset[str] = frozenset()  # long names that never take a value
    values_by_default: bool = False  # an unknown --name followed by a non-option takes it (aws, gcloud, az)
    single_dash_longs: bool = False  # terraform: -auto-approve is one long option, not a cluster


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_KUBECTL = Grammar(
    values=_names(
        "context cluster kubeconfig namespace user server token as as-group as-uid request-timeout cache-dir "
        "certificate-authority client-certificate client-key v vmodule profile profile-output filename "
        "selector output field-selector grace-period timeout container type image kustomize template "
        "replicas "
        "for from-literal from-file sort-by patch resource-version chunk-size field-manager current-replicas "
        "pod-running-timeout port address env labels overrides serviceaccount restart limits requests "
        "subresource cascade to-revision"
    ),
    aliases={
        "n": "namespace",
        "f": "filename",
        "l": "selector",
        "o": "output",
        "A": "all-namespaces",
        "c": "container",
        "k": "kustomize",
        "R": "recursive",
        "s": "server",
        "i": "stdin",
        "t": "tty",
        "p": "patch",
        "w": "watch",
        "v": "v",
        "q": "quiet",
    },
    booleans=_names(
        "all-namespaces all force now stdin tty watch wait ignore-not-found recursive overwrite record "
        "server-side prune ignore-daemonsets delete-emptydir-data disable-eviction insecure-skip-tls-verify "
        "quiet raw show-labels no-headers rm"
    ),
)
_HELM = Grammar(
    values=_names(
        "namespace kube-context kubeconfig values set set-string set-file set-json version timeout output "
        "repo "
        "description post-renderer registry-config repository-cache repository-config kube-apiserver "
        "kube-token kube-as-user burst-limit history-max max revision cascade"
    ),
    aliases={
        "n": "namespace",
        "f": "values",
        "o": "output",
        "A": "all-namespaces",
        "i": "install",
        "a": "all",
        "q": "short",
        "l": "selector",
    },
    booleans=_names(
        "force wait atomic install keep-history no-hooks all all-namespaces debug create-namespace "
        "reuse-values "
        "reset-values dry-run short uninstalled failed pending deployed"
    ),
)
_TERRAFORM = Grammar(
    values=_names(
        "var var-file target replace state state-out backup lock-timeout parallelism out backend-config "
        "plugin-dir exclude generate-config-out from-module terragrunt-working-dir terragrunt-config "
        "working-dir config log-level queue-include-dir"
    ),
    aliases={},
    booleans=_names(
        "auto-approve destroy refresh-only json no-color upgrade reconfigure migrate-state force-copy "
        "compact-warnings all terragrunt-non-interactive non-interactive"
    ),
    single_dash_longs=True,
)
_PULUMI = Grammar(
    values=_names("stack cwd config-file target message parallel exclude target-dependents color"),
    aliases={
        "s": "stack",
        "y": "yes",
        "f": "force",
        "C": "cwd",
        "t": "target",
        "m": "message",
        "p": "parallel",
    },
    booleans=_names("yes skip-preview force remove refresh debug preserve-config exclude-protected"),
)
_AWS = Grammar(
    values=_names(
        "profile region output endpoint-url query cli-input-json color ca-bundle cli-read-timeout "
        "cli-connect-timeout cli-binary-format"
    ),
    aliases={},
    booleans=_names(
        "debug no-verify-ssl no-paginate no-cli-pager no-sign-request dry-run recursive force quiet delete "
        "exact-timestamps only-show-errors include-deleted skip-final-snapshot delete-automated-backups "
        "force-delete-without-recovery follow-symlinks no-follow-symlinks size-only dryrun"
    ),
    values_by_default=True,
)
_GCLOUD = Grammar(
    values=_names(
        "project zone region account configuration format filter impersonate-service-account "
        "verbosity location cluster"
    ),
    aliases={"q": "quiet"},
    booleans=_names(
        "quiet async all recursive force dry-run no-user-output-enabled log-http continue-on-error"
    ),
    values_by_default=True,
)
_GSUTIL = Grammar(
    values=_names("o h u i"),
    aliases={
        "r": "recursive",
        "R": "recursive",
        "f": "force",
        "d": "delete",
        "m": "parallel",
        "a": "all-versions",
        "o": "o",
        "h": "h",
        "u": "u",
        "i": "i",
        "q": "quiet",
    },
    booleans=_names("recursive force delete parallel all-versions quiet"),
)
_AZ = Grammar(
    values=_names("subscription output query name resource-group location ids"),
    aliases={"y": "yes", "n": "name", "g": "resource-group", "o": "output", "l": "location"},
    booleans=_names("yes no-wait force debug verbose only-show-errors recursive purge"),
    values_by_default=True,
)
_DOCTL = Grammar(
    values=_names("context access-token output format api-url config"),
    aliases={"f": "force", "t": "access-token", "o": "output", "c": "config"},
    booleans=_names("force verbose trace dangerous"),
)
_EKSCTL = Grammar(
    values=_names("name region profile cluster config-file"),
    aliases={"n": "name", "r": "region", "p": "profile", "f": "config-file"},
    booleans=_names("wait force disable-nodegroup-eviction approve"),
)
_GH = Grammar(
    values=_names(
        "method field raw-field header input jq template repo hostname cache visibility description"
    ),
    aliases={
        "X": "method",
        "f": "raw-field",
        "F": "field",
        "H": "header",
        "q": "jq",
        "t": "template",
        "R": "repo",
        "y": "yes",
    },
    booleans=_names("yes paginate include silent confirm verbose cleanup-tag"),
)
_DOCKER = Grammar(
    values=_names(
        "context host log-level config file project-name profile env-file project-directory filter format"
    ),
    aliases={
        "H": "host",
        "c": "context",
        "l": "log-level",
        "f": "force",
        "a": "all",
        "v": "volumes",
        "p": "project-name",
        "q": "quiet",
    },
    booleans=_names("force all volumes quiet remove-orphans rmi debug tls"),
)
GRAMMARS: dict[str, Grammar] = {
    "kubectl": _KUBECTL,
    "oc": _KUBECTL,
    "kubecolor": _KUBECTL,
    "helm": _HELM,
    "terraform": _TERRAFORM,
    "tofu": _TERRAFORM,
    "terragrunt": _TERRAFORM,
    "pulumi": _PULUMI,
    "aws": _AWS,
    "gcloud": _GCLOUD,
    "gsutil": _GSUTIL,
    "az": _AZ,
    "doctl": _DOCTL,
    "eksctl": _EKSCTL,
    "gh": _GH,
    "docker": _DOCKER,
    "podman": _DOCKER,
    "nerdctl": _DOCKER,
    "docker-compose": _DOCKER,
    "podman-compose": _DOCKER,
}
CLI_PROGRAMS = frozenset(GRAMMARS)
"""Programs :func:`shell_cli` reads."""

# Docker's grammar differs by position: -f/-v/-a are booleans of `system prune`/`compose down`
# but `-f FILE` is compose's global file option.
_DOCKER_COMPOSE_FILE = frozenset({"compose", "docker-compose", "podman-compose"})


def parse_invocation(argv: list[str]) -> dict[str, Any] | None:
    """One argv read with its CLI's grammar, or ``None`` when ``argv[0]`` is not one we read."""
    grammar = GRAMMARS.get(argv[0]) if argv else None
    if grammar is None:
        return None
    words: list[str] = []
    flags: dict[str, str] = {}
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            words.extend(argv[i + 1 :])
            break
        if not arg.startswith("-") or arg == "-":
            words.append(arg)
            i += 1
            continue
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if arg.startswith("--") or grammar.single_dash_longs:
            name, eq, value = arg.lstrip("-").partition("=")
            name = grammar.aliases.get(name, name) if not arg.startswith("--") else name
            compose_file = name == "file" and argv[0] in ("docker", "podman") and "compose" in words
            takes = (
                name in grammar.values
                or compose_file
                or (grammar.values_by_default and name not in grammar.booleans and not name.startswith("no-"))
            )
            if eq:
                flags[name] = value
            elif takes and nxt is not None and (not nxt.startswith("-") or name in grammar.values):
                flags[name] = nxt
                i += 1
            else:
                flags[name] = ""
            i += 1
            continue
        letters = arg[1:]
        consumed = False
        for j, letter in enumerate(letters):
            name = grammar.aliases.get(letter, letter)
            compose_file = (
                letter == "f"
                and (argv[0] in _DOCKER_COMPOSE_FILE or words[:1] == ["compose"])
                and (not words or words == ["compose"])
            )
            if name in grammar.values or compose_file:
                rest = letters[j + 1 :].lstrip("=")
                if rest:
                    flags["file" if compose_file else name] = rest
                elif nxt is not None:
                    flags["file" if compose_file else name] = nxt
                    consumed = True
                break
            flags[name] = ""
        i += 2 if consumed else 1
    return {"program": argv[0], "words": words, "flags": flags}


@lru_cache(maxsize=256)
def _cached(line: str) -> tuple[dict[str, Any], ...]:
    found = []
    for argv in shell_commands(line):
        parsed = parse_invocation(argv)
        if parsed is not None:
            found.append(parsed)
    return tuple(found)


def shell_cli(line: str) -> list[dict[str, Any]]:
    """CEL ``shell.cli(line)``: every infrastructure-CLI invocation the line runs (see the module
    doc), as fresh maps. Same limits and errors as ``shell.commands``."""
    if not isinstance(line, str):
        raise TypeError(f"shell.cli expects a string, got {type(line).__name__}")
    return [
        {"program": p["program"], "words": list(p["words"]), "flags": dict(p["flags"])} for p in _cached(line)
    ]
