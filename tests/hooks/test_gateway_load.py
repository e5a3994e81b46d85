"""The resident gateway under load, one test per row of issue 26's table, in moderate sizes
(``benchmarks/bench_gateway_load.py`` runs the full ones). Loopback only, every wait bounded;
figures that depend on the machine's load are not asserted as latencies, only as bounds that a
hung or thread-per-connection server would miss by far."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.hooks.gateway import client, wire
from dsh_policy.policy.hooks.gateway.front_limits import FrontLimits
from dsh_policy.policy.hooks.gateway.fronts import Fronts
from dsh_policy.policy.hooks.gateway.http_front import start_http
from dsh_policy.policy.hooks.gateway.runtime_paths import DeploymentSpec
from dsh_policy.policy.hooks.gateway.service import GatewayService
from dsh_policy.policy.hooks.gateway.unix_front import bind_unix
from hook_testkit import PACK, payload
from resident_kit import (
    CLI,
    FakeGateway,
    files_for,
    hook_argv,
    read_one_request,
    run_client,
    spec_for,
    status,
)

EXPECTED = {"pre_tool_use_bash_ls": 0, "pre_tool_use_bash_rm_root": 2}


# --- clients of our own, as the benchmark's ------------------------------------------------------


async def _socket_ask(path: str, name: str) -> tuple[float, int | None]:
    raw = json.dumps(payload("claude-code", name)).encode()
    frame = wire.encode_request("hook", {"harness": "claude-code", "request": os.urandom(8).hex()}, raw)
    started = time.monotonic()
    async with asyncio.timeout(120):
        reader, writer = await asyncio.open_unix_connection(path)
        writer.write(frame)
        await writer.drain()
        data = await reader.read()
        writer.close()
    while data.startswith(wire.HEARTBEAT):
        data = data[len(wire.HEARTBEAT) :]
    answer = wire._complete(data) if data else None  # the client's own parser
    return time.monotonic() - started, None if answer is None else int(answer["exit_code"])  # type: ignore[arg-type]


async def _http_ask(address: str, token: str, name: str) -> tuple[float, bool | None]:
    host, port = address.rsplit(":", 1)
    raw = json.dumps(payload("claude-code", name)).encode()
    head = (
        f"POST /hook/claude-code HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Length: {len(raw)}\r\nConnection: close\r\n\r\n"
    ).encode()
    started = time.monotonic()
    async with asyncio.timeout(120):
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(head + raw)
        await writer.drain()
        data = await reader.read()
        writer.close()
    if not data.startswith(b"HTTP/1.1 200 "):
        return time.monotonic() - started, None
    document = json.loads(data.partition(b"\r\n\r\n")[2] or b"{}")
    return time.monotonic() - started, document.get("hookSpecificOutput", {}).get(
        "permissionDecision"
    ) == "deny"


def _names(count: int) -> list[str]:
    return [list(EXPECTED)[index % 2] for index in range(count)]


# --- rows: 1,000 socket clients, 1,000 HTTP requests, benign calls denied under overload ------------


def test_a_burst_over_the_socket_is_queued_not_refused_and_no_benign_call_is_denied(gateway_a) -> None:
    spec, _, _ = gateway_a
    names = _names(300)  # the listen backlog was 5: 300 at once failed with EAGAIN

    async def burst() -> list[tuple[float, int | None]]:
        return await asyncio.gather(*(_socket_ask(files_for(spec).socket, name) for name in names))

    results = asyncio.run(burst())
    assert [code for _, code in results] == [EXPECTED[name] for name in names]  # ls never denied


def test_a_burst_over_http_is_answered_in_full(gateway_a) -> None:
    spec, _, _ = gateway_a
    answer = status(spec)
    assert answer is not None
    token = Path(files_for(spec).token).read_text().strip()
    names = _names(200)

    async def burst() -> list[tuple[float, bool | None]]:
        return await asyncio.gather(*(_http_ask(answer["http"], token, name) for name in names))

    results = asyncio.run(burst())
    assert [denied for _, denied in results] == [EXPECTED[name] == 2 for name in names]


def test_status_reports_the_load_and_doctor_names_a_gateway_falling_behind(gateway_a) -> None:
    from dsh_policy.policy.hooks.install.doctor import falling_behind

    spec, _, _ = gateway_a
    answer = status(spec)
    assert answer is not None
    load = answer["load"]
    assert load["decisions"]["workers"] >= 1 and isinstance(load["decisions"]["behind"], bool)
    assert load["connections"]["max"] >= 1000 and load["connections"]["per_peer"] >= 1
    quiet = {**answer, "load": {**load, "decisions": {**load["decisions"], "behind": False}}}
    assert falling_behind(quiet) is None
    behind = {**answer, "load": {**load, "decisions": {**load["decisions"], "behind": True}}}
    assert "falling behind" in str(falling_behind(behind))


# --- row: 50 concurrent real hook processes ----------------------------------------------------------


def test_concurrent_hook_processes_are_answered_by_the_gateway_not_in_process(gateway_a) -> None:
    spec, pack, audit = gateway_a
    before = status(spec)["decisions"]  # type: ignore[index]
    names = _names(8)
    procs = [
        subprocess.Popen(
            hook_argv("claude-code", "--audit", str(audit), pack=pack),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in names
    ]
    for proc, name in zip(procs, names, strict=True):
        proc.communicate(json.dumps(payload("claude-code", name)).encode(), timeout=120)
    assert [proc.returncode for proc in procs] == [EXPECTED[name] for name in names]
    assert status(spec)["decisions"] == before + len(names)  # type: ignore[index]  # none in process
    assert '"path":"in-process"' not in audit.read_text()


# --- rows: slowloris and idle connections ------------------------------------------------------------


@pytest.fixture
def fronts_in_this_process(tmp_path: Path) -> Iterator[tuple[Fronts, str, str, str]]:
    """The real front ends with short deadlines, in this process (so its threads can be counted)."""
    policy = Policy.load([PACK])
    assert isinstance(policy, Policy)
    service = GatewayService(
        DeploymentSpec(packs=(str(PACK),)), policy, auditor=None, writer=None, audit_path=None
    )
    limits = FrontLimits(header_seconds=1.0, idle_seconds=1.0, body_seconds=1.0, per_peer=64).resolved()
    unix_path = str(tmp_path / "g.sock")
    unix_sock, _ = bind_unix(unix_path, limits.backlog)
    http = start_http(service, "127.0.0.1", 0, str(tmp_path / "token"), limits.backlog)
    assert not isinstance(http, str)
    fronts = Fronts(service, limits, unix_sock, http, lambda: None)
    fronts.start()
    try:
        yield fronts, unix_path, f"127.0.0.1:{http.server_port}", (tmp_path / "token").read_text().strip()
    finally:
        fronts.stop(timeout=30)


def test_slow_and_idle_connections_are_closed_at_their_deadlines_and_cost_no_threads(
    fronts_in_this_process,
) -> None:
    fronts, unix_path, address, token = fronts_in_this_process
    threads_before = threading.active_count()
    host, port = address.rsplit(":", 1)

    async def slow(closed: list[float]) -> None:  # slowloris: a header byte now and then
        started = time.monotonic()
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            for byte in b"POST /hook/claude-code HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaa":
                writer.write(bytes([byte]))
                try:
                    async with asyncio.timeout(0.3):
                        if not await reader.read(100):
                            break
                except TimeoutError:
                    continue
        except ConnectionError:
            pass  # refused or evicted: closed too
        closed.append(time.monotonic() - started)
        writer.close()

    async def idle(closed: list[float]) -> None:
        started = time.monotonic()
        reader, writer = await asyncio.open_connection(host, int(port))
        with contextlib.suppress(ConnectionError):
            await reader.read()
        closed.append(time.monotonic() - started)
        writer.close()

    async def scenario() -> tuple[list[float], list[float], list[Any], int]:
        slow_closed: list[float] = []
        idle_closed: list[float] = []
        async with asyncio.timeout(60):
            flood = [asyncio.create_task(slow(slow_closed)) for _ in range(20)]
            flood += [asyncio.create_task(idle(idle_closed)) for _ in range(100)]  # past per_peer: evicts
            await asyncio.sleep(0.5)
            threads_during = threading.active_count()
            normal = [await _socket_ask(unix_path, "pre_tool_use_bash_ls") for _ in range(5)]
            normal += [await _http_ask(address, token, "pre_tool_use_bash_rm_root") for _ in range(5)]
            await asyncio.gather(*flood)
        return slow_closed, idle_closed, normal, threads_during

    slow_closed, idle_closed, normal, threads_during = asyncio.run(scenario())
    assert len(slow_closed) == 20 and len(idle_closed) == 100
    assert max(slow_closed) < 10 and max(idle_closed) < 10  # deadline 1 s; they used to hang forever
    # One thread per connection would be 120 more; the loop, the workers and nothing else.
    assert threads_during - threads_before <= fronts.limits.workers + 1
    assert [answer for _, answer in normal] == [0] * 5 + [True] * 5
    counts = fronts.table.status()
    assert counts["timed_out"] + counts["evicted"] + counts["refused"] >= 100 and counts["open"] <= 1


def test_a_peer_past_its_bound_evicts_its_own_idle_connections(fronts_in_this_process) -> None:
    fronts, unix_path, _, _ = fronts_in_this_process
    held = []
    try:
        for _ in range(fronts.limits.per_peer):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(unix_path)
            held.append(sock)
        _, code = asyncio.run(_socket_ask(unix_path, "pre_tool_use_bash_rm_root"))
        assert code == 2  # answered although this process already held per_peer connections
        assert fronts.table.status()["evicted"] >= 1
    finally:
        for sock in held:
            sock.close()


# --- row: a frozen gateway ------------------------------------------------------------------------------


def _hold_silently(requested: threading.Event) -> Any:
    def behaviour(conn: socket.socket) -> None:
        read_one_request(conn)
        requested.set()
        time.sleep(30)  # frozen: no answer, no heartbeat

    return behaviour


def test_a_silent_gateway_is_given_up_after_the_silence_bound_and_a_busy_one_is_waited_for(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "fake.sock")
    with FakeGateway(path, _hold_silently(threading.Event())):
        sock = wire.unix_socket()
        sock.connect(path)
        started = time.monotonic()
        with pytest.raises(wire.GatewaySilentError):
            wire.exchange(sock, wire.encode_request("status", {}), started + 30, 1.0)
        assert 1.0 <= time.monotonic() - started < 5.0  # not the 20 s it used to be
        sock.close()

    def busy(conn: socket.socket) -> None:  # alive: heartbeats for 2 s, then the answer
        read_one_request(conn)
        for _ in range(8):
            conn.sendall(wire.HEARTBEAT)
            time.sleep(0.25)
        conn.sendall(wire.encode_hook_reply(0, "", ""))
        conn.close()

    with FakeGateway(path, busy):
        sock = wire.unix_socket()
        sock.connect(path)
        answer = wire.exchange(sock, wire.encode_request("hook", {}), time.monotonic() + 30, 1.0)
        sock.close()
    assert answer == {"exit_code": 0, "stdout": "", "stderr": ""}


def test_a_frozen_gateway_means_deciding_in_process_and_the_record_says_so(tmp_path: Path) -> None:
    pack, audit = tmp_path / "pack.yaml", tmp_path / "audit.jsonl"
    shutil.copy(PACK, pack)
    spec = spec_for(pack=pack, audit=audit)
    requested = threading.Event()
    with FakeGateway(files_for(spec).socket, _hold_silently(requested)):
        ran = run_client(
            hook_argv("claude-code", "--audit", str(audit), pack=pack),
            payload("claude-code", "pre_tool_use_bash_rm_root"),
        )
    assert requested.is_set()
    assert ran.code == 2 and ran.stderr.strip().endswith("[policy: hook-guard/never-rm-root]")
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    decided = [r for r in records if r["kind"] in ("tool_result", "hook_event")]
    delivered = [r["delivery"] for r in decided if "delivery" in r]
    assert len(delivered) == 1 and delivered[0]["path"] == "in-process"
    assert f"sent nothing for {client.SILENCE_SECONDS:g} s" in delivered[0]["why"]
    assert len(delivered[0]["request"]) == 16  # the request the frozen gateway may have recorded too


# --- row: what the agent was told ---------------------------------------------------------------------


def test_a_lost_answer_is_recorded_as_what_the_agent_was_told(tmp_path: Path) -> None:
    pack, audit = tmp_path / "pack.yaml", tmp_path / "audit.jsonl"
    shutil.copy(PACK, pack)
    spec = spec_for(pack=pack, audit=audit)

    def decided_then_died(conn: socket.socket) -> None:  # as a gateway killed after recording
        read_one_request(conn)
        conn.close()

    with FakeGateway(files_for(spec).socket, decided_then_died):
        ran = run_client(
            hook_argv("claude-code", "--audit", str(audit), pack=pack),
            payload("claude-code", "pre_tool_use_bash_ls"),
            env={"DSH_POLICY_GATEWAY_IDLE": "30"},
        )
    assert ran.code == 2 and "closed the connection before answering" in ran.stderr
    notes = list(Path(files_for(spec).folder, files_for(spec).key + ".told").glob("*.json"))
    assert len(notes) == 1
    # The next gateway of the deployment records it.
    ls = run_client(
        hook_argv("claude-code", "--audit", str(audit), pack=pack),
        payload("claude-code", "pre_tool_use_bash_ls"),
        env={"DSH_POLICY_GATEWAY_IDLE": "30"},
    )
    assert ls.code == 0
    deadline = time.monotonic() + 60
    while not any('"hook_told"' in line for line in audit.read_text().splitlines()):
        assert time.monotonic() < deadline, "the note was never recorded"
        time.sleep(0.1)
    told = next(json.loads(line) for line in audit.read_text().splitlines() if '"hook_told"' in line)
    assert told["request"] == notes[0].stem and told["told"] == {"exit_code": 2, "action": "deny"}
    assert told["hook"] == {"harness": "claude-code", "event": "PreToolUse"}
    assert not notes[0].exists()
    shown = subprocess.run([*CLI, "log", str(audit)], capture_output=True, text=True, check=False)
    assert "TOLD-DENY" in shown.stdout and notes[0].stem in shown.stdout
    done = subprocess.run([*CLI, "verify", str(audit)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    subprocess.run([*CLI, "serve", *spec.policy_argv(), "--stop"], capture_output=True, check=False)


# --- row: SIGKILL with hooks running --------------------------------------------------------------------


def test_after_a_crash_concurrent_hooks_restart_exactly_one_gateway(tmp_path: Path) -> None:
    pack, audit = tmp_path / "pack.yaml", tmp_path / "audit.jsonl"
    shutil.copy(PACK, pack)
    spec = spec_for(pack=pack, audit=audit)
    argv = hook_argv("claude-code", "--audit", str(audit), pack=pack)
    env = {**os.environ, "DSH_POLICY_GATEWAY_IDLE": "60"}
    assert run_client(argv, payload("claude-code", "pre_tool_use_bash_ls"), env=env).code == 0
    first = status(spec)
    assert first is not None
    os.kill(first["pid"], signal.SIGKILL)  # leaves its socket behind, stale
    names = _names(8)
    procs = [
        subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        for _ in names
    ]
    seen: set[int] = set()
    for proc, name in zip(procs, names, strict=True):
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(payload("claude-code", name)).encode())
        proc.stdin.close()
    while any(proc.poll() is None for proc in procs):
        seen.update(_serving(audit))
        time.sleep(0.02)
    outputs = [proc.stderr.read() for proc in procs if proc.stderr is not None]
    for proc in procs:
        proc.wait(timeout=120)
    assert [proc.returncode for proc in procs] == [EXPECTED[name] for name in names], outputs
    seen.update(_serving(audit))
    seen.discard(first["pid"])
    assert len(seen) == 1, f"gateways started after the crash: {sorted(seen)}"
    subprocess.run([*CLI, "serve", *spec.policy_argv(), "--stop"], capture_output=True, check=False)


def _serving(audit: Path) -> set[int]:
    """``serve`` processes of the deployment logging to ``audit`` (every one that got as far as
    running, whether it then served or found the deployment served)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                words = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"serve" in words and str(audit).encode() in words and b"--stop" not in words:
                found.add(int(entry))
    return found
