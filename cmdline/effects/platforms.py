"""What hosted platforms' and fleets' own CLIs do to data, logs, keys and control, read as effects
(found by the blind probe tests/corpus/probe9, read as classes; the cloud majors' verbs live in
``acts``, ``cloud_more`` and ``cloud_takeover``):

- ``erase-contents``: destroying SQL sent to a hosted database by its platform's CLI (``wrangler
  d1 execute --remote``, ``turso db shell``); a hosted database, branch, repository, machine or
  snapshot destroyed through its platform's CLI (PlanetScale, Turso, Neon, Gitea's ``tea``,
  vSphere's ``govc``, snapper),
  backup data deleted with the protection that kept it (``az backup protection disable
  --delete-backup-data true``), a bucket's versioning suspended (old versions stop protecting
  against overwrite and deletion: the step before a wipe or an SSE-C re-encryption), archivers
  told to delete the originals they packed (``7z -sdel``, ``zip -m``, ``rar m``);
- ``log-off``: model-invocation logging of an AI platform deleted or narrowed (LLMjacking's first
  step after enumerating models), an organization's default log sink disabled;
- ``cloud-identity``: AI-platform API keys minted or printed (``gcloud services api-keys create``,
  ``get-key-string``);
- ``remote-exec``: this machine enrolled to run a remote controller's jobs - joining a swarm
  managed elsewhere, joining a k3s server (a CI runner registered is :mod:`.forge`'s) - which hands
  its execution to whoever controls that controller;
- ``defense-off``: a security agent's package removed through the package manager, device
  management profiles removed;
- ``miner``: miners spelled with wallet and daemon options rather than a pool URL.

Publishing a package or an editor extension is the registries' control plane, read in
:mod:`.forge`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect, runs
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.effects.security_products import PACKAGE_NAMES
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.sql import sql_statements

__all__ = ["COMMAND_READERS", "platform_acts"]

_PLATFORM_DESTROY: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    # program -> (resource words, destroy verbs): ``pscale database delete``, ``turso db destroy``
    "pscale": (("database", "db", "branch"), frozenset({"delete", "destroy"})),
    "turso": (("db", "group", "database"), frozenset({"destroy", "delete"})),
    "neonctl": (
        ("projects", "project", "branches", "branch", "databases", "database"),
        frozenset({"delete"}),
    ),
    "neon": (("projects", "project", "branches", "branch", "databases", "database"), frozenset({"delete"})),
    "tea": (("repos", "repo", "repositories"), frozenset({"delete", "rm"})),
    "supabase": (("projects", "branches"), frozenset({"delete"})),
    "railway": (("environment", "service", "volume"), frozenset({"delete"})),
    "fly": (("apps", "volumes", "postgres", "mpg"), frozenset({"destroy", "delete"})),
    "flyctl": (("apps", "volumes", "postgres", "mpg"), frozenset({"destroy", "delete"})),
    "upstash": (("redis", "kafka", "vector"), frozenset({"delete"})),
    "doctl": (("databases",), frozenset({"delete"})),
    # probe22: the same for local data services' own CLIs
    "influx": (("bucket", "org", "v1"), frozenset({"delete"})),
    "ceph": (("osd", "fs", "mds"), frozenset({"delete", "rm", "purge", "destroy"})),
}
# Local machine and container managers whose verb comes first (``lxc delete web01``): the verbs
# that remove a machine together with its disks.
_LOCAL_DESTROY: dict[str, frozenset[str]] = {
    "lxc": frozenset({"delete", "rm"}),
    "incus": frozenset({"delete", "rm"}),
    "vagrant": frozenset({"destroy"}),
    "multipass": frozenset({"delete", "purge"}),
}
_GOVC_DESTROY = lazy_compile(
    r"^(?:vm\.destroy|snapshot\.remove|datastore\.rm|pool\.destroy|folder\.destroy|vm\.unregister)$"
)
_AI_LOGGING_OFF = lazy_compile(r'(?i)"?(?:text|image|embedding|video)DataDeliveryEnabled"?\s*[:=]\s*false')
_REMOVING = frozenset(
    {"remove", "purge", "erase", "autoremove", "uninstall", "rm", "del", "-R", "-Rns", "-Rs", "-e"}
)
_WALLET_OPTIONS = lazy_compile(
    r"^--(?:wallet(?:-address)?|mining-address|daemon-rpc-address|mining-threads|pool-address)(?:=|$)"
)


def _platform_destroy(argv: list[str]) -> Iterator[Effect]:
    tool = argv[0]
    entry = _PLATFORM_DESTROY.get(tool)
    words = _words(argv)
    if entry is not None:
        resources, verbs = entry
        if words and words[0] in resources and any(w in verbs for w in words[1:3]):
            yield _fx("erase-contents", f"{tool} destroys a hosted {words[0]}", " ".join(words[:3]))
    elif tool == "govc" and words and _GOVC_DESTROY.match(words[0]):
        yield _fx(
            "erase-contents", f"govc {words[0]} removes virtual machines or their data", " ".join(words[:2])
        )
    elif tool == "snapper" and "delete" in words:
        yield _fx("erase-contents", "snapper deletes file-system snapshots", " ".join(words))
    elif tool in _LOCAL_DESTROY:
        if words[:1] and words[0] in _LOCAL_DESTROY[tool]:
            yield _fx(
                "erase-contents", f"{tool} {words[0]} removes machines or their storage", " ".join(words[:2])
            )
    elif tool == "lxc-destroy" or (tool == "timeshift" and ("--delete" in argv or "--delete-all" in argv)):
        yield _fx("erase-contents", f"{tool} removes a container or system snapshots", " ".join(argv[1:3]))


def _hosted_sql(argv: list[str]) -> Iterator[Effect]:
    """SQL a hosted database's CLI sends to the remote database (``wrangler d1 execute DB --remote
    --command SQL``, ``turso db shell DB SQL``, ``heroku pg:psql -a APP -c SQL``): destroying
    statements erase its contents, as they would through a database client. A local D1
    (``--local``, the default) is a developer's copy."""
    tool, words = argv[0], _words(argv)
    text = ""
    if tool == "wrangler" and words[:2] == ["d1", "execute"] and "--remote" in argv:
        text = _value(argv, "--command") or ""
    elif tool == "turso" and words[:2] == ["db", "shell"] and len(words) > 3:
        text = " ".join(words[3:])
    elif tool == "heroku" and words[:1] == ["pg:psql"]:
        # the app's hosted Postgres, reached with the app's own credentials
        text = _value(argv, "-c", "--command") or ""
    for statement in sql_statements(text) if text else []:
        if statement["kind"] in ("drop", "truncate", "alter-drop") or (
            statement["kind"] in ("delete", "update") and statement["where"] == "false"
        ):
            yield _fx(
                "erase-contents",
                f"{tool} sends {statement['kind'].upper()} to a hosted database",
                statement["text"][:60],
            )
            return


def _protection_removed(argv: list[str]) -> Iterator[Effect]:
    tool, words = argv[0], _words(argv)
    joined = " ".join(words)
    if tool == "aws" and words[:2] == ["s3api", "put-bucket-versioning"]:
        config = _value(argv, "--versioning-configuration") or ""
        if re.search(r"(?i)Status\W*Suspended", config):
            yield _fx("erase-contents", "suspends a bucket's versioning", _value(argv, "--bucket") or "")
    elif tool == "az" and joined.startswith("backup protection disable"):
        if re.match(r"(?i)^(?:true|yes|1)$", _value(argv, "--delete-backup-data") or ""):
            yield _fx("erase-contents", "deletes the backup data with its protection", joined[:60])
    elif tool == "aws" and words[:1] == ["bedrock"] and len(words) > 1:
        op = words[1]
        if op == "delete-model-invocation-logging-configuration" or (
            op == "put-model-invocation-logging-configuration"
            and _AI_LOGGING_OFF.search(_value(argv, "--logging-config") or "")
        ):
            yield _fx("log-off", "switches off or narrows model-invocation logging", op)
    elif (
        tool == "gcloud"
        and re.search(r"\blogging settings update\b", joined)
        and "--disable-default-sink" in argv
    ):
        yield _fx("log-off", "disables the default log sink", joined[:60])


def _keys(argv: list[str]) -> Iterator[Effect]:
    if argv[0] != "gcloud":
        return
    joined = " ".join(_words(argv))
    if re.search(r"\bservices api-keys (?:create|get-key-string|update)\b", joined):
        yield _fx("cloud-identity", "mints or prints a cloud API key", joined[:60])


def _enrolment(argv: list[str]) -> Iterator[Effect]:
    tool, words = argv[0], _words(argv)
    if tool in ("docker", "podman") and words[:2] == ["swarm", "join"]:
        yield _fx(
            "remote-exec", "joins this machine to a swarm another manager runs", words[-1] if words else ""
        )
    elif tool in ("k3s", "rke2") and words[:1] == ["agent"] and _value(argv, "--server", "-s"):
        yield _fx(
            "remote-exec",
            "joins this machine to a cluster another server runs",
            _value(argv, "--server", "-s") or "",
        )


_PACKAGE_MANAGERS = frozenset(
    {"apt", "apt-get", "yum", "dnf", "zypper", "snap", "brew", "pacman", "apk", "rpm", "dpkg", "microdnf"}
)


def _agents_removed(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    if tool in _PACKAGE_MANAGERS:
        if any(
            a in _REMOVING or (re.match(r"^-[a-zA-Z]*[PrR]$", a) and tool in ("dpkg", "pacman")) for a in rest
        ):
            hit = next((a for a in rest if not a.startswith("-") and PACKAGE_NAMES.match(a)), "")
            if hit:
                yield _fx("defense-off", f"{tool} removes a security or logging agent", hit)
    elif tool == "profiles" and any(a in ("remove", "-R", "-D", "-r") for a in rest):
        # any configuration profile removed (by identifier too): the profiles carry the machine's
        # managed security settings and its MDM enrolment (mSCP's os_mdm_require read in reverse)
        yield _fx("defense-off", "removes the machine's device management profiles", " ".join(rest))


def _archive_and_delete(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    deletes = (
        (tool in ("7z", "7za", "7zz") and "-sdel" in rest)
        or (tool == "zip" and any(re.match(r"^-[a-zA-Z]*m[a-zA-Z]*$", a) or a == "--move" for a in rest))
        or (tool == "rar" and (rest[:1] == ["m"] or "-df" in rest))
        or (tool == "tar" and "--remove-files" in rest)
    )
    if deletes:
        locked = any(re.match(r"^-(?:p\S|P$|-password)", a) or a == "-e" for a in rest)
        kind = "encrypt-destroy" if locked else "erase-contents"
        yield _fx(kind, f"{tool} packs files and deletes the originals", " ".join(rest[:4]))


def _miner_options(argv: list[str]) -> Iterator[Effect]:
    if sum(1 for a in argv[1:] if _WALLET_OPTIONS.match(a)) >= 1 and any(
        re.match(r"^--(?:daemon-rpc-address|mining-threads|pool-address|pool)(?:=|$)", a)
        or a in ("-o", "--url")
        for a in argv[1:]
    ):
        yield _fx(
            "miner", f"{argv[0]} mines cryptocurrency", _value(argv, "--daemon-rpc-address", "--pool") or ""
        )


COMMAND_READERS: tuple[CommandReader, ...] = (
    (
        frozenset(_PLATFORM_DESTROY)
        | frozenset(_LOCAL_DESTROY)
        | {"govc", "snapper", "lxc-destroy", "timeshift"},
        _platform_destroy,
    ),
    (frozenset({"wrangler", "turso", "heroku"}), _hosted_sql),
    (frozenset({"aws", "az", "gcloud"}), _protection_removed),
    (frozenset({"gcloud"}), _keys),
    (frozenset({"docker", "podman", "k3s", "rke2"}), _enrolment),
    (_PACKAGE_MANAGERS | {"profiles"}, _agents_removed),
    (frozenset({"7z", "7za", "7zz", "zip", "rar", "tar"}), _archive_and_delete),
    (None, _miner_options),  # wallet and pool options, whatever the miner's binary is called
)
"""The per-command readers here in order, each with the programs it reads (``shell.acts``
dispatches on them)."""


def platform_acts(argv: list[str]) -> list[Effect]:
    """The effects above for one unwrapped command (argv[0] is a base name)."""
    return [
        effect for programs, reader in COMMAND_READERS if runs(programs, argv[0]) for effect in reader(argv)
    ]
