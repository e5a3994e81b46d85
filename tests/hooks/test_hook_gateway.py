"""The resident gateway end to end: the same answers as the in-process adapter, its status, its
HTTP front, hot reload, and what killing it does (nothing acknowledged is lost, nothing slips
through, the next event brings it back)."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.hooks.gateway import client
from dsh_policy.policy.hooks.gateway.http_front import start_http
from dsh_policy.policy.hooks.gateway.policy_state import state_path
from dsh_policy.policy.hooks.gateway.runtime_paths import DeploymentSpec
from hook_testkit import PACK, PAYLOADS, StdinText, payload
from resident_kit import (
    CLI,
    FakeGateway,
    files_for,
    hook_argv,
    read_one_request,
    run_client,
    spec_for,
    start_gateway,
    status,
    stop_gateway,
    wait_for,
)

HARNESSES = ("claude-code", "codex")
ALL_PAYLOADS = [(path.parent.name, path.stem) for path in sorted(PAYLOADS.glob("*/*.json"))]


def _client_in_process(
    argv: list[str], raw: bytes, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    """``client.main`` in this process (no interpreter start per event)."""
    monkeypatch.setattr(sys, "stdin", StdinText(io.BytesIO(raw), encoding="utf-8"))
    capsys.readouterr()
    code = client.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# --- decisions ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("harness", "name"), ALL_PAYLOADS)
def test_the_gateway_answers_every_recorded_event_as_the_in_process_adapter(
    gateway_a, run_hook, monkeypatch, capsys, harness: str, name: str
) -> None:
    spec, pack, _ = gateway_a
    raw = (PAYLOADS / harness / f"{name}.json").read_bytes()
    expected = run_hook(harness, raw, pack=pack)
    monkeypatch.delenv("DSH_POLICY_GATEWAY")
    before = status(spec)["decisions"]  # type: ignore[index]
    argv = [harness, "--pack", str(pack), "--audit", str(spec.audit)]
    code, out, err = _client_in_process(argv, raw, monkeypatch, capsys)
    assert (code, out, err) == (expected.code, expected.stdout, expected.stderr)
    assert status(spec)["decisions"] == before + 1  # type: ignore[index]  # the gateway decided it


def test_status_names_the_policy_uptime_and_decisions(gateway_a) -> None:
    spec, pack, audit = gateway_a
    answer = status(spec)
    assert answer is not None
    loaded = Policy.load([pack])
    assert isinstance(loaded, Policy)
    assert answer["policy_digest"] == loaded.digest
    assert answer["ok"] is True and answer["uptime_s"] > 0 and isinstance(answer["decisions"], int)
    assert answer["audit"] == {"path": str(audit), "failure": None}
    assert answer["deployment"] == str(pack)


def test_the_socket_and_its_folder_are_private(gateway_a) -> None:
    spec, _, _ = gateway_a
    files = files_for(spec)
    assert stat.S_IMODE(os.stat(files.socket).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(files.folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(files.token).st_mode) == 0o600


def _http(spec: DeploymentSpec, path: str, body: bytes | None = None, token: str | None = "from-file") -> Any:
    answer = status(spec)
    assert answer is not None and answer["http"]
    if token == "from-file":
        token = Path(files_for(spec).token).read_text().strip()
    request = urllib.request.Request(
        f"http://{answer['http']}{path}", data=body, method="POST" if body else "GET"
    )
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_http_hooks_get_json_refusals_and_need_the_token(gateway_a) -> None:
    spec, _, _ = gateway_a
    rm_root = json.dumps(payload("claude-code", "pre_tool_use_bash_rm_root")).encode()
    code, document = _http(spec, "/hook/claude-code", rm_root)
    assert code == 200
    specific = document["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert specific["permissionDecisionReason"].endswith("[policy: hook-guard/never-rm-root]")
    assert _http(
        spec, "/hook/claude-code", json.dumps(payload("claude-code", "pre_tool_use_bash_ls")).encode()
    ) == (
        200,
        {},
    )
    assert _http(spec, "/hook/claude-code", b"{broken")[1]["continue"] is False
    assert _http(spec, "/hook/claude-code", rm_root, token=None)[0] == 401
    assert _http(spec, "/hook/claude-code", rm_root, token="wrong-token-wrong-token")[0] == 401
    code, document = _http(spec, "/status")
    assert code == 200 and document["policy_digest"].startswith("sha256:")


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to listen as another user")


@needs_root
def test_a_port_another_user_listens_on_is_refused(tmp_path: Path) -> None:
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # another user's listener (the socket belongs to whoever creates it)
        try:
            os.setgid(54321)
            os.setuid(54321)
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            os.write(writer, str(listener.getsockname()[1]).encode() + b"\n")
            time.sleep(60)
        finally:
            os._exit(0)
    try:
        os.close(writer)
        port = int(os.read(reader, 32))
        error = start_http(None, "127.0.0.1", port, str(tmp_path / "token"))  # type: ignore[arg-type]
        assert error == f"port {port} on 127.0.0.1 is held by uid 54321; refusing to share it"
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.close(reader)
    assert "loopback" in str(start_http(None, "10.0.0.1", 0, str(tmp_path / "token")))  # type: ignore[arg-type]


def test_an_edited_pack_is_reloaded_off_the_decision_path(gateway_a) -> None:
    spec, pack, _ = gateway_a
    before = status(spec)["policy_digest"]  # type: ignore[index]
    ls = payload("claude-code", "pre_tool_use_bash_ls")
    assert run_client(hook_argv("claude-code", "--audit", spec.audit or "", pack=pack), ls).code == 0
    text = pack.read_text().replace(
        "  rules:\n",
        "  rules:\n    - id: no-ls\n      stage: pre-execute\n      match: {tools: [shell]}\n"
        "      when: 'args.command.startsWith(\"ls\")'\n      decision: deny\n      message: ls is off\n",
        1,
    )
    original = pack.read_text()
    pack.write_text(text)
    try:
        reloaded = wait_for(
            lambda: status(spec)["policy_digest"] != before and status(spec), "the gateway to reload"
        )  # type: ignore[index]
        ran = run_client(hook_argv("claude-code", "--audit", spec.audit or "", pack=pack), ls)
        assert (ran.code, ran.stderr.strip()) == (2, "ls is off [policy: hook-guard/no-ls]")
        # A hook deciding in process later compares with the policy the gateway put in force.
        wait_for(lambda: _recorded_digest(spec) == reloaded["policy_digest"], "LOG.policy to follow")
    finally:  # the gateway is shared with other tests
        pack.write_text(original)
        wait_for(lambda: status(spec)["policy_digest"] == before, "the gateway to reload back")  # type: ignore[index]
    # Written just after the swap (on the reload thread), so it may trail the status by a moment.
    wait_for(lambda: _recorded_digest(spec) == before, "LOG.policy to follow back")


def _recorded_digest(spec: DeploymentSpec) -> str:
    """The policy recorded beside the log (``LOG.policy``), which the in-process hook compares with."""
    return json.loads(state_path(spec.audit or "").read_text())["digest"]


def test_its_audit_log_verifies(gateway_a) -> None:
    _spec, _, audit = gateway_a
    done = subprocess.run([*CLI, "verify", str(audit)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


# --- killing it ------------------------------------------------------------------------------------


def _records(audit: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in audit.read_text().splitlines() if line.strip()]


def _decisions(audit: Path) -> list[dict[str, Any]]:
    return [r for r in _records(audit) if r["kind"] in ("tool_result", "hook_event", "step_rejected")]


def test_sigkill_loses_no_acknowledged_record_lets_nothing_through_and_the_next_event_restarts(
    tmp_path: Path,
) -> None:
    pack, audit = tmp_path / "pack.yaml", tmp_path / "audit.jsonl"
    shutil.copy(PACK, pack)
    spec = spec_for(pack=pack, audit=audit)
    argv = hook_argv("claude-code", "--audit", str(audit), pack=pack)
    env = {"DSH_POLICY_GATEWAY_IDLE": "120"}
    events = ["pre_tool_use_bash_ls", "pre_tool_use_bash_rm_root", "post_tool_use_bash_clean", "stop"]
    answers = [
        run_client(argv, payload("claude-code", name), env=env) for name in events
    ]  # first one starts it
    assert [ran.code for ran in answers] == [0, 2, 0, 0]
    first = status(spec)
    assert first is not None
    # Every answered event is in the log already, before anything is closed or synced.
    assert len(_decisions(audit)) == len(events)

    # Freeze it, let a hook send it a call, then kill it: that call must be refused.
    os.kill(first["pid"], signal.SIGSTOP)
    try:
        in_flight = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert in_flight.stdin is not None
        in_flight.stdin.write(json.dumps(payload("claude-code", "pre_tool_use_bash_ls")).encode())
        in_flight.stdin.close()
        wait_for(lambda: _waiting_for_an_answer(in_flight.pid), "the hook to wait on the frozen gateway")
    finally:  # never leave a frozen gateway behind, whatever failed
        os.kill(first["pid"], signal.SIGKILL)
    code, err = in_flight.wait(timeout=60), in_flight.stderr.read()  # type: ignore[union-attr]
    if code == 2:  # killed within the client's silence bound: the lost answer is a refusal
        assert b"closed the connection before answering" in err
        assert in_flight.stdout.read() == b""  # type: ignore[union-attr]
    else:  # frozen past client.SILENCE_SECONDS first: decided in process, and the record says so
        assert code == 0
        assert any(r.get("delivery", {}).get("path") == "in-process" for r in _records(audit))

    # The socket is stale now; the next event starts a new gateway and is decided by it.
    ran = run_client(argv, payload("claude-code", "pre_tool_use_bash_rm_root"), env=env)
    assert ran.code == 2 and ran.stderr.strip().endswith("[policy: hook-guard/never-rm-root]")
    second = status(spec)
    assert second is not None and second["pid"] != first["pid"]
    assert len(_decisions(audit)) >= len(events) + 1  # the frozen call may or may not have been recorded

    # A log deleted under the gateway would swallow records: it leaves, and the next event's
    # gateway starts a new log.
    moved_to = tmp_path / "before"
    moved_to.mkdir()
    for item in tmp_path.glob("audit.jsonl*"):  # the log and its side files (anchor, lock, ...)
        shutil.move(item, moved_to / item.name)
    wait_for(lambda: status(spec) is None, "the gateway to leave its removed log")
    assert run_client(argv, payload("claude-code", "pre_tool_use_bash_ls"), env=env).code == 0
    third = status(spec)
    assert third is not None and third["pid"] != second["pid"]
    assert len(_decisions(audit)) == 1
    moved = moved_to / "audit.jsonl"
    done = subprocess.run([*CLI, "verify", str(moved)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr  # every record it took is there, chained

    # A clean stop (SIGTERM) leaves a closing checkpoint and a log that verifies.
    os.kill(third["pid"], signal.SIGTERM)
    wait_for(lambda: not os.path.exists(files_for(spec).socket), "the gateway to leave")
    wait_for(lambda: _records(audit)[-1]["kind"] == "checkpoint", "the closing checkpoint")
    done = subprocess.run([*CLI, "verify", str(audit)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def _waiting_for_an_answer(pid: int) -> bool:
    """True once ``pid`` sleeps waiting on its socket (it sent its request: its other waits are
    a blocking read of stdin, which it finished); where the kernel does not say, after a pause."""
    try:
        wchan = Path(f"/proc/{pid}/wchan").read_text().strip()
    except OSError:
        time.sleep(1.0)
        return True
    return wchan.startswith(("unix_stream_read", "poll_schedule_timeout", "do_sys_poll", "do_poll"))


# --- many hooks, many deployments --------------------------------------------------------------------


def test_concurrent_first_use_starts_one_gateway_and_deployments_stay_apart(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    specs = []
    for folder in (one, two):
        folder.mkdir()
        (folder / "gateway.yaml").write_text(
            f"apiVersion: dsh-policy/v1\nkind: Gateway\nmetadata: {{name: t}}\nspec:\n  packs: [{PACK}]\n"
        )
        specs.append(spec_for(pack=None, config=folder / "gateway.yaml"))
    env = {"DSH_POLICY_GATEWAY_IDLE": "60"}
    rm_root = json.dumps(payload("codex", "pre_tool_use_bash_rm_root")).encode()
    procs = [
        subprocess.Popen(
            [*CLI, "hook", "codex", "--config", str(folder / "gateway.yaml")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},
        )
        for folder in (one, one, one, one, two)
    ]
    results = [proc.communicate(rm_root, timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [2] * 5
    assert all(err.decode().strip().endswith("[policy: hook-guard/never-rm-root]") for _, err in results)
    first, second = status(specs[0]), status(specs[1])
    assert first is not None and second is not None
    assert first["pid"] != second["pid"] and first["key"] != second["key"]
    assert first["deployment"] == str(one / "gateway.yaml")
    assert Path(files_for(specs[0]).lock).read_text().strip() == str(first["pid"])
    serving = [pid for pid in _serve_processes() if str(one / "gateway.yaml").encode() in _cmdline(pid)]
    assert serving == [first["pid"]]
    for spec in specs:
        stop_gateway(spec)


def _serve_processes() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and b"serve" in _cmdline(int(p)).split(b"\0")]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_a_gateway_that_left_on_purpose_unanswered_is_retried_not_refused(tmp_path: Path) -> None:
    pack = tmp_path / "pack.yaml"
    shutil.copy(PACK, pack)
    spec = spec_for(pack=pack)
    path = files_for(spec).socket
    seen = threading.Event()

    def leave(conn: Any) -> None:  # like a gateway shutting down: unlink first, then drop the rest
        read_one_request(conn)
        os.unlink(path)
        conn.close()
        seen.set()

    fake = FakeGateway(path, leave)
    try:
        ran = run_client(
            hook_argv("claude-code", pack=pack),
            payload("claude-code", "pre_tool_use_bash_rm_root"),
            # Short: the test waits below for the gateway to leave by itself. Should it leave
            # before the hook's request, the hook decides in process, with the same answer.
            env={"DSH_POLICY_GATEWAY_IDLE": "1"},
        )
    finally:
        fake.sock.close()
    assert seen.is_set()
    assert ran.code == 2 and ran.stderr.strip().endswith("[policy: hook-guard/never-rm-root]")
    # A real gateway took over, and, started by a hook, it leaves by itself once idle.
    wait_for(lambda: not os.path.exists(path), "the idle gateway to leave")


def test_sigterm_and_sighup_storms_end_in_a_clean_exit(tmp_path: Path) -> None:
    # A handler that took a lock (Event.set) could deadlock on the lock the interrupted main
    # thread held inside Event.wait, leaving a gateway that never leaves and never closes its log.
    pack, audit = tmp_path / "pack.yaml", tmp_path / "audit.jsonl"
    shutil.copy(PACK, pack)
    spec = spec_for(pack=pack, audit=audit)
    for _ in range(3):
        process = start_gateway(spec)
        for _ in range(20):  # SIGHUPs land all over the serving loop, as a reload storm would
            process.send_signal(signal.SIGHUP)
            time.sleep(0.005)
        for _ in range(5):  # and a stop asked for more than once
            process.send_signal(signal.SIGTERM)
        try:
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    done = subprocess.run([*CLI, "verify", str(audit)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    closing = [line for line in audit.read_text().splitlines() if '"reason":"close"' in line]
    assert len(closing) == 3  # each gateway wrote its closing checkpoint


def test_the_serving_loops_signal_handlers_take_no_lock() -> None:
    # They run in the main thread wherever it was interrupted, for instance holding the lock of
    # the event it waits on; so they may only flip flags, which the loop reads every tick.
    from dsh_policy.policy.hooks.gateway.server import _SignalFlags

    flags = _SignalFlags()
    waited_on = threading.Event()

    def interrupted_inside_wait() -> None:
        with waited_on._cond:  # type: ignore[attr-defined]  # what Event.wait holds
            flags.on_stop(signal.SIGTERM, None)
            flags.on_reload(signal.SIGHUP, None)

    thread = threading.Thread(target=interrupted_inside_wait, daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert flags.stop and flags.reload
