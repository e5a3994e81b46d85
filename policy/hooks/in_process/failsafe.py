"""Every way a ``dsh-policy hook`` process can end gives the event's safe answer.

Both harnesses treat a hook that dies of a signal, times out, or exits with anything but 0 or 2 as
a *non-blocking* error: the tool call runs. So the console-script hook is split in two:

- this process (the *watcher*) reads the event, works out the event's safe answer before anything
  can go wrong, installs handlers for SIGTERM, SIGHUP, SIGINT and SIGPIPE that write that answer
  and exit, and forks;
- the child decides (loads the packs, evaluates, writes the audit record) under a memory limit
  (``RLIMIT_AS``) and sends its reply back through a pipe.

The watcher relays the child's reply, or gives the safe answer when the child fails in any way:
killed by the memory limit or the kernel's OOM killer, aborted inside a C library, over its time
budget (the watcher kills it), or silent. Only a SIGKILL of the watcher itself escapes, which no
process can catch; the example settings add the harness's own fail-closed switch for that window
(Claude Code ``onFailure: "block"``) and a shell ``trap`` so the wrapping ``sh -c`` survives a
signal sent to the whole process group.

Standard library only, and nothing here allocates much: it must still work when the child
exhausted its memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import select
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

#: Address space a deciding child may use; exhaustion becomes the safe answer, not an OOM kill.
DEFAULT_MEMORY_BYTES: Final[int] = 3 * 1024 * 1024 * 1024
#: Wall-clock seconds a deciding child may take (start-up, pack loading, every stage, the audit
#: record); well under the example settings' 30 s hook timeout, after which harnesses fail open.
DEFAULT_DEADLINE_SECONDS: Final[float] = 20.0
MEMORY_VARIABLE: Final[str] = "DSH_POLICY_HOOK_MEMORY_MB"
DEADLINE_VARIABLE: Final[str] = "DSH_POLICY_HOOK_DEADLINE"
SIGNALS: Final[tuple[signal.Signals, ...]] = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGPIPE)
_EVENT: Final[re.Pattern[bytes]] = re.compile(rb'"hook_event_name"\s*:\s*"([A-Za-z]{1,32})"')


@dataclass(frozen=True, slots=True)
class Reply:
    """What the process emits: exit code, stdout, stderr (already spelled for the harness)."""

    code: int
    stdout: str = ""
    stderr: str = ""


SafeAnswer = Callable[[str], Reply]


def _refusal(reason: str) -> Reply:
    return Reply(2, "", f"dsh-policy failed closed: {reason}\n")


class _State:
    """The one watcher per process: the safe answer, the child, whether output has started."""

    safe: SafeAnswer = staticmethod(_refusal)
    child: int = 0
    emitting: bool = False
    watcher: int = 0


def _write_all(fd: int, text: str) -> None:
    data = text.encode("utf-8", "backslashreplace")
    while data:
        try:
            written = os.write(fd, data)
        except InterruptedError:
            continue
        except OSError:
            return  # a closed pipe: the exit code still carries the answer
        data = data[written:]


def emit(reply: Reply) -> int:
    """Write ``reply`` once; a signal arriving meanwhile exits 2 (a refusal in every harness)."""
    _State.emitting = True
    if reply.stdout:
        _write_all(1, reply.stdout)
    if reply.stderr:
        _write_all(2, reply.stderr)
    return reply.code


def _on_signal(number: int, _frame: object) -> None:
    if os.getpid() != _State.watcher:
        os._exit(3)  # a child between fork and resetting its handlers: the watcher answers
    name = signal.Signals(number).name
    if _State.child:
        with contextlib.suppress(OSError):
            os.kill(_State.child, signal.SIGKILL)
    if _State.emitting:
        # Half an answer may be out: exit 2 refuses whatever the event (stdout is then ignored).
        _write_all(2, f"\ndsh-policy failed closed: {name} while answering\n")
        os._exit(2)
    try:
        reply = _State.safe(f"interrupted by {name} before deciding")
    except BaseException:
        reply = _refusal(f"interrupted by {name} before deciding")
    _State.emitting = True
    os._exit(emit(reply) if reply.code in (0, 2) else 2)


def install_signal_handlers() -> None:
    """From here on SIGTERM, SIGHUP, SIGINT and SIGPIPE give the safe answer and exit."""
    _State.watcher = os.getpid()
    for number in SIGNALS:
        signal.signal(number, _on_signal)


def set_safe_answer(answer: SafeAnswer) -> None:
    """The event is known: signals and failures now give *its* safe answer."""
    _State.safe = answer


def sniff_event(raw: bytes) -> str | None:
    """The event a payload claims, read without parsing it (so the safe answer is known before
    anything can fail); ``None`` when absent or ambiguous (then: refuse with exit 2)."""
    found = {match.group(1).decode("ascii") for match in _EVENT.finditer(raw[: 1 << 20])}
    return found.pop() if len(found) == 1 else None


def _limits() -> tuple[int, float]:
    memory = DEFAULT_MEMORY_BYTES
    deadline = DEFAULT_DEADLINE_SECONDS
    with contextlib.suppress(ValueError):
        memory = int(os.environ.get(MEMORY_VARIABLE, "")) * 1024 * 1024 or memory
    with contextlib.suppress(ValueError):
        deadline = float(os.environ.get(DEADLINE_VARIABLE, "")) or deadline
    return memory, deadline


def deadline_seconds() -> float:
    """The wall-clock budget of one deciding child (``DSH_POLICY_HOOK_DEADLINE`` or the default)."""
    return _limits()[1]


def supervise(decide: Callable[[], Reply], seconds: float | None = None) -> int:
    """Run ``decide`` in a child under the memory limit and the deadline (at most ``seconds``,
    when given); emit its reply, or the safe answer when it fails; return the exit code (0 or 2)."""
    memory, deadline = _limits()
    if seconds is not None:
        deadline = min(deadline, seconds)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: decide, send the reply, never return into the caller's stack
        code = 3
        try:
            os.close(read_end)
            for number in SIGNALS:
                signal.signal(number, signal.SIG_DFL)
            _limit_memory(memory)
            reply = decide()
            _write_all(
                write_end, json.dumps({"code": reply.code, "stdout": reply.stdout, "stderr": reply.stderr})
            )
            code = 0
        except BaseException:
            code = 3
        finally:
            os._exit(code)
    _State.child = pid
    os.close(write_end)
    data, timed_out = _read_until(read_end, time.monotonic() + deadline)
    os.close(read_end)
    if timed_out:
        _kill(pid)
    status = _reap(pid)
    _State.child = 0
    reply = _reply(data, status, timed_out, deadline, memory)
    return emit(reply)


def _limit_memory(limit: int) -> None:
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        if soft == resource.RLIM_INFINITY or soft > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        pass  # the platform has no such limit: the watcher still fails closed on an OOM kill


def _read_until(fd: int, deadline: float) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b"".join(chunks), True
        try:
            ready, _, _ = select.select([fd], [], [], left)
        except InterruptedError:
            continue
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)


def _kill(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _reap(pid: int) -> int:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue


def _reply(data: bytes, status: int, timed_out: bool, deadline: float, memory: int) -> Reply:
    if timed_out:
        return _State.safe(f"the decision did not finish within its {deadline:g} s budget")
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        why = "out of memory or killed" if name == "SIGKILL" else f"died of {name}"
        return _State.safe(f"the deciding process {why} (memory limit {memory // (1024 * 1024)} MiB)")
    try:
        document = json.loads(data)
        reply = Reply(int(document["code"]), str(document["stdout"]), str(document["stderr"]))
    except (ValueError, KeyError, TypeError):
        return _State.safe("the deciding process ended without an answer")
    if reply.code not in (0, 2):
        return _State.safe(f"the deciding process answered exit code {reply.code}")
    return reply


def stdin_bytes(limit: int) -> bytes:
    """Read at most ``limit`` bytes of stdin (EINTR-safe; stdin may be closed)."""
    try:
        return sys.stdin.buffer.read(limit)
    except (OSError, ValueError):
        return b""
