"""``dsh-policy redact-output``: the filter a rewritten Claude Code Bash call prints through.

:func:`~..review.secret_reads.wrap_command` makes the call's shell write everything (stdout and stderr)
into a private FIFO and starts this filter on it. The filter reads the output as it comes, sends
it to the deployment's resident gateway in chunks of whole lines for the post-execute review
(:mod:`..review.output_review`), and prints what comes back: the chunk with secrets replaced and a notice,
a notice in place of a withheld chunk, or the chunk unchanged. It never prints output that was
not reviewed: when neither the gateway nor the in-process policy can review a chunk, a notice
takes its place.

Chunks: what has arrived when the output pauses (:data:`PAUSE_SECONDS`), cut at the last newline,
or :data:`CHUNK_BYTES` of whole lines, or everything at the end. A secret split across two chunks
(rare: a multi-line key printed slowly) may escape a detector; the secrets pack withholds any
chunk that holds a private-key marker.

Standard library only until a chunk has to be reviewed in process. It lives with the gateway's
client side because it is one: it asks the resident gateway over the same wire as the hook client.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time

from dsh_policy.policy.hooks.gateway import client, wire
from dsh_policy.policy.hooks.gateway.runtime_paths import DeploymentSpec, RuntimeDirError, gateway_files

TYPE_CHECKING = False  # not typing's: the filter starts on every rewritten Bash call
if TYPE_CHECKING:
    from dsh_policy.policy.decide import Policy

PAUSE_SECONDS = 0.1
CHUNK_BYTES = 256 * 1024
MAX_LINE_BYTES = 1024 * 1024  # a "line" longer than this is cut anyway
REVIEW_SECONDS = 20.0
_READ = 64 * 1024
_OWN_OPTIONS = {"--call": "call", "--session": "session", "--fifo": "fifo", "--harness": "harness"}


def redact_output_argv(spec: DeploymentSpec) -> tuple[str, ...]:
    """How a rewritten Bash call runs ``dsh-policy redact-output`` for ``spec`` (the same
    interpreter and options as the hook, so it reaches the same gateway)."""
    return (sys.executable, "-m", "dsh_policy.policy.cli", "redact-output", *spec.policy_argv())


class FilterOptions:
    """``redact-output``'s command line: the hook's policy options plus the call it filters."""

    __slots__ = ("call", "fifo", "harness", "hook", "session")

    def __init__(self, hook: client.HookOptions) -> None:
        self.hook = hook
        self.call = ""
        self.session = ""
        self.fifo: str | None = None
        self.harness = "claude-code"


def parse_filter_options(argv: list[str]) -> FilterOptions | None:
    """The options, or None when they are not a valid command line."""
    rest: list[str] = []
    own: dict[str, str] = {}
    index = 0
    while index < len(argv):
        word = argv[index]
        name, has_value, inline = word.partition("=")
        if name in _OWN_OPTIONS:
            if has_value:
                own[_OWN_OPTIONS[name]] = inline
            elif index + 1 < len(argv):
                index += 1
                own[_OWN_OPTIONS[name]] = argv[index]
            else:
                return None
        else:
            rest.append(word)
        index += 1
    hook = client.parse_options([own.get("harness", "claude-code"), *rest])
    if hook is None:
        return None
    options = FilterOptions(hook)
    options.call = own.get("call", "")
    options.session = own.get("session", "")
    options.fifo = own.get("fifo")
    options.harness = hook.harness
    return options


class Reviewer:
    """Sends chunks to the gateway; falls back to reviewing in process; never returns raw
    output it could not review."""

    def __init__(self, options: FilterOptions) -> None:
        self.options = options
        self.spec: DeploymentSpec = options.hook.spec()
        self._local: Policy | None = None  # loaded on the slow path only

    def review(self, data: bytes) -> bytes:
        """The reviewed chunk, ready to print."""
        frame = wire.encode_request(
            "redact",
            {"harness": self.options.harness, "session": self.options.session, "call": self.options.call},
            data,
        )
        try:
            reply = self._ask(frame)
        except wire.WireError as error:
            return _notice(len(data), f"the gateway's answer was lost: {error}")
        if reply is None:
            return self._review_in_process(data)
        action, text = reply.get("action"), reply.get("text")
        if action == "pass":
            return data
        if action not in ("redact", "block") or not isinstance(text, str):
            return _notice(len(data), "the gateway sent a malformed answer")
        return text.encode("utf-8", "backslashreplace")

    def _ask(self, frame: bytes) -> dict[str, object] | None:
        if self._local is not None:
            return None
        try:
            files = gateway_files(self.spec)
        except RuntimeDirError:
            return None
        return client.ask_gateway(files, self.spec, frame, time.monotonic() + REVIEW_SECONDS)

    def _review_in_process(self, data: bytes) -> bytes:
        try:
            return self._local_review(data)
        except Exception as exc:  # nothing could review it: it is not printed
            return _notice(len(data), f"{type(exc).__name__}: {exc}")

    def _local_review(self, data: bytes) -> bytes:
        from dsh_policy.policy.hooks.review.output_review import PendingCalls, review_chunk

        policy = self._local_policy()
        call = PendingCalls().find(self.options.call, self.options.session)
        reviewed, _ = review_chunk(policy, call, data.decode("utf-8", "replace"))
        return data if reviewed.action == "pass" else reviewed.text.encode("utf-8", "backslashreplace")

    def _local_policy(self) -> Policy:
        """The deployment's policy, loaded here once (the slow path)."""
        from dsh_policy.policy.config import policy_sources
        from dsh_policy.policy.decide import Policy
        from dsh_policy.policy.diagnostics import configure_logging
        from dsh_policy.policy.loading import LoadFailure

        if isinstance(self._local, Policy):
            return self._local
        configure_logging()
        spec = self.spec
        sources = policy_sources(
            list(spec.packs),
            config=spec.config,
            param_flags=list(spec.params),
            engine=spec.engine,
            shadow=spec.shadow,
        )
        if isinstance(sources, list):
            raise RuntimeError("cannot load policy: " + "; ".join(str(e) for e in sources[:3]))
        built = sources.build()
        if isinstance(built, LoadFailure):
            raise RuntimeError("cannot load policy: " + "; ".join(str(e) for e in built.errors[:3]))
        self._local = Policy(built)
        return self._local


def _notice(size: int, why: str) -> bytes:
    return f"[dsh-policy withheld {size} bytes of this output: it could not be reviewed ({why})]\n".encode(
        "utf-8", "backslashreplace"
    )


def _open_source(fifo: str | None) -> int:
    """The descriptor to read the output from: the FIFO (removed once open) or stdin."""
    if fifo is None:
        return 0
    fd = os.open(fifo, os.O_RDONLY)  # waits for the shell to open the writing end
    with contextlib.suppress(OSError):
        os.unlink(fifo)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.dirname(fifo))
    return fd


def _write(data: bytes) -> None:
    while data:
        data = data[os.write(1, data) :]


def split_chunk(buffer: bytes, *, final: bool, paused: bool) -> tuple[bytes, bytes]:
    """(what to review now, what to keep waiting for): whole lines only, unless this is the
    end, the buffer is full without a newline, or the output paused on a partial line for long."""
    if not buffer:
        return b"", b""
    if final:
        return buffer, b""
    if len(buffer) < CHUNK_BYTES and not paused:
        return b"", buffer
    cut = buffer.rfind(b"\n") + 1
    if cut == 0:
        return (buffer, b"") if len(buffer) >= MAX_LINE_BYTES else (b"", buffer)
    return buffer[:cut], buffer[cut:]


def pump(source: int, reviewer: Reviewer) -> None:
    """Read ``source`` to its end, printing every chunk as reviewed."""
    buffer = b""
    last_data = time.monotonic()
    while True:
        ready, _, _ = select.select([source], [], [], PAUSE_SECONDS)
        if ready:
            data = os.read(source, _READ)
            if not data:
                break
            buffer += data
            last_data = time.monotonic()
            paused = False
        else:
            paused = bool(buffer) and time.monotonic() - last_data >= PAUSE_SECONDS
        long_pause = paused and time.monotonic() - last_data >= 10 * PAUSE_SECONDS
        chunk, buffer = split_chunk(buffer, final=False, paused=paused)
        if not chunk and long_pause:
            chunk, buffer = buffer, b""  # a prompt without a newline: show it after a while
        if chunk:
            _write(reviewer.review(chunk))
    chunk, _ = split_chunk(buffer, final=True, paused=True)
    if chunk:
        _write(reviewer.review(chunk))


USAGE = """\
usage: dsh-policy redact-output [--harness claude-code|codex] [--call ID] [--session ID] [--fifo PATH]
                                [the hook's options: --config FILE, --pack PACK, --param K=V, ...]

Filter a command's output through the deployment's post-execute review (secrets redacted, blocked
output withheld) and print what may reach the model. Hooks start it: a Claude Code Bash call whose
command names a file holding a secret is rewritten to print through it. Reads --fifo PATH (else
stdin); output that could not be reviewed is never printed. Exit 0 after the output ended, 2 when
it could not be filtered at all.
"""


def main(argv: list[str]) -> int:
    """Entry point; exit 0 after the output ended, 2 when it could not be filtered at all
    (``--help``: the usage, exit 0)."""
    if argv[:1] in (["-h"], ["--help"]):
        sys.stdout.write(USAGE)
        return 0
    for name in ("SIGTERM", "SIGHUP", "SIGINT", "SIGPIPE"):
        # Dying here prints nothing more: unreviewed output never reaches the model.
        signal.signal(getattr(signal, name), lambda *_: os._exit(2))
    options = parse_filter_options(argv)
    if options is None:
        sys.stderr.write("dsh-policy redact-output: bad options; output withheld\n")
        return 2
    try:
        source = _open_source(options.fifo)
        pump(source, Reviewer(options))
    except OSError as error:
        with contextlib.suppress(OSError):
            _write(f"[dsh-policy withheld the rest of this output: {error.strerror}]\n".encode())
        return 2
    return 0
