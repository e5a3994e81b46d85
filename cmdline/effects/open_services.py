"""Data services started with their own guard switched off where others can reach them: the
misconfiguration behind the mass ransom campaigns against Redis, MongoDB and Elasticsearch and
the open dashboards of ShadowRay (ATT&CK T1190, T1133):

- ``cloud-exposure`` for a **server told to skip authentication while listening beyond this
  machine**: ``redis-server``/``valkey-server --protected-mode no`` (protected mode is what
  refuses remote clients while no password is set) unless bound to loopback only; ``mongod
  --bind_ip_all`` (or a ``--bind_ip`` beyond loopback) without ``--auth``;
- the same for a **container** (``docker``/``podman``/``nerdctl`` ``run``/``create``) that publishes a
  port on every interface (``-p 6379:6379``, ``-P``) or shares the host's network, with the
  image's authentication switched off through its documented settings
  (``POSTGRES_HOST_AUTH_METHOD=trust``, ``MYSQL_ALLOW_EMPTY_PASSWORD``,
  ``xpack.security.enabled=false``, ``DISABLE_SECURITY_PLUGIN``, ``ALLOW_EMPTY_PASSWORD=yes``,
  ``--protected-mode no`` handed to the image).

A port published on loopback only (``-p 127.0.0.1:5432:5432``), a container that publishes
nothing, and a server with a password stay ordinary.
"""

from __future__ import annotations

from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS", "open_service_line_acts"]

_LOOPBACK = lazy_compile(r"^(?:localhost|127(?:\.\d+){3}|::1|\[::1\])$")
_AUTH_OFF_ENV = lazy_compile(
    r"(?i)^(?:POSTGRES_HOST_AUTH_METHOD=trust|MYSQL_ALLOW_EMPTY_PASSWORD=\S+|MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=\S+"
    r"|MYSQL_ALLOW_EMPTY_ROOT_PASSWORD=\S+|ALLOW_EMPTY_PASSWORD=(?:yes|true|1)|xpack\.security\.enabled=false"
    r"|DISABLE_SECURITY_PLUGIN=true|plugins\.security\.disabled=true|RABBITMQ_DEFAULT_PASS=guest"
    r"|JUPYTER_TOKEN=|GF_AUTH_ANONYMOUS_ENABLED=true|MINIO_ROOT_PASSWORD=minioadmin)$"
)
_CONTAINER_ENGINES = frozenset({"docker", "podman", "nerdctl"})
_RUN_VERBS = frozenset({"run", "create"})


def _protected_mode_off(argv: list[str]) -> bool:
    return any(
        (a == "--protected-mode" and argv[i + 1 : i + 2] == ["no"]) or a == "--protected-mode=no"
        for i, a in enumerate(argv)
    )


def _redis_server(argv: list[str]) -> Iterator[Effect]:
    """``redis-server --protected-mode no`` reachable beyond loopback (no ``--requirepass``)."""
    if not _protected_mode_off(argv) or _value(argv, "--requirepass"):
        return
    bind = _value(argv, "--bind")
    if bind is None or not all(_LOOPBACK.match(address) for address in bind.split()):
        yield _fx(
            "cloud-exposure", f"{argv[0]} answers every client without a password", bind or "every interface"
        )


def _mongod(argv: list[str]) -> Iterator[Effect]:
    """``mongod --bind_ip_all`` (or a non-loopback ``--bind_ip``) without ``--auth``."""
    if "--auth" in argv:
        return
    bind = _value(argv, "--bind_ip")
    everywhere = "--bind_ip_all" in argv or (
        bind is not None and not all(_LOOPBACK.match(a.strip()) for a in bind.split(","))
    )
    if everywhere:
        yield _fx(
            "cloud-exposure",
            f"{argv[0]} answers every client without authentication",
            bind or "every interface",
        )


def _published_everywhere(argv: list[str]) -> str:
    """How a container run reaches beyond this machine ("" when it does not)."""
    if "-P" in argv or "--publish-all" in argv:
        return "every exposed port"
    network = _value(argv, "--network", "--net")
    if network == "host":
        return "the host's network"
    for i, arg in enumerate(argv):
        spec = argv[i + 1] if arg in ("-p", "--publish") and i + 1 < len(argv) else ""
        if arg.startswith("--publish="):
            spec = arg.split("=", 1)[1]
        if spec and (spec.count(":") < 2 or not _LOOPBACK.match(spec.rsplit(":", 2)[0].strip("[]"))):
            return spec
    return ""


def _container_run(argv: list[str], image_command: list[str]) -> Iterator[Effect]:
    """A container with its service's authentication off, published beyond loopback; the image's
    own arguments (``redis --protected-mode no``) are the command the shell reader lists after it."""
    if not any(a in _RUN_VERBS for a in argv[1:3]):
        return
    environment = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-e", "--env")]
    environment += [a.split("=", 1)[1] for a in argv if a.startswith("--env=")]
    auth_off = next((e for e in environment if _AUTH_OFF_ENV.match(e)), None)
    if auth_off is None and (_protected_mode_off(argv) or _protected_mode_off(image_command)):
        auth_off = "--protected-mode no"
    if auth_off is None:
        return
    reach = _published_everywhere(argv)
    if reach:
        yield _fx(
            "cloud-exposure", f"a container serves without authentication ({auth_off}) on {reach}", reach
        )


def _open_servers(argv: list[str]) -> Iterator[Effect]:
    if argv[0] in ("redis-server", "valkey-server"):
        yield from _redis_server(argv)
    elif argv[0] in ("mongod", "mongos"):
        yield from _mongod(argv)


def open_service_line_acts(commands: list[list[str]]) -> Iterator[Effect]:
    """Containers run with authentication off (:func:`_container_run`), each read with the command
    after it on the line (the image's arguments when it has any)."""
    for index, argv in enumerate(commands):
        if argv and argv[0] in _CONTAINER_ENGINES:
            following = commands[index + 1] if index + 1 < len(commands) else []
            yield from _container_run(argv, following)


COMMAND_READERS: tuple[CommandReader, ...] = (
    (frozenset({"redis-server", "valkey-server", "mongod", "mongos"}), _open_servers),
)
"""The per-command reader here, with the programs it reads (``shell.acts`` dispatches on them)."""
