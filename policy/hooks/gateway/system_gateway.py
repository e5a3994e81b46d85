"""The hook client's way to the gateway of the hardened mode: another user's gateway, on a socket.

In the hardened mode (``dsh-policy init <client> --system``, docs/hardened.md) the gateway runs as
its own system user and the hook, run by the agent's user, names it in its command line:
``--gateway-socket PATH --gateway-user NAME``. The hook then talks to that gateway and nothing
else: the socket must belong to that user, and so must the process that listens on it (its
``SO_PEERCRED``, which no other user can forge), or the hook gives the event's safe answer. It
never starts a gateway of its own, never decides in process (the agent's user can neither write
the audit log nor read the signing key, and must not be able to choose the policy), and ignores
``DSH_POLICY_GATEWAY`` and ``DSH_POLICY_RUNTIME_DIR``.

Standard library only, and only cheap modules: the fast hook client imports this on every event.
"""

from __future__ import annotations

import os
import stat
import time

from dsh_policy.policy.hooks.gateway import wire

CONNECT_SECONDS = 1.0  # retrying a full listen queue
ANSWER_SECONDS = 10.0  # a busy (heartbeating) gateway may take this long to answer
SILENCE_SECONDS = 2.0  # no answer and no heartbeat for this long: the gateway is frozen


def gateway_uid(user: str | None) -> int | str:
    """The uid the gateway must run as (a name, or a number), or why there is none."""
    if not user:
        return "--gateway-socket needs --gateway-user (the user the gateway runs as)"
    if user.isdigit():
        return int(user)
    import pwd

    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        return f"no such user {user!r} (the gateway's user, --gateway-user)"


def connect(path: str, uid: int, deadline: float) -> wire.Socket | str:
    """A socket connected to ``uid``'s gateway at ``path``, or why not (refused, not running)."""
    try:
        info = os.lstat(path)
    except OSError as error:
        return f"{path}: {error.strerror} (is the gateway service running?)"
    if not stat.S_ISSOCK(info.st_mode):
        return f"refusing {path}: not a socket"
    if info.st_uid != uid:
        return f"refusing {path}: it belongs to uid {info.st_uid}, not to the gateway's user (uid {uid})"
    pause = 0.002
    while True:
        sock = wire.unix_socket()
        try:
            sock.settimeout(max(0.05, deadline - time.monotonic()))
            sock.connect(path)
        except BlockingIOError:  # the listen queue is full: the gateway is busy, not gone
            sock.close()
            if time.monotonic() + pause >= deadline:
                return "the gateway's listen queue stayed full"
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
            continue
        except OSError as error:
            sock.close()
            return f"cannot connect to {path}: {error.strerror or error}"
        try:
            peer = wire.peer_uid(sock)
        except OSError as error:
            peer, why = None, str(error)
        else:
            why = "the OS does not say who listens there"
        if peer != uid:
            sock.close()
            said = why if peer is None else f"the process listening there runs as uid {peer}"
            return f"refusing {path}: {said}, not the gateway's user (uid {uid})"
        return sock


def ask(path: str, user: str | None, frame: bytes, deadline: float) -> dict[str, object] | str:
    """The gateway's reply to ``frame``, or why there is none (every such case is refused)."""
    uid = gateway_uid(user)
    if isinstance(uid, str):
        return uid
    connected = connect(path, uid, min(deadline, time.monotonic() + CONNECT_SECONDS))
    if isinstance(connected, str):
        return connected
    try:
        return wire.exchange(
            connected, frame, min(deadline, time.monotonic() + ANSWER_SECONDS), SILENCE_SECONDS
        )
    except wire.WireError as error:
        return f"the gateway at {path}: {error}"
    finally:
        connected.close()


def query(path: str, op: str, timeout: float = 5.0) -> dict[str, object] | str:
    """Ask the gateway at ``path`` for ``status`` or ``stop`` (``serve --socket PATH --status``,
    ``doctor --hardened``). It answers only its own user and root; the answer, or why none."""
    try:
        owner = os.lstat(path).st_uid
    except OSError as error:
        return f"{path}: {error.strerror} (is the gateway service running?)"
    deadline = time.monotonic() + timeout
    connected = connect(path, owner, deadline)
    if isinstance(connected, str):
        return connected
    try:
        return wire.exchange(connected, wire.encode_request(op, {}), deadline)
    except wire.WireError as error:
        return str(error)
    finally:
        connected.close()
