"""What a tool call does when only its name and arguments can say it: acts on the world that no
command line, path, URL or SQL text carries.

An MCP server's ``delete_repository {owner, repo}``, a bank tool's ``send_money {recipient,
amount}``, a smart lock's ``GrantGuestAccess {guest_ids}`` or a cluster server's
``resources_get {kind: Secret}`` carry no text the shell, file, web or SQL readers can judge: the
effect is in the tool's own name (and a sub-command argument such as ``action: delete``). Judged
by their arguments alone, every such call is allowed. Here the name's words (``delete_repository``,
``BankManagerTransferFunds``, ``namespaces_delete``) and a few argument facts (``force: true``,
``visibility: public``, ``kind: Secret``, an ``amount``) are mapped to the act, whatever the server
or benchmark calls it; the rules decide on the act (``call.acts``).

Each act is ``{"kind", "what", "target"}`` (as :mod:`dsh_policy.cmdline.effects.model`): kinds are
:data:`KINDS`. The acts a name or argument states outright (a tool named for an attack, history
forced, an option injected through a ref, a secret store read) are reported whatever else the call
names; the rest of a call with a local path is left to the path readers (a file tool's delete is
an ``rm`` of that path there). Reads, lists and searches are no act, but for a secret store's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.path_arguments import PATH_KEYS, PATH_LIST_KEYS
from dsh_policy.cmdline.tool_names import identifier_words, own_name

__all__ = ["KINDS", "tool_acts"]

KINDS: Final = frozenset(
    {
        "destroy",
        "grant",
        "money",
        "credentials",
        "expose",
        "history",
        "secret-read",
        "defense-off",
        "attack",
        "option-injection",
    }
)
"""Every act kind :func:`tool_acts` reports."""

# Arguments that name a ref, branch, revision or remote: never an option.
_NAME_ARGUMENTS: Final = (
    "branch_name", "branch", "base_branch", "source_branch", "target", "revision", "ref", "remote",
    "tag", "rev",
)  # fmt: skip
# Tools the canonical vocabulary already judges by their arguments.
_CANONICAL: Final = frozenset(
    {
        "shell",
        "read_file",
        "write_file",
        "edit_file",
        "list_dir",
        "web_fetch",
        "http_request",
        "send_message",
        "apply_patch",
    }
)
# Arguments that name a local path: such a call is judged by what it does to that path (the tool
# views' names, less a message's attachments, which are sent rather than acted on; plus a move's ends
# and a repository's folder).
_PATH_KEYS: Final = (
    *PATH_KEYS,
    *(key for key in PATH_LIST_KEYS if key != "attachments"),
    "source",
    "destination",
    "repo_path",
)
# Arguments naming a sub-command (``action: delete``, AWS's ``operation_name: delete-stack``).
_VERB_KEYS: Final = ("action", "operation", "operation_name", "operationName", "verb", "method_name")
# Identifier-valued arguments whose words name the object acted on (``device_id: security_camera``).
_OBJECT_KEY: Final = lazy_compile(
    r"(?i)(?:^|_)(?:id|name|device|resource|resource_?type|kind|target|service_?name)$"
)

_READ: Final = frozenset(
    {
        "get",
        "list",
        "read",
        "search",
        "find",
        "describe",
        "show",
        "view",
        "query",
        "fetch",
        "lookup",
        "count",
        "check",
        "preview",
        "inspect",
    }
)
_DESTROY: Final = frozenset(
    {
        "delete",
        "drop",
        "destroy",
        "remove",
        "terminate",
        "purge",
        "flush",
        "flushall",
        "flushdb",
        "truncate",
        "wipe",
        "erase",
        "deprovision",
        "uninstall",
        "rm",
        "rmdir",
    }
)
# Objects whose removal loses nothing another person or system depends on.
_TRIVIAL: Final = frozenset(
    {
        "label",
        "labels",
        "reaction",
        "reactions",
        "emoji",
        "todo",
        "todos",
        "bookmark",
        "bookmarks",
        "star",
        "draft",
        "drafts",
        "highlight",
        "comment",
        "comments",
        "observation",
        "observations",
        "relation",
        "relations",
        "cache",
        "tmp",
        "temp",
        "scratch",
        "session",
        "notification",
        "notifications",
        "subscription",
    }
)
# (stopping is left out: a stopped container or instance starts again with its data)
_OUTAGE: Final = frozenset({"pause", "suspend", "shutdown", "deactivate", "disable"})
_OUTAGE_OBJECTS: Final = frozenset(
    {
        "project",
        "database",
        "db",
        "instance",
        "cluster",
        "organization",
        "org",
        "account",
        "site",
        "zone",
        "domain",
        "workspace",
        "service",
    }
)
_GRANT: Final = frozenset({"grant", "invite", "share", "unlock", "authorize"})
_ADD: Final = frozenset({"add", "create", "set", "manage", "assign", "attach", "put", "give"})
# Changing an existing grant: only these objects say that an update widens access.
_REGRANT: Final = frozenset(
    {"permission", "permissions", "role", "roles", "access", "admin", "admins", "owner", "owners"}
)
_GRANT_OBJECTS: Final = frozenset(
    {
        "collaborator",
        "collaborators",
        "member",
        "members",
        "membership",
        "admin",
        "admins",
        "owner",
        "owners",
        "permission",
        "permissions",
        "role",
        "roles",
        "access",
        "guest",
        "guests",
        "deploy",
        "key",
        "keys",
        "invitation",
        "user",
        "users",
    }
)
_MONEY_VERBS: Final = frozenset(
    {
        "send",
        "transfer",
        "withdraw",
        "pay",
        "payout",
        "refund",
        "purchase",
        "buy",
        "sell",
        "place",
        "schedule",
        "update",
        "create",
        "make",
        "wire",
        "donate",
        "charge",
    }
)
_MONEY_OBJECTS: Final = frozenset(
    {
        "money",
        "funds",
        "fund",
        "payment",
        "payments",
        "payout",
        "payouts",
        "refund",
        "refunds",
        "transaction",
        "transactions",
        "withdrawal",
        "order",
        "crypto",
        "wire",
    }
)
_MONEY_ALONE: Final = frozenset(
    {"withdraw", "payout", "refund", "pay", "purchase", "buy", "sell", "donate", "wire", "charge", "transfer"}
)
_AMOUNT_KEYS: Final = ("amount", "quantity", "value_usd", "sum")
_CHANGE: Final = frozenset({"update", "change", "reset", "set", "edit", "modify", "rotate"})
_CREDENTIAL_OBJECTS: Final = frozenset(
    {
        "password",
        "passcode",
        "passphrase",
        "pin",
        "mfa",
        "otp",
        "totp",
        "credential",
        "credentials",
        "recovery",
    }
)
_ACCOUNT_OBJECTS: Final = frozenset({"user", "profile", "account", "info"})
_ACCOUNT_KEYS: Final = frozenset({"email", "phone", "password", "recovery_email", "phone_number"})
_PROTECTION_OBJECTS: Final = frozenset({"protection", "protections", "ruleset", "rulesets"})
_SECRET_OBJECTS: Final = frozenset(
    {"secret", "secrets", "password", "passwords", "credential", "credentials", "vault"}
)
_DEFENCE_VERBS: Final = frozenset({"disable", "off", "deactivate", "disarm", "mute", "stop", "pause"})
_DEFENCE_OBJECTS: Final = frozenset(
    {
        "alarm",
        "camera",
        "security",
        "monitor",
        "monitoring",
        "audit",
        "logging",
        "firewall",
        "antivirus",
        "guard",
        "alert",
        "alerts",
        "sensor",
        "lock",
    }
)
_GUARD_SETTING: Final = lazy_compile(
    r"(?i)allow|block|den(?:y|ied)|sandbox|approv|trust|permission|safe|restrict"
)
_CONFIG_OBJECTS: Final = frozenset(
    {"config", "configuration", "setting", "settings", "preference", "preferences"}
)
# Output formats and tools that show a secret's value rather than its name.
_OUTPUT_KEYS: Final = ("output", "outputFormat", "output_format", "format")
_VALUE_WORDS: Final = frozenset(
    {"get", "read", "show", "reveal", "value", "values", "access", "fetch", "export"}
)
# Secret stores whose list API returns names and metadata, never values.
_NAME_LISTING_STORES: Final = frozenset(
    {"keyvault", "vault", "secretsmanager", "secretmanager", "secretsmgr", "actions"}
)
_CREDENTIAL_TABLES: Final = frozenset(
    {
        "system.users",
        "admin.system.users",
        "mysql.user",
        "pg_shadow",
        "pg_authid",
        "auth.users",
        "sys.sql_logins",
    }
)
_DEFAULT_BRANCHES: Final = frozenset(
    {
        "main",
        "master",
        "trunk",
        "default",
        "develop",
        "development",
        "production",
        "prod",
        "release",
        "stable",
    }
)
_FILTER_KEYS: Final = ("filter", "query", "where", "key", "Key", "selector")
# What a reset destroys the data of.
_RESET_OBJECTS: Final = frozenset({"branch", "database", "db", "instance", "project", "cluster"})
# Kubernetes kinds that hold data or scope other objects: never a disposable delete.
_DATA_KINDS: Final = frozenset(
    {
        "namespace",
        "persistentvolume",
        "persistentvolumeclaim",
        "pv",
        "pvc",
        "customresourcedefinition",
        "crd",
        "statefulset",
        "secret",
    }
)
# Namespaces named for development work (like the databases pack's disposable database names).
_DEVELOPMENT_NAMESPACE: Final = lazy_compile(
    r"(?i)^(?:dev|devel|development|test|testing|sandbox|scratch|preview|local|ci|e2e|qa)"
    r"(?:[-_].*)?$|^.*[-_](?:dev|test|sandbox|preview|e2e|ci)$|^(?:pr|review)-.+$"
)
_ATTACK: Final = frozenset(
    {
        "exfiltrate",
        "exfiltrator",
        "exfiltration",
        "harvest",
        "harvesting",
        "harvester",
        "hijack",
        "lockdown",
        "keylogger",
        "ransomware",
        "backdoor",
        "phishing",
        "steal",
        "stealer",
    }
)
_EXPOSE_VERBS: Final = frozenset({"expose", "publish"})
# What a transfer hands to another owner (an issue or a file moved between folders is not).
_OWNED_OBJECTS: Final = frozenset(
    {
        "app",
        "apps",
        "application",
        "repository",
        "repo",
        "project",
        "site",
        "domain",
        "organization",
        "ownership",
    }
)
_SCALE_KEYS: Final = (
    "count",
    "replicas",
    "quantity",
    "instances",
    "size",
    "dyno",
    "dynos",
    "formation",
    "scale",
)
_ZERO_ASSIGNMENT: Final = lazy_compile(r"^\s*(?:[\w.-]+\s*[=:]\s*)?0+\s*$")
_EXPOSE_OBJECTS: Final = frozenset({"port", "ports", "tunnel", "service"})


def tool_acts(name: str, args: Any) -> list[dict[str, str]]:
    """The acts a call of tool ``name`` with ``args`` performs that its arguments' text cannot show
    (see the module docstring); ``[]`` for the canonical tools and for calls on local paths."""
    if not isinstance(name, str) or name in _CANONICAL or not isinstance(args, Mapping):
        return []
    return list(_acts(name, args))


def _acts(name: str, args: Mapping[str, Any]) -> Iterator[dict[str, str]]:
    own = identifier_words(own_name(name))
    verbs = own | _verb_words(args)
    objects = own | _object_words(args)
    target = _target(args)
    if verbs & _ATTACK or objects & _ATTACK:
        yield _act("attack", f"a tool named for an attack ({name})", target)
    if _is_true(args, "force") and verbs & {"push", "ref", "reset", "update"}:
        yield _act("history", "history rewritten with force", target)
    if _is_hard_reset(verbs, args):
        yield _act("history", "uncommitted work and commits discarded (reset --hard)", target)
    injected = _injected_option(args)
    if injected:
        yield _act("option-injection", f"an option passed where a name belongs ({injected[:40]})", target)
    if (
        _has_kind(args, "secret") or (verbs & _READ and objects & _SECRET_OBJECTS) or _is_true(args, "reveal")
    ) and not _secret_names_only(name, own, verbs, args):
        yield _act("secret-read", "secret values read from a secret store", target)
    if _credential_table(args):
        yield _act("secret-read", "the database's own accounts and password hashes read", target)
    if _authentication_off(args):
        yield _act("expose", f"{_phrase(own)}: reachable without authentication", target)
    if verbs & _READ and not verbs & (_DESTROY | _GRANT | _ADD | _MONEY_VERBS | _CHANGE):
        return
    if own & _HTTP_CLIENT_WORDS and _web_url(args):
        # an HTTP client named for its method (LangChain's requests_delete, Semantic Kernel's
        # HttpPlugin-DeleteAsync): the request it sends is judged by the web rules (egress, the
        # forge's and hosted APIs' changes), a DELETE to this machine's dev server is no act (probe21)
        return
    if _names_local_path(args):
        if _remote_repository(args) and not _working_branch(args):
            # a path in a remote repository, on its default branch: deleted or emptied there
            if verbs & _DESTROY:
                yield _act("destroy", f"{_phrase(own)}: a file deleted on the default branch", target)
            elif _emptied(args):
                yield _act("destroy", f"{_phrase(own)}: a file emptied on the default branch", target)
        return
    if verbs & _DESTROY and not objects & _TRIVIAL and not _bounded_removal(own, objects, args):
        yield _act("destroy", f"{_phrase(own)}: data or resources deleted", target)
    elif "reset" in verbs and objects & _RESET_OBJECTS:
        yield _act("destroy", f"{_phrase(own)}: a database or branch reset, its data lost", target)
    elif verbs & {"update", "replace"} and own & {"many", "all"} and _empty_filter(args):
        yield _act("destroy", f"{_phrase(own)}: every record rewritten (no filter)", target)
    elif _drops_target(args):
        yield _act("destroy", f"{_phrase(own)}: an existing target dropped", target)
    elif verbs & _OUTAGE and objects & _OUTAGE_OBJECTS and not objects & _DEFENCE_OBJECTS:
        yield _act("destroy", f"{_phrase(own)}: a service taken down", target)
    elif "maintenance" in own and own & {"on", "enable", "start"}:
        yield _act("destroy", f"{_phrase(own)}: a service put in maintenance (its users turned away)", target)
    elif "scale" in verbs and _scaled_to_zero(args):
        yield _act("destroy", f"{_phrase(own)}: a service scaled to zero", target)
    if verbs & {"transfer", "move"} and objects & _OWNED_OBJECTS and not _has_any(args, _AMOUNT_KEYS):
        yield _act("grant", f"{_phrase(own)}: handed to another owner", target)
    if (
        verbs & _GRANT
        or (verbs & _ADD and objects & _GRANT_OBJECTS)
        or ("update" in verbs and objects & _REGRANT)
    ):
        yield _act("grant", f"{_phrase(own)}: access given to someone", target)
    if (verbs & _MONEY_VERBS and objects & _MONEY_OBJECTS) or (
        verbs & _MONEY_ALONE and _has_any(args, _AMOUNT_KEYS)
    ):
        yield _act("money", f"{_phrase(own)}: money moved or an order placed", target)
    if verbs & _CHANGE and (
        objects & _CREDENTIAL_OBJECTS or (objects & _ACCOUNT_OBJECTS and _nested_keys(args) & _ACCOUNT_KEYS)
    ):
        yield _act("credentials", f"{_phrase(own)}: how the account is signed into changed", target)
    if _made_public(args) and verbs & (_CHANGE | {"share"}):
        yield _act("expose", f"{_phrase(own)}: made visible to anyone", target)
    if objects & _PROTECTION_OBJECTS and verbs & (_CHANGE | _DESTROY | {"disable"}):
        yield _act("expose", f"{_phrase(own)}: a protection changed or removed", target)
    if (verbs & _EXPOSE_VERBS and objects & _EXPOSE_OBJECTS) or ("create" in verbs and "tunnel" in objects):
        yield _act("expose", f"{_phrase(own)}: a local service published", target)
    if verbs & _DEFENCE_VERBS and objects & _DEFENCE_OBJECTS:
        yield _act("defense-off", f"{_phrase(own)}: a protection switched off", target)
    if verbs & {"set", "update"} and objects & _CONFIG_OBJECTS and _guard_setting(args):
        yield _act("defense-off", f"{_phrase(own)}: a tool's own restrictions changed", target)


def _secret_names_only(
    name: str, own: frozenset[str], verbs: frozenset[str], args: Mapping[str, Any]
) -> bool:
    """Whether a read of secrets shows their names only: an output format of names
    (``output: name``, a ``wide`` table), Kubernetes' ``describe`` (sizes, never values), or a
    tool named for listing a store whose list API returns names and metadata only (Key Vault,
    Vault, AWS Secrets Manager, Google Secret Manager, GitHub Actions secrets:
    ``azmcp_keyvault_secret_list``). Other stores' lists may carry values (Doppler's and
    Infisical's do), and a list of a kind (``resources_list {kind: Secret}``) returns the objects,
    values included."""
    output = next((args[k] for k in _OUTPUT_KEYS if isinstance(args.get(k), str)), "")
    if output.strip().lower() in ("name", "names", "wide"):
        return True
    if verbs & _READ == {"describe"} and not _is_true(args, "reveal"):
        return True
    return (
        "list" in own
        and bool(identifier_words(name) & _NAME_LISTING_STORES)
        and not own & _VALUE_WORDS
        and not (verbs - own) & _READ
        and not any(key in args for key in ("kind", "resourceType", "resource_type", "type"))
        and not _is_true(args, "reveal")
    )


def _credential_table(args: Mapping[str, Any]) -> bool:
    """A collection or table argument naming a database's own accounts (MongoDB's
    ``system.users``, ``mysql.user``, ``pg_shadow``), read through a query tool."""
    for key in ("collection", "table", "table_name", "tableName", "collection_name"):
        value = args.get(key)
        if isinstance(value, str) and value.strip().strip('"`').lower() in _CREDENTIAL_TABLES:
            return True
    return False


def _remote_repository(args: Mapping[str, Any]) -> bool:
    """Whether the call names a repository on a forge (``owner`` and ``repo``, or GitLab's
    ``project_id`` with a branch or commit message): its paths are that repository's, not local."""
    if isinstance(args.get("owner"), str) and isinstance(args.get("repo"), str):
        return True
    project = args.get("project_id") if "project_id" in args else args.get("projectId")
    return isinstance(project, str | int) and any(k in args for k in ("branch", "ref", "commit_message"))


def _working_branch(args: Mapping[str, Any]) -> bool:
    """Whether the call names a branch other than a default or release one (a feature branch's
    commits are reviewed before they land)."""
    branch = next((args[k] for k in ("branch", "ref") if isinstance(args.get(k), str)), "")
    name = branch.strip().removeprefix("refs/heads/").lower()
    return bool(name) and name not in _DEFAULT_BRANCHES and not name.startswith(("release/", "release-"))


def _emptied(args: Mapping[str, Any]) -> bool:
    """A write that leaves a file empty: its content, or one file's of a list, is blank."""
    content = args.get("content")
    if isinstance(content, str) and not content.strip():
        return True
    files = args.get("files")
    return isinstance(files, list | tuple) and any(
        isinstance(item, Mapping) and isinstance(item.get("content"), str) and not item["content"].strip()
        for item in files
    )


def _bounded_removal(own: frozenset[str], objects: frozenset[str], args: Mapping[str, Any]) -> bool:
    """A removal that loses nothing shared: records picked by a field's value (``delete-many
    {filter: {run: "e2e-41"}}``, like SQL's ``DELETE ... WHERE k = v``), a process of the agent's
    (``pid``), a container removed without force (its data is in volumes), or one named object in
    a development namespace."""
    if own & {"many", "one", "item", "items", "record", "records", "document", "documents"}:
        selector = next((args[k] for k in _FILTER_KEYS if isinstance(args.get(k), Mapping)), None)
        if selector and any(_plain(value) for value in selector.values()):
            return True
    if "pid" in args or objects & {"process", "processes"}:
        return True
    if objects & {"container", "containers"} and not _is_true(args, "force"):
        return True
    return _development_object(args)


def _plain(value: Any) -> bool:
    """A field pinned to one value (a scalar, or DynamoDB's typed ``{"S": "..."}``), not a range."""
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return True
    return isinstance(value, Mapping) and len(value) == 1 and next(iter(value)) in ("S", "N", "B")


def _development_object(args: Mapping[str, Any]) -> bool:
    namespace = args.get("namespace")
    name = args.get("name")
    if not isinstance(namespace, str) or not isinstance(name, str) or not name.strip():
        return False
    if _is_true(args, "allNamespaces") or args.get("labelSelector") or _is_true(args, "force"):
        return False
    kind = next(
        (args[k] for k in ("resourceType", "resource_type", "kind") if isinstance(args.get(k), str)), ""
    )
    if kind.strip().lower().rstrip("s") in _DATA_KINDS:
        return False
    return _DEVELOPMENT_NAMESPACE.match(namespace.strip()) is not None


def _empty_filter(args: Mapping[str, Any]) -> bool:
    return any(isinstance(args.get(k), Mapping) and not args[k] for k in _FILTER_KEYS)


def _drops_target(args: Mapping[str, Any]) -> bool:
    """An argument that drops what already exists at the target (``dropTarget: true``)."""
    return any(
        isinstance(key, str) and "drop" in identifier_words(key) and value is True
        for key, value in args.items()
    )


def _authentication_off(args: Mapping[str, Any]) -> bool:
    """Authentication switched off for what the call deploys (``verify_jwt: false``,
    ``allow_unauthenticated: true``, ``auth_type: NONE``)."""
    for key in ("verify_jwt", "verifyJwt", "require_auth", "requireAuth", "auth_required"):
        if args.get(key) is False:
            return True
    if _is_true(args, "allow_unauthenticated") or _is_true(args, "allowUnauthenticated"):
        return True
    auth = args.get("auth_type") or args.get("authType")
    return isinstance(auth, str) and auth.strip().lower() == "none"


def _injected_option(args: Mapping[str, Any]) -> str:
    """A ref, branch, revision or remote argument that starts with a dash: the server passes it to
    its program, which reads it as an option (mcp-server-git's CVE-2025-68144: ``--output=FILE``
    as a diff target writes FILE)."""
    for key in _NAME_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str) and len(value.strip()) > 1 and value.strip().startswith("-"):
            return value.strip()
    return ""


def _act(kind: str, what: str, target: str) -> dict[str, str]:
    return {"kind": kind, "what": what, "target": target}


def _phrase(words: frozenset[str]) -> str:
    return " ".join(sorted(words)) or "the tool"


def _verb_words(args: Mapping[str, Any]) -> frozenset[str]:
    found: set[str] = set()
    for key in _VERB_KEYS:
        value = args.get(key)
        if (
            isinstance(value, str)
            and 0 < len(value) <= 40
            and value.replace("_", "").replace("-", "").isalnum()
        ):
            found |= identifier_words(value)
    return frozenset(found)


def _object_words(args: Mapping[str, Any]) -> frozenset[str]:
    """Words of short identifiers the call names its object by (``resourceType: secrets``)."""
    found: set[str] = set()
    for key, value in args.items():
        if (
            isinstance(key, str)
            and _OBJECT_KEY.search(key)
            and isinstance(value, str)
            and 0 < len(value) <= 60
        ):
            found |= identifier_words(value)
    return frozenset(found)


def _target(args: Mapping[str, Any]) -> str:
    for key in ("name", "repo", "project_id", "projectId", "id", "channel", "recipient", "to", "user"):
        value = args.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            return str(value)[:80]
    return ""


def _is_true(args: Mapping[str, Any], key: str) -> bool:
    value = args.get(key)
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def _is_hard_reset(verbs: frozenset[str], args: Mapping[str, Any]) -> bool:
    mode = args.get("mode")
    return "reset" in verbs and isinstance(mode, str) and mode.strip().lower().lstrip("-") == "hard"


def _has_kind(args: Mapping[str, Any], kind: str) -> bool:
    for key in ("kind", "resourceType", "resource_type", "type"):
        value = args.get(key)
        if isinstance(value, str) and value.strip().lower().rstrip("s") == kind:
            return True
    return False


def _has_any(args: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    return any(args.get(key) not in (None, "", 0) for key in keys)


def _nested_keys(args: Mapping[str, Any]) -> frozenset[str]:
    """The call's argument names and those of objects one level down (``updates: {email}``)."""
    keys = {key for key in args if isinstance(key, str)}
    for value in args.values():
        if isinstance(value, Mapping):
            keys |= {key for key in value if isinstance(key, str)}
    return frozenset(key.lower() for key in keys)


_HTTP_CLIENT_WORDS: Final = frozenset({"requests", "request", "http", "httpx"})
_URL_ARGUMENTS: Final = ("url", "uri", "URL", "Url", "endpoint")


def _web_url(args: Mapping[str, Any]) -> bool:
    """Whether the call names an http(s) URL it sends its request to."""
    for key in _URL_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str) and value[:8].lower().startswith(("http://", "https://")):
            return True
    return False


def _names_local_path(args: Mapping[str, Any]) -> bool:
    """Whether the call acts on a local path (a move's source and destination only when they look
    like paths: a payout's ``destination`` is a bank account)."""
    for key in _PATH_KEYS:
        value = args.get(key)
        if key in ("source", "destination"):
            if isinstance(value, str) and value[:1] in ("/", "~", "."):
                return True
        elif isinstance(value, str | list) and value:
            return True
    return False


def _scaled_to_zero(args: Mapping[str, Any]) -> bool:
    """A scale call whose count is zero (``replicas: 0``, ``dyno: web=0``, ``quantity: "0"``)."""
    for key in _SCALE_KEYS:
        value = args.get(key)
        if value == 0 and not isinstance(value, bool):
            return True
        if isinstance(value, str) and _ZERO_ASSIGNMENT.match(value):
            return True
    return False


def _made_public(args: Mapping[str, Any]) -> bool:
    visibility = args.get("visibility")
    if isinstance(visibility, str) and visibility.strip().lower() in ("public", "internal"):
        return True
    if args.get("private") is False or args.get("public") is True:
        return True
    return any(
        isinstance(args.get(key), str) and args[key].strip().lower() == "anyone"
        for key in ("type", "email", "audience")
    )


def _guard_setting(args: Mapping[str, Any]) -> bool:
    for key in ("key", "name", "setting"):
        value = args.get(key)
        if isinstance(value, str) and _GUARD_SETTING.search(value):
            return True
    return False
