"""The fast command-hook client: what ``dsh-policy hook claude-code|codex`` runs on every event.

A hook process used to pay interpreter start, pydantic, CEL and compiling the packs on every tool
call (over a second). This client pays only the interpreter and a few standard-library modules:
it reads the event, forwards it over a Unix socket to the resident gateway of its deployment
(:mod:`.server`, started here on first use and kept warm), and prints the gateway's answer.

Every wait has a deadline, and they add up to less than the client's budget
(``DSH_POLICY_HOOK_TIMEOUT``, 20 s by default, which the watchdog enforces at 22 s), itself well
inside the 30 s the shipped settings give a hook: no harness ever times the hook out (Codex runs
the call when a hook times out). What happens when the gateway is not there or misbehaves:

- connecting: a full listen queue (``EAGAIN``) is retried for up to ``CONNECT_SECONDS``;
- no gateway running (no socket, or a stale one): start ``dsh-policy serve`` for this deployment in
  the background and wait for it (up to ``START_SECONDS``). Only the hook holding the start lock
  (``<key>.start``) starts one; every other hook waits for that gateway, so a crash under 20 hooks
  restarts one gateway, not 20;
- the gateway cannot be started or reached in time, the runtime folder or socket is not ours, or
  ``DSH_POLICY_GATEWAY=off`` / ``--in-process``: decide *in process* (the slow path, the same code
  the gateway runs);
- the gateway goes silent (no answer and no heartbeat for ``SILENCE_SECONDS``: frozen) or, busy,
  has not answered within ``ANSWER_SECONDS``: decide in process, within what is left of the
  budget, and the record says so (``delivery``: the request id, the path taken and why);
- the answer cannot come back whole (the gateway died or broke the protocol), or too little budget
  is left to decide in process: the event's safe answer (:mod:`.safe_answers`; exit 2 for
  PreToolUse). The call was possibly decided and recorded, but its answer is lost, so it must not
  run; the hook leaves a note (:mod:`.delivery_notes`) that the gateway appends to the log as a
  ``hook_told`` record, so the log says what the agent was told; the next event starts a new
  gateway;
- SIGTERM, SIGHUP, SIGINT, SIGPIPE and the watchdog alarm (``DSH_POLICY_HOOK_TIMEOUT`` plus a
  grace, from the start of the process, whatever it is doing): the safe answer, then exit.

The client exits 0 or 2 only: any other code is a non-blocking error in both harnesses.
Standard library only, and only cheap modules: importing the policy engine is the slow path's job.
"""

from __future__ import annotations

import _signal as signal  # signal.py would import enum, functools and collections: ~8 ms of CPU
import os
import sys
import time

from dsh_policy.policy.hooks.gateway import safe_answers, wire
from dsh_policy.policy.hooks.gateway.runtime_paths import (
    DeploymentSpec,
    GatewayFiles,
    RuntimeDirError,
    check_own_socket,
    gateway_files,
)

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    import subprocess

GATEWAY_VARIABLE = "DSH_POLICY_GATEWAY"  # "off": never use a resident gateway
TIMEOUT_VARIABLE = "DSH_POLICY_HOOK_TIMEOUT"  # seconds for one answer, below the harness's timeout
DEFAULT_TIMEOUT_SECONDS = 20.0
WATCHDOG_GRACE_SECONDS = 2.0  # past the timeout, the alarm answers for a hook stuck anywhere
CONNECT_SECONDS = 1.0  # retrying a full listen queue
START_SECONDS = 10.0  # how long a hook waits for a gateway to start (its imports, compiling the packs)
SILENCE_SECONDS = 2.0  # no answer and no heartbeat for this long: the gateway is frozen
ANSWER_SECONDS = 10.0  # a busy (heartbeating) gateway may take this long to answer
IN_PROCESS_MIN_SECONDS = 4.0  # deciding in process needs this much of the budget left
IDLE_EXIT_SECONDS = 1800  # a gateway started by a hook leaves after this long without events
START_LOCK_VARIABLE = "DSH_POLICY_START_LOCK_FD"  # the start lock a spawned gateway inherits
IDLE_VARIABLE = "DSH_POLICY_GATEWAY_IDLE"  # seconds, for the gateways this client starts
MAX_INPUT_BYTES = 32 * 1024 * 1024  # protocol.MAX_INPUT_BYTES
EXIT_ALREADY_RUNNING = 3  # serve's exit code when another process serves this deployment
HARNESSES = ("claude-code", "codex", "gemini-cli", "qwen-code", "opencode", "copilot-cli")
_POLL_SECONDS = 0.02
_VALUE_OPTIONS = {
    "--pack": "packs",
    "--config": "config",
    "--param": "params",
    "--engine": "engine",
    "--audit": "audit",
    "--format": "format",
    "--redact-bash-output": "bash_output",
    "--gateway-socket": "gateway_socket",
    "--gateway-user": "gateway_user",
}
_CHOICES = {
    "engine": ("auto", "python", "native"),
    "format": ("text", "json"),
    "bash_output": ("when-secret", "always", "never"),
}


class HookOptions:
    """The hook command line, parsed by hand (argparse costs more than the whole round trip)."""

    __slots__ = (
        "announce",
        "audit",
        "bash_output",
        "config",
        "engine",
        "format",
        "gateway_socket",
        "gateway_user",
        "harness",
        "in_process",
        "packs",
        "params",
        "shadow",
        "unprotected",
    )

    def __init__(self, harness: str) -> None:
        self.harness = harness
        self.config: str | None = None
        self.packs: list[str] = []
        self.params: list[str] = []
        self.engine: str | None = None
        self.format: str | None = None
        self.shadow = False
        self.audit: str | None = None
        self.announce = False
        self.in_process = False
        self.bash_output = "when-secret"
        self.unprotected = False
        self.gateway_socket: str | None = None  # the hardened mode's system gateway (.system_gateway)
        self.gateway_user: str | None = None

    def spec(self) -> DeploymentSpec:
        """The deployment these options name."""
        return DeploymentSpec.from_options(
            config=self.config,
            packs=self.packs,
            params=self.params,
            engine=self.engine,
            shadow=self.shadow,
            audit=self.audit,
            unprotected=self.unprotected,
        )


def parse_options(argv: list[str]) -> HookOptions | None:
    """The options, or None when the command line is anything but a plain valid one (``--help``,
    a typo, a missing value): the in-process parser then answers with its usage message."""
    if not argv or argv[0] not in HARNESSES:
        return None
    options = HookOptions(argv[0])
    index = 1
    while index < len(argv):
        word = argv[index]
        name, has_value, inline = word.partition("=")
        if name in _VALUE_OPTIONS:
            if has_value:
                value = inline
            elif index + 1 < len(argv):
                index += 1
                value = argv[index]
            else:
                return None
            field = _VALUE_OPTIONS[name]
            if field == "packs":  # ``--pack A B`` as well as ``--pack A --pack B``
                options.packs.append(value)
                while not has_value and index + 1 < len(argv) and not argv[index + 1].startswith("-"):
                    index += 1
                    options.packs.append(argv[index])
            elif field == "params":
                options.params.append(value)
            elif field in _CHOICES and value not in _CHOICES[field]:
                return None
            else:
                setattr(options, field, value)
        elif word == "--shadow":
            options.shadow = True
        elif word == "--announce-packs":
            options.announce = True
        elif word == "--in-process":
            options.in_process = True
        elif word == "--no-self-protection":
            options.unprotected = True
        else:
            return None
        index += 1
    return options


class _Run:
    """What the signal handlers need to answer for this process: the event, once read."""

    __slots__ = ("console", "emitting", "harness", "raw", "why")

    def __init__(self) -> None:
        self.raw: bytes | None = None
        self.harness = "codex"
        self.emitting: int | None = None
        self.console = False
        self.why = ""  # why no gateway answered (for the record of an in-process decision)

    def safe_answer(self, message: str) -> safe_answers.Answer:
        """The safe answer for the event this process was given."""
        return safe_answers.safe_answer(safe_answers.event_of(self.raw), message, self.harness)


_RUN = _Run()
_FAIL_SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT", "SIGPIPE", "SIGALRM")


def _on_signal(signum: int, _frame: object) -> None:
    """Answer for the event that fired (the safe answer), then leave at once."""
    for name in _FAIL_SIGNALS:  # no second signal may interrupt the answer
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, signal.SIG_IGN)
    if _RUN.emitting is not None:  # the real answer is being written: finish with its code
        os._exit(_RUN.emitting)
    name = next((n for n in _FAIL_SIGNALS if getattr(signal, n, None) == signum), f"signal {signum}")
    answer = _RUN.safe_answer(f"interrupted by {name}")
    _write_answer(answer, raw_fds=True)
    os._exit(answer.exit_code)


def install_signal_handlers(watchdog_seconds: float) -> dict[int, object]:
    """Fail closed on the signals a harness or a broken pipe sends, and on our own watchdog;
    returns the handlers replaced (restored when ``main`` returns, for in-process callers)."""
    previous: dict[int, object] = {}
    for name in _FAIL_SIGNALS:
        number = getattr(signal, name, None)
        if number is not None:
            previous[number] = signal.signal(number, _on_signal)
    if watchdog_seconds > 0:
        signal.setitimer(signal.ITIMER_REAL, watchdog_seconds)
    return previous


def _timeout() -> float:
    try:
        value = float(os.environ.get(TIMEOUT_VARIABLE) or DEFAULT_TIMEOUT_SECONDS)
    except ValueError:
        return DEFAULT_TIMEOUT_SECONDS
    return value if value > 0 else DEFAULT_TIMEOUT_SECONDS


def process_main(argv: list[str]) -> int:
    """The console script's ``dsh-policy hook`` (the dispatcher's ``process_main``): as
    :func:`main`, except that deciding in process runs in the adapter's watched child process
    (:func:`..in_process.adapter.process_main`: a memory limit and a deadline)."""
    return main(argv, console=True)


def hook_main(argv: list[str]) -> int:
    """``cli.main(["hook", ...])`` from Python (tests, embedding): decided in this process by the
    adapter, as the dispatcher does for every programmatic call; the harness's path (the console
    script) is :func:`process_main`."""
    from dsh_policy.policy.hooks.in_process import adapter

    return adapter.main(_without_client_flags(_with_project(argv)))


def main(argv: list[str], *, console: bool = False) -> int:
    """Entry point of ``dsh-policy hook``; returns 0 or 2, whatever happens."""
    _RUN.console = console
    timeout = _timeout()
    previous: dict[int, object] = {}
    try:
        previous = install_signal_handlers(timeout + WATCHDOG_GRACE_SECONDS)
        return _run(argv, timeout)
    except BaseException as exc:  # the last line of fail-closed defence
        if isinstance(exc, SystemExit) and exc.code in (0, None):
            return safe_answers.EXIT_OK
        answer = _RUN.safe_answer(f"{type(exc).__name__}: {exc}")
        _write_answer(answer)
        return answer.exit_code
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for number, handler in previous.items():
            signal.signal(number, handler)
        _RUN.__init__()  # type: ignore[misc]


def _run(argv: list[str], timeout: float) -> int:
    argv = _with_project(argv)
    options = parse_options(argv)
    if options is not None and options.gateway_socket is not None:
        return _ask_system_gateway(options, timeout)
    if options is None or options.in_process or os.environ.get(GATEWAY_VARIABLE, "").lower() == "off":
        return decide_in_process(_without_client_flags(argv), None)
    _RUN.harness = options.harness
    raw = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    _RUN.raw = raw
    if len(raw) > MAX_INPUT_BYTES:  # the adapter refuses it; no need to ship 32 MiB around
        return decide_in_process(argv, raw)
    spec = options.spec()
    try:
        files = gateway_files(spec)
    except RuntimeDirError as error:  # the record says why no gateway decided (a socket path too long...)
        return decide_in_process(argv, raw, {"path": "in-process", "why": f"resident gateway: {error}"})
    deadline = time.monotonic() + timeout
    request = os.urandom(8).hex()
    frame = wire.encode_request(
        "hook",
        {
            "harness": options.harness,
            "announce": options.announce,
            "bash_output": options.bash_output,
            "request": request,
        },
        raw,
    )
    try:
        reply = ask_gateway(files, spec, frame, deadline)
    except wire.GatewaySilentError as error:
        if deadline - time.monotonic() >= IN_PROCESS_MIN_SECONDS:
            delivery = {"request": request, "path": "in-process", "why": f"resident gateway: {error}"}
            return decide_in_process(argv, raw, delivery, deadline)
        return _lost(files, request, f"resident gateway: {error}")
    except wire.WireError as error:
        return _lost(files, request, f"resident gateway: {error}")
    if reply is None:
        why = _RUN.why or "no resident gateway could be reached"
        # No deadline of ours here: the adapter's own (and the watchdog) bound it, as before.
        return decide_in_process(argv, raw, {"path": "in-process", "why": why})
    answer = _checked_answer(reply)
    if answer.exit_code != reply.get("exit_code"):  # malformed: the gateway's answer is not given
        _leave_note(files, request, answer, "resident gateway sent a malformed answer")
    _write_answer(answer)
    return answer.exit_code


def _ask_system_gateway(options: HookOptions, timeout: float) -> int:
    """The hardened mode: the system gateway named on the command line answers, or the event
    gets its safe answer; nothing else may (:mod:`.system_gateway`)."""
    from dsh_policy.policy.hooks.gateway import system_gateway

    _RUN.harness = options.harness
    raw = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    _RUN.raw = raw
    if len(raw) > MAX_INPUT_BYTES:
        answer = _RUN.safe_answer(f"the event is larger than {MAX_INPUT_BYTES} bytes")
        _write_answer(answer)
        return answer.exit_code
    fields = {"harness": options.harness, "announce": options.announce, "bash_output": options.bash_output}
    frame = wire.encode_request("hook", {**fields, "request": os.urandom(8).hex()}, raw)
    socket_path = options.gateway_socket or ""
    reply = system_gateway.ask(socket_path, options.gateway_user, frame, time.monotonic() + timeout)
    answer = (
        _RUN.safe_answer(f"system gateway: {reply}") if isinstance(reply, str) else _checked_answer(reply)
    )
    _write_answer(answer)
    return answer.exit_code


def _lost(files: GatewayFiles, request: str, why: str) -> int:
    """The safe answer for a request whose answer was lost, and a note saying so."""
    answer = _RUN.safe_answer(why)
    _write_answer(answer)
    _leave_note(files, request, answer, why)
    return answer.exit_code


def _leave_note(files: GatewayFiles, request: str, answer: safe_answers.Answer, why: str) -> None:
    """Tell the log what the agent was told instead of the gateway's answer (after answering)."""
    from dsh_policy.policy.hooks.gateway import delivery_notes

    told = {"exit_code": answer.exit_code, "action": safe_answers.action_of(answer)}
    delivery_notes.leave_note(
        files.folder, files.key, request, _RUN.harness, safe_answers.event_of(_RUN.raw), told, why
    )


def _with_project(argv: list[str]) -> list[str]:
    """``--project`` expanded into the workspace and packs of this event's project (imported only
    when used: most hooks name a project's own deployment file)."""
    if not any(word.startswith("--project") for word in argv):
        return argv
    from dsh_policy.policy.hooks import project_scope

    return project_scope.expand(argv)


def _without_client_flags(argv: list[str]) -> list[str]:
    return [word for word in argv if word != "--in-process"]


def ask_gateway(
    files: GatewayFiles, spec: DeploymentSpec, frame: bytes, deadline: float
) -> dict[str, object] | None:
    """The gateway's answer to ``frame``; None when no gateway could be reached (decide in
    process; ``_RUN.why`` says why). Raises :class:`~.wire.GatewaySilentError` when one was
    reached but went silent or stayed busy past ``ANSWER_SECONDS``, and
    :class:`~.wire.WireError` when the answer was lost.

    One retry, for one case only: the gateway closed the connection unanswered *and* its socket
    is gone or replaced. A gateway that leaves on purpose (idle, SIGTERM) unlinks its socket
    first and answers every request it accepted, so an unanswered request there was never
    decided; a gateway that was killed leaves its socket behind, and that is a lost answer."""
    for attempt in (1, 2):
        connected = connect(files.socket, min(deadline, time.monotonic() + CONNECT_SECONDS))
        if connected is None:
            connected = start_and_connect(files, spec, min(deadline, time.monotonic() + START_SECONDS))
            if connected is None:
                return None
        sock, inode = connected
        try:
            answer_by = min(deadline, time.monotonic() + ANSWER_SECONDS)
            return wire.exchange(sock, frame, answer_by, SILENCE_SECONDS)
        except wire.GatewayClosedError:
            if attempt == 2 or _socket_inode(files.socket) == inode:
                raise
        finally:
            sock.close()
    raise AssertionError("unreachable")


def _socket_inode(path: str) -> int | None:
    try:
        return os.lstat(path).st_ino
    except OSError:
        return None


def connect(path: str, deadline: float | None = None) -> tuple[wire.Socket, int] | None:
    """A socket connected to a gateway of our own user and the socket file's inode, or None
    (not running, or not to be trusted). A full listen queue is retried until ``deadline``."""
    try:
        inode = check_own_socket(path)  # the file whose owner was checked, for ask_gateway's retry
    except (FileNotFoundError, RuntimeDirError):
        return None
    give_up = time.monotonic() + CONNECT_SECONDS if deadline is None else deadline
    pause = 0.002
    while True:
        sock = wire.unix_socket()
        try:
            sock.settimeout(max(0.05, give_up - time.monotonic()))
            sock.connect(path)
            wire.check_peer(sock)
            return sock, inode
        except BlockingIOError:  # EAGAIN: the listen queue is full; the gateway is busy, not gone
            sock.close()
            if time.monotonic() + pause >= give_up:
                _RUN.why = "the resident gateway's listen queue stayed full"
                return None
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        except (OSError, wire.WireError):
            sock.close()
            return None


def query_gateway(spec: DeploymentSpec, op: str, timeout: float = 5.0) -> dict[str, object] | str:
    """Ask the running gateway of ``spec`` (``status``, ``stop``; never starts one); the answer or
    why there is none. Used by ``dsh-policy serve --status/--stop`` and ``dsh-policy doctor``."""
    try:
        files = gateway_files(spec, create=False)
    except RuntimeDirError as error:
        return str(error)
    connected = connect(files.socket)
    if connected is None:
        return f"no gateway answers on {files.socket}"
    sock, _ = connected
    try:
        return wire.exchange(sock, wire.encode_request(op, {}), time.monotonic() + timeout)
    except wire.WireError as error:
        return str(error)
    finally:
        sock.close()


def start_and_connect(
    files: GatewayFiles, spec: DeploymentSpec, deadline: float
) -> tuple[wire.Socket, int] | None:
    """Start this deployment's gateway unless one is starting (or leaving: it holds the lock until
    it is gone), and wait for its socket. Only the hook holding the start lock starts one."""
    process: subprocess.Popen[bytes] | None = None
    spawned = 0
    start_lock: int | None = None
    try:
        while time.monotonic() < deadline:
            connected = connect(files.socket, deadline)
            if connected is not None:
                return connected
            if process is not None and process.poll() is not None:
                if process.returncode != EXIT_ALREADY_RUNNING:
                    _RUN.why = f"the resident gateway could not start (exit {process.returncode})"
                    return None  # it could not start (a broken pack, ...): the slow path says why
                process = None  # another gateway won the race: wait for it
            if process is None and spawned < 2:
                if start_lock is None:
                    start_lock = _try_lock(files.start_lock)
                if start_lock is not None and not _lock_is_held(files.lock):
                    process = _spawn(files, spec, start_lock)
                    spawned += 1
            time.sleep(_POLL_SECONDS)
        _RUN.why = "no resident gateway answered in time after starting one"
        return None
    finally:
        if start_lock is not None:
            os.close(start_lock)  # releases it


def _try_lock(path: str) -> int | None:
    """An open descriptor holding ``path``'s ``flock``, or None when another process holds it."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _lock_is_held(path: str) -> bool:
    """True when a gateway process holds the deployment's lock (it is starting or serving)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases a lock we took
    return False


def _spawn(files: GatewayFiles, spec: DeploymentSpec, start_lock: int) -> subprocess.Popen[bytes] | None:
    """``dsh-policy serve`` for ``spec``, detached from this hook (own session, no inherited pipes:
    a harness waits for EOF on the hook's stdout, so the gateway must not hold it). It inherits
    the start lock and holds it until it holds the deployment's lock: a gateway that takes longer
    to start than this hook waits is still the only one started."""
    import subprocess

    idle = os.environ.get(IDLE_VARIABLE) or str(IDLE_EXIT_SECONDS)
    argv = [sys.executable, "-m", "dsh_policy.policy.cli", "serve", *spec.policy_argv(), "--idle-exit", idle]
    try:
        log = _open_log(files.log)
    except OSError:
        log = subprocess.DEVNULL
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd="/",
            start_new_session=True,
            close_fds=True,
            pass_fds=(start_lock,),
            env={**os.environ, START_LOCK_VARIABLE: str(start_lock)},
        )
    except OSError:
        return None
    finally:
        if isinstance(log, int) and log >= 0:
            os.close(log)


def _open_log(path: str) -> int:
    """The gateway log, appended to; restarted when it grows past a few MiB."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
    if os.fstat(fd).st_size > 4 * 1024 * 1024:
        os.close(fd)
        os.replace(path, path + ".1")
        fd = os.open(path, flags, 0o600)
    return fd


def _checked_answer(reply: dict[str, object]) -> safe_answers.Answer:
    """The gateway's answer as the process will emit it, or the safe answer if it is malformed."""
    code, out, err = reply.get("exit_code"), reply.get("stdout"), reply.get("stderr")
    if (
        code not in (safe_answers.EXIT_OK, safe_answers.EXIT_BLOCK)
        or not isinstance(out, str)
        or not isinstance(err, str)
    ):
        return _RUN.safe_answer("resident gateway sent a malformed answer")
    if code == safe_answers.EXIT_BLOCK and not err.strip():
        err = f"{safe_answers.FAIL_CLOSED_PREFIX}: blocked without a reason\n"
    exit_code = safe_answers.EXIT_OK if code == safe_answers.EXIT_OK else safe_answers.EXIT_BLOCK
    return safe_answers.Answer(exit_code, out, err)


def _write_answer(answer: safe_answers.Answer, *, raw_fds: bool = False) -> None:
    """Write the answer (UTF-8 whatever the locale); a closed stream is ignored: the exit code
    still refuses. ``sys.stdout``/``sys.stderr`` as the process has them (a caller running the
    hook in process may have replaced them), or, inside a signal handler, plain ``os.write``."""
    _RUN.emitting = answer.exit_code
    for fd, text in ((1, answer.stdout), (2, answer.stderr)):
        if not text:
            continue
        data = text.encode("utf-8", "backslashreplace")
        stream = None if raw_fds else (sys.stdout if fd == 1 else sys.stderr)
        try:
            if stream is None:
                while data:
                    data = data[os.write(fd, data) :]
            elif hasattr(stream, "buffer"):
                stream.buffer.write(data)
                stream.flush()
            else:
                stream.write(data.decode("utf-8"))
                stream.flush()
        except (OSError, ValueError):  # closed, or a broken pipe
            pass


def decide_in_process(
    argv: list[str],
    raw: bytes | None,
    delivery: dict[str, str] | None = None,
    deadline: float | None = None,
) -> int:
    """The slow path: the in-process adapter (:mod:`..in_process.adapter`) decides, reading
    ``raw`` when this client already consumed stdin. ``delivery`` (why no gateway answered) goes
    into the record; the decision must end by ``deadline`` (``time.monotonic``)."""
    import io

    from dsh_policy.policy.diagnostics import configure_logging
    from dsh_policy.policy.hooks.in_process import adapter

    configure_logging()
    if raw is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    if _RUN.console:  # the adapter's own watcher: a child under a memory limit and a deadline
        seconds = None if deadline is None else max(0.5, deadline - time.monotonic() - 0.25)
        supervised = adapter.process_main(argv, delivery=delivery, seconds=seconds)
        if supervised in (safe_answers.EXIT_OK, safe_answers.EXIT_BLOCK):
            return supervised
        return safe_answers.EXIT_BLOCK
    # The watchdog stays armed: a slow path that hangs past the budget is refused (SIGALRM)
    # rather than left to the harness's timeout, which Codex counts as a hook that let it run.
    code = adapter.main(argv, delivery=delivery, deadline=deadline)
    return code if code in (safe_answers.EXIT_OK, safe_answers.EXIT_BLOCK) else safe_answers.EXIT_BLOCK
