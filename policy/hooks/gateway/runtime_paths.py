"""Where a resident gateway lives: one per deployment, in a folder only its user can enter.

A *deployment* is everything that decides what a gateway decides: the deployment file, the packs,
``--param`` overrides, the engine, shadow mode, the ``--audit`` log and ``--no-self-protection``,
plus the installation that
runs it (interpreter and package), all as absolute paths. Its digest names the gateway's files, so
two deployments on one machine never share a gateway, a socket or a lock, and a hook command and
``dsh-policy serve`` given the same options meet at the same socket.

The folder is ``$DSH_POLICY_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/dsh-policy``, else
``$TMPDIR/dsh-policy-<uid>`` (``/tmp`` by default). It must be a real directory owned by this user
with no group or world access; anything else (a folder another user planted in ``/tmp``, a
symlink) is refused, and the hook then decides in process instead of talking to a stranger.

Standard library only, and only cheap modules (no ``pathlib``, ``dataclasses`` or ``typing`` at
run time): the fast hook client imports this on every event.
"""

from __future__ import annotations

import os
import stat
import sys

from dsh_policy.policy.gateway_folders import (
    RUNTIME_DIR_VARIABLE,
    tmp_folder,
    xdg_folder,
)

TYPE_CHECKING = False  # not typing's: importing typing would cost every hook event
if TYPE_CHECKING:
    from argparse import Namespace

try:  # the built-in SHA-256 loads in a fraction of hashlib's time (no OpenSSL)
    from _sha2 import sha256  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # Python 3.11
    except ImportError:
        from hashlib import sha256

# sockaddr_un.sun_path is 108 bytes on Linux and 104 on macOS, including the terminating NUL.
MAX_SOCKET_PATH = 103
KEY_CHARS = 20


class RuntimeDirError(Exception):
    """The runtime folder or a file in it cannot be trusted; the message says why."""


class DeploymentSpec:
    """The options that shape decisions, normalized (absolute paths, flags in order). Immutable."""

    __slots__ = ("audit", "config", "engine", "installation", "packs", "params", "shadow", "unprotected")

    def __init__(
        self,
        *,
        config: str | None = None,
        packs: tuple[str, ...] = (),
        params: tuple[str, ...] = (),
        engine: str | None = None,
        shadow: bool = False,
        audit: str | None = None,
        unprotected: bool = False,
        installation: tuple[str, str] | None = None,
    ) -> None:
        self.config = config
        self.packs = tuple(packs)
        self.params = tuple(params)
        self.engine = engine
        self.shadow = shadow
        self.audit = audit
        self.unprotected = unprotected
        self.installation = installation or installation_of_this_process()

    @classmethod
    def from_options(
        cls,
        *,
        config: str | None,
        packs: list[str] | tuple[str, ...],
        params: list[str] | tuple[str, ...],
        engine: str | None,
        shadow: bool,
        audit: str | None,
        unprotected: bool = False,
        cwd: str | None = None,
    ) -> DeploymentSpec:
        """Resolve relative paths against ``cwd`` (the hook's working directory)."""
        base = cwd or os.getcwd()
        return cls(
            config=absolute(config, base),
            packs=tuple(absolute(pack, base) or pack for pack in packs),
            params=tuple(params),
            engine=engine,
            shadow=shadow,
            audit=absolute(audit, base),
            unprotected=unprotected,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeploymentSpec) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"DeploymentSpec({self.describe()!r}, key={self.key()})"

    def _fields(self) -> tuple[object, ...]:
        return (
            self.config,
            self.packs,
            self.params,
            self.engine,
            self.shadow,
            self.audit,
            self.unprotected,
            self.installation,
        )

    def key(self) -> str:
        """A short digest naming this deployment's gateway files (every field length-prefixed,
        so no two deployments encode alike)."""
        words = [
            "dsh-policy-gateway/1",
            self.config or "",
            *self.packs,
            "--params",
            *self.params,
            self.engine or "",
            "shadow" if self.shadow else "",
            self.audit or "",
            "unprotected" if self.unprotected else "",
            *self.installation,
        ]
        packs_then = [str(len(self.packs)), str(len(self.params))]
        encoded = "".join(f"{len(word)}:{word}" for word in [*packs_then, *words])
        return sha256(encoded.encode("utf-8", "surrogateescape")).hexdigest()[:KEY_CHARS]

    def policy_argv(self) -> list[str]:
        """The options again, as ``serve`` and the in-process hook read them."""
        argv: list[str] = []
        if self.config is not None:
            argv += ["--config", self.config]
        for pack in self.packs:
            argv += ["--pack", pack]
        for param in self.params:
            argv += ["--param", param]
        if self.engine is not None:
            argv += ["--engine", self.engine]
        if self.shadow:
            argv.append("--shadow")
        if self.audit is not None:
            argv += ["--audit", self.audit]
        if self.unprotected:
            argv.append("--no-self-protection")
        return argv

    def describe(self) -> str:
        """One line for logs and status answers."""
        return self.config or ", ".join(self.packs) or "(no packs)"


def spec_from(args: Namespace) -> DeploymentSpec:
    """The deployment that parsed hook or ``serve`` options name: the same one the fast client
    computes from the raw command line, so ``hook``, ``serve`` and ``doctor`` find one gateway.

    Not folded into :func:`sources_from`: ``serve --status`` needs the spec without reading the
    deployment file, and the hook needs it only when it decides a tool call."""
    return DeploymentSpec.from_options(
        config=args.config,
        packs=list(args.packs),
        params=list(args.params),
        engine=args.engine,
        shadow=bool(args.shadow),
        audit=args.audit,
        unprotected=bool(args.no_self_protection),
    )


def absolute(path: str | None, base: str) -> str | None:
    """``path`` made absolute against ``base`` (``~`` expanded), or None."""
    if path is None:
        return None
    expanded = os.path.expanduser(path)
    return os.path.normpath(expanded if os.path.isabs(expanded) else os.path.join(base, expanded))


def installation_of_this_process() -> tuple[str, str]:
    """Which interpreter and which copy of the package, down to the install: a hook must never talk
    to a gateway still running the code an upgrade replaced (it leaves when idle)."""
    here = os.path.realpath(__file__)
    package = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    try:
        installed = os.stat(here).st_mtime_ns
    except OSError:
        installed = 0
    # realpath: ``venv/bin/python`` and ``venv/bin/python3`` are one interpreter; the package path
    # still tells two virtual environments on one base interpreter apart.
    return os.path.realpath(sys.executable), f"{package}@{installed}"


class GatewayFiles:
    """The files of one deployment's gateway inside the runtime folder."""

    __slots__ = ("folder", "key")

    def __init__(self, folder: str, key: str) -> None:
        self.folder = folder
        self.key = key

    def _file(self, suffix: str) -> str:
        return os.path.join(self.folder, self.key + suffix)

    @property
    def socket(self) -> str:
        """The Unix socket the gateway listens on (mode 0600)."""
        return self._file(".sock")

    @property
    def lock(self) -> str:
        """Held (``flock``) by the serving process for its whole life."""
        return self._file(".lock")

    @property
    def start_lock(self) -> str:
        """Held (``flock``) by the one hook that starts a gateway, so a crash restarts one
        gateway, not one per waiting hook."""
        return self._file(".start")

    @property
    def log(self) -> str:
        """stdout/stderr of a gateway the hook client started."""
        return self._file(".log")

    @property
    def token(self) -> str:
        """The HTTP bearer token (mode 0600), when HTTP is on."""
        return self._file(".token")


def runtime_dir(*, create: bool = True) -> str:
    """This user's runtime folder, created (0700) when missing; raises :class:`RuntimeDirError`."""
    override = os.environ.get(RUNTIME_DIR_VARIABLE)
    if override:
        folder = override
    else:
        xdg = os.environ.get("XDG_RUNTIME_DIR")
        folder = xdg_folder(xdg) if xdg and _is_private_dir(xdg) else tmp_folder(os.environ)
    if create:
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except OSError as error:
            raise RuntimeDirError(f"cannot create runtime folder {folder}: {error.strerror}") from None
    check_private_dir(folder)
    return folder


def _is_private_dir(path: str) -> bool:
    try:
        check_private_dir(path)
    except RuntimeDirError:
        return False
    return True


def check_private_dir(path: str) -> None:
    """Raise unless ``path`` is a directory (not a symlink) owned by us with no group/world access."""
    _check_own_dir(path, "runtime folder", 0o077, "lets other users in")


def _check_own_dir(path: str, what: str, forbidden: int, consequence: str) -> None:
    """Raise :class:`RuntimeDirError` unless ``path`` is a real directory (not a symlink) owned by
    this user whose mode has none of the ``forbidden`` bits; ``what`` and ``consequence`` name the
    folder and what those bits would allow, in the message."""
    try:
        info = os.lstat(path)
    except OSError as error:
        raise RuntimeDirError(f"{what} {path}: {error.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise RuntimeDirError(f"refusing {what} {path}: not a directory")
    if info.st_uid != os.geteuid():
        raise RuntimeDirError(f"refusing {what} {path}: owned by uid {info.st_uid}, not {os.geteuid()}")
    if info.st_mode & forbidden:
        raise RuntimeDirError(
            f"refusing {what} {path}: mode {stat.S_IMODE(info.st_mode):04o} {consequence}"
        )


def gateway_files(spec: DeploymentSpec, *, create: bool = True) -> GatewayFiles:
    """The gateway files of ``spec``; raises :class:`RuntimeDirError`."""
    files = GatewayFiles(runtime_dir(create=create), spec.key())
    if len(os.fsencode(files.socket)) > MAX_SOCKET_PATH:
        raise RuntimeDirError(f"socket path {files.socket} is too long for a Unix socket")
    return files


def system_gateway_files(socket_path: str) -> GatewayFiles:
    """The files of a gateway that serves other users (``serve --socket PATH``, the hardened
    mode): the socket at ``PATH`` (its name ends in ``.sock``), its lock and log beside it. The
    folder must be a real directory owned by this user that no other user may write to (they may
    enter it, to connect); raises :class:`RuntimeDirError`."""
    folder, name = os.path.split(os.path.abspath(socket_path))
    if not name.endswith(".sock") or name == ".sock":
        raise RuntimeDirError(f"--socket {socket_path}: the socket's name must end in .sock")
    _check_own_dir(folder, "socket folder", 0o022, "lets other users replace the socket")
    files = GatewayFiles(folder, name[: -len(".sock")])
    if len(os.fsencode(files.socket)) > MAX_SOCKET_PATH:
        raise RuntimeDirError(f"socket path {files.socket} is too long for a Unix socket")
    return files


def check_own_socket(path: str) -> int:
    """The inode of ``path``; raises unless it is a socket owned by this user (checked before
    connecting). A missing socket raises ``FileNotFoundError`` (the gateway is not running)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise RuntimeDirError(f"{path}: {error.strerror}") from None
    if not stat.S_ISSOCK(info.st_mode):
        raise RuntimeDirError(f"refusing {path}: not a socket")
    if info.st_uid != os.geteuid():
        raise RuntimeDirError(f"refusing {path}: owned by uid {info.st_uid}, not {os.geteuid()}")
    return info.st_ino
