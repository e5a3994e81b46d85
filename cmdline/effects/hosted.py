"""What the developer platforms' and SaaS services' own CLIs do to the hosted accounts an agent holds
their tokens for (found by the blind probe tests/corpus/probe18, read as classes of the CLIs'
command grammar rather than one command at a time).

These CLIs share one grammar: ``PROGRAM [topic[:topic]...] [noun...] VERB [operands] [--options]``
(``heroku pg:backups:delete``, ``firebase functions:secrets:access``, ``twilio
api:core:keys:create``, ``doppler configs tokens create``, ``fly machine stop``, ``netlify api
deleteSite``). The *command path* is the positional words before the first option, with colon
topics split and an API operation's camelCase verb split off; everything after a runner word
(``run``, ``exec``, ``ssh``, ``console``, ``shell``) is another program's command line and not
this CLI's path. Each class below is a word class of that path, so a CLI that spells its verbs the
same way needs no line of its own:

- ``erase-contents``: a hosted resource deleted (``delete``, ``destroy``, ``rm``, ``remove``,
  ``purge``, ``uninstall``, ``drop``, ``wipe``, ``erase``; ``ips release``), restored over (a
  time-travel or backup restore); not when the CLI is told to act on its local emulator
  (``--local``) and not Stripe's test mode (a sandbox);
- ``rollback``: a deployed service rolled back to an earlier release (``heroku rollback``, ``helm
  rollback``, ``argocd app rollback``, ``wrangler rollback``, ``firebase remoteconfig:rollback``),
  with where it rolls back as the target, for the rule to judge against its production names;
- ``outage``: production taken down without deleting it - scaled to
  zero (``scale ... 0``, ``web=0``, a chart's ``replicaCount=0``), stopped, paused, suspended,
  sealed, disabled, muted, put in maintenance, its running secrets unset (``secrets unset``,
  ``config:unset``, ``env rm``), or its repository archived;
- ``cloud-identity``: who may act on the account - tokens, keys, service accounts and passwords
  minted (a credential noun with ``create``/``add``/``generate``), people invited or granted, apps
  transferred or moved to another owner, a password changed, an auth method given a user; and an
  account's whole secret environment listed or exported (``railway variables``, ``netlify
  env:list --plain``, ``infisical export``, ``doppler secrets``, ``glab variable export``);
- ``cloud-exposure``: something made reachable by everyone (a bucket's public URL enabled, an
  allow-list opened to ``0.0.0.0/0``, a password manager's API served beyond loopback, a file or
  item shared by link) or the account's events and logs sent to a URL (log drains, webhooks);
- ``secret-store``: a secret value or the CLI's own sign-in printed - ``auth token``, ``config get
  token``, ``login:ci``, ``unlock --raw``; a secret store's value read (``secrets get|access``, a
  named variable whose name says it is a secret: ``env:get STRIPE_SECRET_KEY``, ``config:get
  DATABASE_URL``); ``--show-secrets``; API keys, connection strings and credential URLs printed;
  a vault's whole snapshot saved; every user's password hash exported; and the environment printed
  by a command run under a secret injector (``doppler run -- printenv``, ``op run -- env``,
  ``fly ssh console -C printenv``), where the injected secrets are exactly what it prints;
- ``cloud-spend``: Stripe live mode changed (refunds, transfers, payouts, any ``post``).

Reads (``list``, ``ls``, ``status``, ``logs``, ``get`` of a name that is not a secret), local dev
servers, emulators and preview deploys are not effects here. The forge (``gh``, ``glab``) and the
package registries keep their own reader (:mod:`.forge`); the hosted databases' destroy table is
:mod:`.platforms`'.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.shell import shell_commands

__all__ = ["COMMAND_READERS", "HOSTED_CLIS", "api_call_acts", "hosted_acts", "hosted_line_acts"]

HOSTED_CLIS = frozenset(
    {
        "heroku", "netlify", "vercel", "fly", "flyctl", "railway", "render", "wrangler", "supabase",
        "firebase", "neonctl", "neon", "pscale", "turso", "doppler", "op", "infisical", "bw", "vault",
        "stripe", "twilio", "sentry-cli", "dog", "argocd", "flux", "hub-tool", "pulumi", "helm",
        "glab", "terraform", "tofu", "upstash", "doctl", "hcloud", "linode-cli", "vultr-cli", "koyeb",
        "northflank", "zeet",
    }
)  # fmt: skip
"""The CLIs whose sub-commands act on a hosted account (read here)."""

_RUNNER_WORDS = frozenset(
    {"run", "exec", "ssh", "console", "shell", "sftp", "proxy", "local", "dev", "serve"}
)
_DESTROY = frozenset(
    {"delete", "destroy", "rm", "remove", "purge", "uninstall", "drop", "wipe", "erase", "del"}
)
_UNSET = frozenset({"unset"})
_HALT = frozenset({"stop", "pause", "suspend", "seal", "disable", "mute", "mute_all", "down", "cancel"})
_DATA_NOUNS = frozenset({"branches", "branch", "database", "databases", "db"})
_LOCAL_TOP = {
    "supabase": frozenset({"stop", "start"}),
    "netlify": frozenset({"dev"}),
    "wrangler": frozenset({"dev"}),
}
_RESTORE_NOUNS = frozenset(
    {"time-travel", "backups", "backup", "pitr", "snapshot", "snapshots", "point-in-time"}
)
_CREDENTIAL_NOUNS = frozenset(
    {
        "token", "tokens", "key", "keys", "api-key", "api-keys", "apikey", "apikeys", "api_keys",
        "authorizations", "authorization", "service-account", "service-accounts", "service-token",
        "service-tokens", "password", "passwords", "deploy-key", "deploy-keys", "ssh-key", "ssh-keys",
        "credentials", "secret-id", "approle",
    }
)  # fmt: skip
_MINT = frozenset({"create", "add", "generate", "new", "issue", "mint", "rotate", "generate-token"})
_PEOPLE_NOUNS = frozenset(
    {
        "access",
        "member",
        "members",
        "user",
        "users",
        "team",
        "teams",
        "collaborator",
        "collaborators",
        "org",
        "orgs",
    }
)
_PEOPLE_VERBS = frozenset({"add", "set", "invite", "create", "grant", "provision"})
_SECRET_NOUNS = frozenset({"secrets", "secret"})
_VALUE_NOUNS = frozenset({"env", "config", "variables", "variable", "vars", "var", "environment-variables"})
_READ_VERBS = frozenset({"get", "access", "read", "reveal", "show", "print", "value"})
_SECRET_NAME = lazy_compile(
    r"(?i)secret|token|passw(?:or)?d|passwd|api_?key|private_?key|access_?key|credential|\bauth\b|_key$|key$"
    r"|(?:database|db|redis|mongo(?:db)?|postgres(?:ql)?|pg|mysql|amqp|rabbitmq|kafka|elasticsearch)_?ur[il]$"
    r"|_dsn$|^dsn$|connection_?string"
)
_LOCAL_FLAGS = frozenset({"--local"})
_DRY = lazy_compile(r"^--?(?:dry-run|dryrun)(?:=(?:client|server|true))?$")
_PRODUCTION_ROLLBACKS = frozenset({"vercel"})
_SECRET_VARIABLE = lazy_compile(
    r"\$\{?[A-Za-z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL)[A-Za-z0-9_]*\}?"
)
_CAMEL_VERB = lazy_compile(
    r"^(delete|destroy|remove|purge|create|update|cancel|restore|disable|transfer)[A-Z]"
)
_ZERO = lazy_compile(r"^(?:0|[\w.-]+=0)$")
_ZERO_SET = lazy_compile(
    r"(?i)(?:^|[.,])(?:replicas|replicaCount|replica_count|instances|minInstances|count)=0(?:,|$)"
)
_OPEN_CIDR = lazy_compile(r"(?:^|[=,\s])(?:0\.0\.0\.0/0|::/0)(?:$|[,\s])")
_LOOPBACK = lazy_compile(r"^(?:localhost|127\.[0-9.]+|::1|\[::1\])$")
_URL = lazy_compile(r"^https?://")
_ANY_URL = lazy_compile(r"(?:^|=)[a-z][a-z0-9+.-]*://")
_ENV_DUMPERS = frozenset({"printenv", "env", "set", "export", "declare"})
_ENVIRON = lazy_compile(r"/proc/+(?:self|\d+|\*|\$\w+)/+environ\b")
_INJECTORS = {
    # program -> the sub-command that runs another program with the account's secrets injected
    "doppler": "run",
    "op": "run",
    "infisical": "run",
    "railway": "run",
    "heroku": "run",
    "dotenvx": "run",
    "envkey-source": "",
    "teller": "run",
    "chamber": "exec",
    "aws-vault": "exec",
    "sops": "exec-env",
    "vault": "agent",
}
_REMOTE_SHELL_COMMAND = {"fly": ("-C", "--command"), "flyctl": ("-C", "--command"), "heroku": ()}


def _split(word: str) -> list[str]:
    """``pg:backups:delete`` -> three words; ``deleteSite`` (an API operation) -> ``delete``, ``Site``."""
    parts = [p for p in word.split(":") if p] if ":" in word and not _URL.match(word) else [word]
    out: list[str] = []
    for part in parts:
        camel = _CAMEL_VERB.match(part)
        out.extend([camel.group(1), part[len(camel.group(1)) :].lower()] if camel else [part.lower()])
    return out


def command_path(argv: list[str]) -> list[str]:
    """The CLI's command path: positional words before the first option (or, when an option comes
    first, the positional words up to four), colon topics split, cut at a runner word."""
    lead: list[str] = []
    for arg in argv[1:]:
        if arg.startswith("-"):
            break
        lead.append(arg)
    if not lead:
        lead = [a for a in argv[1:] if not a.startswith("-")][:4]
    path: list[str] = []
    for word in lead:
        for part in _split(word):
            path.append(part)
            if part in _RUNNER_WORDS and path[:1] != ["emulators"]:
                return path
    return path


def _flags(argv: list[str]) -> set[str]:
    return {a.split("=", 1)[0] for a in argv[1:] if a.startswith("-")}


def _destroys(tool: str, path: list[str], argv: list[str]) -> Iterator[Effect]:
    head = path[:4]
    verb = next((w for w in head if w in _DESTROY), None)
    if verb is not None:
        said = " ".join(path[: head.index(verb) + 1])
        yield _fx("erase-contents", f"{tool} {said} destroys a hosted resource", " ".join(path[:5]))
        return
    if "reset" in head and tool != "supabase" and any(w in _DATA_NOUNS for w in head):
        # supabase's db reset is its local stack's unless linked (read with the database rules)
        yield _fx(
            "erase-contents", f"{tool} resets a hosted database to an earlier state", " ".join(path[:4])
        )
        return
    if any(w == "release" for w in head) and any(
        w in ("ips", "ip", "addresses", "address", "numbers") for w in head
    ):
        yield _fx("erase-contents", f"{tool} releases a hosted address", " ".join(path[:4]))
    elif "restore" in head and any(w in _RESTORE_NOUNS for w in head):
        yield _fx(
            "erase-contents", f"{tool} restores a hosted database over its current data", " ".join(path[:4])
        )


def _halts(tool: str, path: list[str], argv: list[str]) -> Iterator[Effect]:
    head = path[:4]
    if "rollback" in head:
        # where it rolls back (the app, release, namespace, stack or project words and option
        # values) for the rule to judge against its production names; Vercel rolls back
        # production's deployment by definition
        where = [a.split("=", 1)[-1].lower() for a in argv[1:] if a.split("=", 1)[-1] and a != "--"]
        where += ["production"] if tool in _PRODUCTION_ROLLBACKS else []
        yield _fx("rollback", f"{tool} rolls a deployed service back to an earlier release", " ".join(where))
        return
    halting = [w for i, w in enumerate(head) if w in _HALT and not (i == 0 and w in _LOCAL_TOP.get(tool, ()))]
    if "maintenance" in head and any(w in ("on", "enable") for w in head):
        halting.append("maintenance")
    if halting:
        said = " ".join(head[: head.index(halting[0]) + 1])
        yield _fx("outage", f"{tool} {said} takes a hosted service down", " ".join(path[:4]))
        return
    if "scale" in head and any(_ZERO.match(w) for w in path[head.index("scale") + 1 :]):
        yield _fx("outage", f"{tool} scales a hosted service to zero", " ".join(path[:5]))
        return
    sets = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--set", "--set-string")]
    sets += [a.split("=", 1)[1] for a in argv if a.startswith(("--set=", "--set-string="))]
    if any(_ZERO_SET.search(s) for s in sets):
        yield _fx(
            "outage",
            f"{tool} sets a deployed service's replicas to zero",
            next(s for s in sets if _ZERO_SET.search(s)),
        )
        return
    if any(w in _UNSET for w in head) or (
        any(w in ("env", "secrets", "config") for w in head[:2]) and head[1:2] == ["rm"]
    ):
        yield _fx("outage", f"{tool} removes configuration a deployed service runs with", " ".join(path[:4]))


def _identity(tool: str, path: list[str], argv: list[str]) -> Iterator[Effect]:
    head = path[:4]
    if any(w in _CREDENTIAL_NOUNS for w in head) and any(w in _MINT for w in head):
        yield _fx(
            "cloud-identity",
            f"{tool} {' '.join(head[:3])} mints a credential for the account",
            " ".join(path[:5]),
        )
    elif "generate-token" in head or "update-password" in head:
        yield _fx(
            "cloud-identity", f"{tool} {' '.join(head[:3])} changes who can sign in", " ".join(path[:4])
        )
    elif any(w in ("invite", "grant") for w in head) or (
        any(w in _PEOPLE_NOUNS for w in head) and any(w in _PEOPLE_VERBS for w in head)
    ):
        yield _fx(
            "cloud-identity",
            f"{tool} {' '.join(head[:3])} gives someone access to the account",
            " ".join(path[:5]),
        )
    elif any(w in ("transfer", "move") for w in head) and any(
        w in ("apps", "app", "projects", "project", "sites", "site") for w in head
    ):
        yield _fx("cloud-identity", f"{tool} hands an application to another owner", " ".join(path[:4]))
    elif (
        tool == "vault"
        and head[:1] == ["write"]
        and re.match(r"^/*auth/+[^/]+/+(?:users?|roles?|groups?)/", " ".join(path[1:2]))
    ):
        yield _fx(
            "cloud-identity", "vault gives an auth method a user or role", path[1] if len(path) > 1 else ""
        )


def _exposure(tool: str, path: list[str], argv: list[str]) -> Iterator[Effect]:
    head = path[:4]
    if any(w in ("dev-url", "public-access", "public") for w in head) and any(
        w in ("enable", "on", "set") for w in head
    ):
        yield _fx("cloud-exposure", f"{tool} makes a hosted resource public", " ".join(path[:5]))
    elif any(_OPEN_CIDR.search(a) for a in argv[1:]):
        yield _fx(
            "cloud-exposure", f"{tool} opens a hosted resource to the whole internet", " ".join(path[:4])
        )
    elif head[:1] == ["serve"] and not _LOOPBACK.match(_value(argv, "--hostname", "--host") or "localhost"):
        yield _fx(
            "cloud-exposure",
            f"{tool} serves its vault beyond this machine",
            _value(argv, "--hostname", "--host") or "",
        )
    elif "share" in head or (tool == "bw" and head[:1] == ["send"]):
        yield _fx("cloud-exposure", f"{tool} shares a secret item by link", " ".join(path[:4]))
    elif (
        any(
            w in ("drains", "drain", "webhooks", "webhook", "webhook_endpoints", "webhook-endpoints")
            for w in head
        )
        and any(w in ("add", "create") for w in head)
        and any(_ANY_URL.search(a) for a in argv[1:])
    ):
        yield _fx(
            "cloud-exposure",
            f"{tool} sends the account's events or logs to a URL",
            next(a for a in argv[1:] if "://" in a),
        )


def _named(path: list[str], after: str) -> str:
    """The first operand after the word ``after`` in the path ("" when none)."""
    if after not in path:
        return ""
    rest = path[path.index(after) + 1 :]
    return rest[0] if rest else ""


def _secrets(tool: str, path: list[str], argv: list[str]) -> Iterator[Effect]:
    head, flags = path[:4], _flags(argv)
    # the CLI's own sign-in
    if (
        ("auth" in head and "token" in head)
        or ("login" in head and "ci" in head)
        or (any(w in ("config", "configure") for w in head[:1]) and "get" in head and "token" in head)
        or (tool == "bw" and head[:1] == ["unlock"] and "--raw" in flags)
    ):
        yield _fx("secret-store", f"{tool} prints its own sign-in token", " ".join(path[:4]))
        return
    if "--show-secrets" in flags:
        yield _fx("secret-store", f"{tool} prints secret values (--show-secrets)", " ".join(path[:4]))
        return
    verb = next((w for w in head if w in _READ_VERBS), None)
    noun = next((w for w in head if w in _SECRET_NOUNS | _VALUE_NOUNS), None)
    if verb is not None and noun is not None and head.index(noun) < head.index(verb):
        name = _named(path, verb)
        if noun in _SECRET_NOUNS or (name and _SECRET_NAME.search(name)):
            yield _fx("secret-store", f"{tool} {noun} {verb} prints a secret value", name)
            return
        if noun == "config" and not name and tool == "firebase":
            yield _fx("secret-store", "firebase prints the functions' whole runtime configuration", "")
            return
    if tool in ("terraform", "tofu") and head[:1] == ["output"]:
        name = next((w for w in argv[argv.index("output") + 1 :] if not w.startswith("-")), "")
        if name and _SECRET_NAME.search(name):
            yield _fx("secret-store", f"{tool} output prints a secret output value", name)
    elif (
        tool == "bw"
        and head[:1] == ["get"]
        and head[1:2]
        and head[1] in ("password", "totp", "notes", "item", "attachment", "exposed")
    ):
        yield _fx("secret-store", f"bw get {head[1]} prints a vault secret", _named(path, head[1]))
    elif tool == "bw" and head[:2] == ["list", "items"]:
        yield _fx("secret-store", "bw list items prints every matching login with its password", "")
    elif tool == "op" and (
        head[:2] == ["document", "get"] or (head[:2] == ["item", "get"] and "--otp" in flags)
    ):
        yield _fx("secret-store", f"op {' '.join(head[:2])} reads a vault secret", _named(path, "get"))
    elif any(
        w in ("api-keys", "apikeys", "connection-string", "connection_string", "initial-password")
        for w in head
    ) or ("credentials" in head and "url" in head):
        yield _fx(
            "secret-store",
            f"{tool} {' '.join(head[:3])} prints account keys or a password",
            " ".join(path[:4]),
        )
    elif tool == "vault" and head[:1] == ["operator"] and "snapshot" in head and "save" in head:
        yield _fx("secret-store", "vault saves a snapshot holding every secret", " ".join(path[3:4]))
    elif (tool == "firebase" and head[:2] == ["auth", "export"]) or (
        tool == "stripe" and head[:1] == ["config"] and "--list" in flags
    ):
        yield _fx("secret-store", f"{tool} {' '.join(head[:2])} exports account secrets", " ".join(path[:3]))
    elif (
        (tool == "railway" and head[:1] == ["variables"] and not ({"--set", "-s"} & flags))
        or (tool == "netlify" and head[:2] == ["env", "list"] and {"--plain", "--json"} & flags)
        or (tool == "infisical" and (head[:1] == ["export"] or (head == ["secrets"])))
        or (tool == "doppler" and head == ["secrets"] and "--only-names" not in flags)
        or (tool == "glab" and head[:2] == ["variable", "export"])
    ):
        yield _fx(
            "cloud-identity",
            f"{tool} {' '.join(head[:2])} prints an account's whole secret environment",
            " ".join(path[:3]),
        )


def _stripe(path: list[str], argv: list[str]) -> Iterator[Effect]:
    """Stripe's test mode is a sandbox; live mode (``--live`` or a live key) moves real money."""
    live = "--live" in argv or any(re.match(r"^(?:--api-key=)?[rs]k_live_", a) for a in argv[1:])
    head = path[:4]
    if (
        not live
        or not head
        or head[0] in ("logs", "listen", "status", "version", "help", "config", "login", "get")
    ):
        return
    if any(w in _DESTROY for w in head) or "cancel" in head:
        yield _fx(
            "erase-contents", f"stripe {' '.join(head[:2])} removes live payments data", " ".join(path[:3])
        )
    elif not any(w in ("list", "retrieve", "search") for w in head):
        yield _fx(
            "cloud-spend",
            f"stripe {' '.join(head[:2])} changes live payments (real money)",
            " ".join(path[:3]),
        )


def _messages(tool: str, path: list[str], argv: list[str]) -> Iterator[Effect]:
    """A message, call or e-mail sent through the account carrying a secret variable's value
    (``twilio api:core:messages:create --body "$STRIPE_SECRET_KEY"``): the secret leaves."""
    head = path[:5]
    if any(w in ("messages", "message", "sms", "calls", "email", "emails") for w in head) and any(
        w in ("create", "send", "post") for w in head
    ):
        leaked = next((a for a in argv[1:] if _SECRET_VARIABLE.search(a)), None)
        if leaked is not None:
            yield _fx("cloud-exposure", f"{tool} sends a secret variable's value in a message", leaked[:60])


def hosted_acts(argv: list[str]) -> list[Effect]:
    """The effects above of one unwrapped command (argv[0] a basename)."""
    tool = argv[0] if argv else ""
    if tool not in HOSTED_CLIS or any(a in ("-h", "--help", "-help") or _DRY.match(a) for a in argv[1:]):
        return []
    path = command_path(argv)
    if not path:
        return []
    if tool == "stripe":
        return list(_stripe(path, argv)) + list(_secrets(tool, path, argv))
    local = bool(_LOCAL_FLAGS & _flags(argv))
    found: list[Effect] = []
    if tool != "glab":  # the forge's verbs are :mod:`.forge`'s
        if not local:
            found.extend(_destroys(tool, path, argv))
            found.extend(_halts(tool, path, argv))
        found.extend(_identity(tool, path, argv))
        found.extend(_exposure(tool, path, argv))
        found.extend(_messages(tool, path, argv))
    found.extend(_secrets(tool, path, argv))
    return found


def _dumps_environment(argv: list[str]) -> bool:
    if not argv:
        return False
    if argv[0] in _ENV_DUMPERS and (len(argv) == 1 or argv[1:] in (["-p"], ["-0"], ["--null"])):
        return True
    return any(_ENVIRON.search(a) for a in argv[1:])


def hosted_line_acts(commands: list[list[str]]) -> list[Effect]:
    """The environment printed by a command run under a secret injector or a platform's remote
    shell: ``doppler run -c prd -- printenv``, ``op run --env-file app.env -- env``, ``railway run
    printenv``, ``fly ssh console -C "cat /proc/1/environ"``. The injected secrets are what it
    prints. (``kubectl exec POD -- env`` is not: Kubernetes' own tutorials print a pod's
    environment that way, and two corpora written apart list it as everyday.)"""
    found: list[Effect] = []
    for i, argv in enumerate(commands):
        tool = argv[0] if argv else ""
        sub = _INJECTORS.get(tool)
        path = command_path(argv) if argv else []
        if (
            sub is not None
            and (sub == "" or sub in path[:2])
            and i + 1 < len(commands)
            and _dumps_environment(commands[i + 1])
        ):
            found.append(
                _fx(
                    "secret-store",
                    f"{tool} {sub} injects secrets into a command that prints them",
                    " ".join(commands[i + 1][:3]),
                )
            )
        if tool in _REMOTE_SHELL_COMMAND and path[:1] in (["ssh"], ["run"]):
            remote = _value(argv, *_REMOTE_SHELL_COMMAND[tool]) if _REMOTE_SHELL_COMMAND[tool] else None
            inner = shell_commands(remote) if remote else []
            if any(_dumps_environment(c) for c in inner):
                found.append(
                    _fx("secret-store", f"{tool} prints a deployed service's environment", remote or "")
                )
    return found


# ----------------------------------------------------------------- the same APIs through curl
_WEB_CLIENTS = frozenset({"curl", "http", "https", "xh", "xhs", "wget"})
_METHOD_OPTIONS = ("-X", "--request", "--method")
_BODY_OPTIONS = frozenset(
    {
        "-d",
        "--data",
        "--data-raw",
        "--data-binary",
        "--data-ascii",
        "--data-urlencode",
        "--json",
        "--post-data",
    }
)
_HTTP_URL = lazy_compile(
    r"^(?:https?://)?(?:[\w.-]+@)?([\w.-]+\.[a-z]{2,}|localhost|\[[0-9a-f:]+\]|[0-9.]+)(?::\d+)?(/[^\s?#]*)?",
    re.I,
)
# A search or document store's REST path that names every index or a wildcard of them
# (Elasticsearch/OpenSearch `DELETE /_all`, `DELETE /logs-*`), and bodies that match every document
_EVERY_INDEX = lazy_compile(r"^/(?:_all|[^/]*\*[^/]*)/?$")
_MATCH_EVERYTHING = lazy_compile(r'(?s)"match_all"|<query>\s*\*:\*\s*</query>|"query"\s*:\s*"\*:\*"')
_BY_QUERY_DELETE = lazy_compile(r"(?:^|/)_delete_by_query$|(?:^|/)update(?:/json)?$")
_LOCAL_HOST = lazy_compile(
    r"^(?:localhost|127\.[0-9.]+|\[::1\]|[\w.-]+\.(?:localhost|local|test|internal))$", re.I
)
_API_PATH = lazy_compile(r"(?i)(?:^|/)(?:api|graphql|v[0-9]+(?:\.[0-9]+)?|client/+v4|rest)(?:/|$)")
_GRAPHQL_DELETE = lazy_compile(
    r"(?is)\bmutation\b.{0,400}?[{\s,]\s*\w*(?:delete|destroy|remove|purge|drop|wipe)\w*\s*[({]"
)
_SHORT_CLUSTER = lazy_compile(r"^-[sSkLfvi]*([Xd])(.*)$")
_HALT_SEGMENT = lazy_compile(r"(?i)^(?:suspend|pause|stop|disable|maintenance_windows|downtime|mute)$")
_ACCESS_SEGMENT = lazy_compile(
    r"(?i)^(?:tokens|api_keys|api-keys|apikeys|keys|members|memberships|invitations|invites"
    r"|collaborators|users|service_accounts|service-accounts|deploy_keys|deploy-keys|authorizations)$"
)


def _request_parts(argv: list[str]) -> tuple[str, list[str], list[str]]:
    """(method, URLs, bodies) of a curl/wget/HTTPie/xh command, read loosely: enough to see what an
    API call does, not how the egress rules judge it (that is :mod:`dsh_policy.cmdline.web_requests`)."""
    method, urls, bodies = "", [], []
    httpie = argv[0] in ("http", "https", "xh", "xhs")
    args = argv[1:]
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, attached = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        cluster = _SHORT_CLUSTER.match(arg) if not arg.startswith("--") else None
        if name in _METHOD_OPTIONS or (cluster is not None and cluster.group(1) == "X"):
            value = (
                attached if eq else (cluster.group(2) if cluster is not None and cluster.group(2) else None)
            )
            if value is None and i + 1 < len(args):
                value, i = args[i + 1], i + 1
            method = (value or "").upper()
        elif cluster is not None and cluster.group(1) == "d" and not cluster.group(2) and i + 1 < len(args):
            bodies.append(args[i + 1])
            i += 1
        elif name in _BODY_OPTIONS:
            value = attached if eq else (args[i + 1] if i + 1 < len(args) else "")
            i += 0 if eq else 1
            bodies.append(value)
        elif arg.startswith("-d") and len(arg) > 2:
            bodies.append(arg[2:])
        elif not arg.startswith("-"):
            if httpie and not method and arg.isupper() and arg.isalpha():
                method = arg
            elif _HTTP_URL.match(arg) and ("://" in arg or "/" in arg):
                urls.append(arg)
            elif httpie and ("=" in arg or ":=" in arg):
                bodies.append(arg)
        i += 1
    if not method:
        method = "POST" if bodies else "GET"
    return method, urls, bodies


def _store_wide_delete(method: str, path: str, bodies: list[str]) -> str:
    """What a call to a search or document store's REST API erases wholesale, on any host (a local
    store's data is the developer's too): every index or a wildcard of them deleted, or a
    delete-by-query matching every document. One named index deleted is not this."""
    if method == "DELETE" and _EVERY_INDEX.match(path):
        return f"an HTTP DELETE of {path} removes every index it matches"
    if (
        method in ("POST", "PUT")
        and _BY_QUERY_DELETE.search(path.rstrip("/"))
        and any(
            _MATCH_EVERYTHING.search(b)
            and ("delete" in b.lower() or path.rstrip("/").endswith("_delete_by_query"))
            for b in bodies
        )
    ):
        return "a delete-by-query matching every document"
    return ""


def api_call_acts(argv: list[str]) -> list[Effect]:
    """What a web client's call to a hosted service's API does, read like the service's CLI:
    ``DELETE`` of an API resource (the Railway, Render, Vercel, Cloudflare, Heroku, Sentry REST
    deletes), a GraphQL mutation whose field deletes (Railway's ``volumeDelete`` that wiped
    PocketOS's production volume), a POST to a resource's ``suspend``/``pause``/``stop`` or a
    maintenance window or downtime, and a POST creating tokens, keys, members, invitations or
    users. Calls to this machine's dev servers (localhost, ``*.test``, ``*.local``) are not
    effects; which hosts may be reached at all is the egress rules'."""
    if not argv or argv[0] not in _WEB_CLIENTS:
        return []
    method, urls, bodies = _request_parts(argv)
    found: list[Effect] = []
    for url in urls:
        match = _HTTP_URL.match(url)
        if match is None:
            continue
        wide = _store_wide_delete(method, match.group(2) or "/", bodies)
        if wide:
            found.append(_fx("erase-contents", wide + f" on {match.group(1).lower()}", url))
            continue
        if _LOCAL_HOST.match(match.group(1)):
            continue
        host, path = match.group(1).lower(), (match.group(2) or "/")
        api = bool(_API_PATH.search(path)) or host.startswith(("api.", "backboard.")) or ".api." in host
        segments = [s for s in path.split("/") if s]
        last = segments[-1] if segments else ""
        if any(_GRAPHQL_DELETE.search(b) for b in bodies):
            found.append(
                _fx("erase-contents", f"a GraphQL mutation to {host} deletes a hosted resource", url)
            )
        elif method == "DELETE" and api:
            found.append(_fx("erase-contents", f"an API call deletes a resource on {host}", url))
        elif method in ("POST", "PUT", "PATCH") and api and _HALT_SEGMENT.match(last):
            found.append(_fx("outage", f"an API call on {host} takes a service down ({last})", url))
        elif method in ("POST", "PUT") and api and _ACCESS_SEGMENT.match(last):
            found.append(_fx("cloud-identity", f"an API call on {host} creates {last}", url))
    return found


COMMAND_READERS: tuple[CommandReader, ...] = (
    (HOSTED_CLIS, hosted_acts),
    (frozenset(_WEB_CLIENTS), api_call_acts),
)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
