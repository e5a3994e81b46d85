"""The resident gateway under load, attacked and broken on loopback, in one bounded run.

Run: ``python benchmarks/bench_gateway_load.py [--levels 1,10,50,200,1000] [--hooks 50]``.
Prints one line per measurement and writes ``benchmarks/results/gateway_load.json``. It measures:

- ``socket`` / ``http``: N concurrent clients (one asyncio task each, one event each: an allowed
  ``ls`` or a denied ``rm -rf /``), all started at once: answered, correct, p50/p99 latency, and
  the gateway's RSS, open fds and threads (highest seen while they ran);
- ``hooks``: N concurrent real hook processes (the console script, a fresh interpreter each):
  correct, p50/p99, and how many decided in process instead of through the gateway (fallbacks);
- ``floods``: slowloris (HTTP headers at 1 byte/s) and idle connections (connect, send nothing),
  with normal socket and HTTP requests measured meanwhile: when the gateway closed each flood
  connection, and what the flood cost it (threads, fds);
- ``frozen``: the gateway stopped (SIGSTOP): how long a hook waits before deciding in process;
- ``restart``: SIGKILL while 20 hooks run events in a loop: how many gateways started, and the
  slowest hook answer around the crash.

Everything is bounded in count and time, listens on loopback only, uses a private runtime folder,
and kills the processes it started by PID (a frozen gateway is continued, then killed).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "gateway_load.json"
PACK = ROOT / "tests" / "hooks" / "packs" / "hook-guard.yaml"
PAYLOADS = ROOT / "tests" / "hooks" / "payloads" / "claude-code"
SCRIPT = Path(sys.executable).parent / "dsh-policy"  # replaced in main() unless --script is given
CLI = [sys.executable, "-m", "dsh_policy.policy.cli"]
EVENTS = {  # payload -> (expected exit code over the socket, expected HTTP body check)
    "pre_tool_use_bash_ls": 0,
    "pre_tool_use_bash_rm_root": 2,
}
CLIENT_SECONDS = 60.0  # one client's own bound: a hung request counts as unanswered


def _proc(pid: int) -> dict[str, int]:
    """RSS (KiB), threads and open fds of ``pid``."""
    found = {"rss_kib": 0, "threads": 0, "fds": 0}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                found["rss_kib"] = int(line.split()[1])
            elif line.startswith("Threads:"):
                found["threads"] = int(line.split()[1])
        found["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        pass
    return found


class Sampler:
    """The highest RSS, threads and fds of a process while a block runs (sampled every 50 ms)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = {"rss_kib": 0, "threads": 0, "fds": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            for key, value in _proc(self.pid).items():
                self.peak[key] = max(self.peak[key], value)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _quantiles(samples: list[float]) -> dict[str, float | None]:
    if not samples:
        return {"p50_ms": None, "p99_ms": None, "max_ms": None}
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p99_ms": round(p99 * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


class Gateway:
    """One ``dsh-policy serve`` with HTTP on loopback, in a private runtime folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.runtime = folder / "runtime"
        self.runtime.mkdir(mode=0o700)
        self.audit = folder / "audit.jsonl"
        self.env = {
            **os.environ,
            "DSH_POLICY_RUNTIME_DIR": str(self.runtime),
            "DSH_POLICY_GATEWAY_IDLE": "300",
        }
        self.process: subprocess.Popen[bytes] | None = None

    def argv(self) -> list[str]:
        return ["--pack", str(PACK), "--audit", str(self.audit)]

    def start(self) -> None:
        self.process = subprocess.Popen(
            # the hook command's own installation: the gateway's key names it, so hooks of another
            # installation would start (and talk to) a gateway of their own
            [
                str(SCRIPT.parent / "python"),
                "-m",
                "dsh_policy.policy.cli",
                "serve",
                *self.argv(),
                "--http",
                "127.0.0.1:0",
                "--idle-exit",
                "300",
            ],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            status = self.status()
            if status is not None:
                return
            if self.process.poll() is not None:
                raise SystemExit(f"the gateway exited {self.process.returncode}")
            time.sleep(0.1)
        raise SystemExit("the gateway did not answer within 120 s")

    def status(self) -> dict[str, Any] | None:
        """The gateway's status over its socket (a ``serve --status`` process would cost seconds
        of imports on a loaded machine), or None when none answers."""
        from dsh_policy.policy.hooks.gateway import wire

        sockets = list(self.runtime.glob("*.sock"))
        if not sockets:
            return None
        sock = wire.unix_socket()
        try:
            sock.connect(str(sockets[0]))
            return wire.exchange(sock, wire.encode_request("status", {}), time.monotonic() + 30)
        except (OSError, wire.WireError):
            return None
        finally:
            sock.close()

    @property
    def socket(self) -> str:
        return str(next(self.runtime.glob("*.sock")))

    @property
    def pid(self) -> int:
        status = self.status()
        assert status is not None
        return int(status["pid"])

    def token(self) -> str:
        return next(self.runtime.glob("*.token")).read_text().strip()

    def http_port(self) -> int:
        status = self.status()
        assert status is not None
        return int(str(status["http"]).rsplit(":", 1)[1])

    def serving_pids(self) -> list[int]:
        """Every ``serve`` process of this deployment (to count restarts)."""
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                words = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"serve" in words and str(self.audit).encode() in words and b"--status" not in words:
                found.append(int(entry))
        return found

    def stop(self) -> None:
        for pid in self.serving_pids():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)
                os.kill(pid, signal.SIGKILL)
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)


# --- concurrent clients --------------------------------------------------------------------------


def _frame(raw: bytes) -> bytes:
    from dsh_policy.policy.hooks.gateway import wire

    return wire.encode_request("hook", {"harness": "claude-code", "request": os.urandom(8).hex()}, raw)


async def _socket_client(path: str, name: str, raw: bytes) -> tuple[float | None, bool]:
    from dsh_policy.policy.hooks.gateway import wire

    started = time.monotonic()
    try:
        async with asyncio.timeout(CLIENT_SECONDS):
            reader, writer = await asyncio.open_unix_connection(path, limit=1 << 20)
            writer.write(_frame(raw))
            await writer.drain()
            data = b""
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    return None, False
                data += chunk
                while data.startswith(wire.HEARTBEAT):
                    data = data[len(wire.HEARTBEAT) :]
                if data and not wire.HEARTBEAT.startswith(data):
                    answer = wire._complete(data)  # the client's own parser
                    if answer is not None:
                        writer.close()
                        return time.monotonic() - started, answer["exit_code"] == EVENTS[name]
    except (OSError, TimeoutError, wire.WireError):
        return None, False


async def _http_client(port: int, token: str, name: str, raw: bytes) -> tuple[float | None, bool]:
    started = time.monotonic()
    head = (
        f"POST /hook/claude-code HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(raw)}\r\nConnection: close\r\n\r\n"
    ).encode()
    try:
        async with asyncio.timeout(CLIENT_SECONDS):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(head + raw)
            await writer.drain()
            data = await reader.read()
            writer.close()
    except (OSError, TimeoutError):
        return None, False
    status_line, _, rest = data.partition(b"\r\n")
    body = rest.partition(b"\r\n\r\n")[2]
    if b" 200 " not in status_line:
        return None, False
    document = json.loads(body or b"{}")
    denied = document.get("hookSpecificOutput", {}).get("permissionDecision") == "deny"
    return time.monotonic() - started, denied == (EVENTS[name] == 2)


async def _burst(kind: str, count: int, gateway: Gateway) -> list[tuple[float | None, bool]]:
    names = list(EVENTS)
    raws = {name: (PAYLOADS / f"{name}.json").read_bytes() for name in names}
    if kind == "socket":
        path = gateway.socket
        jobs = [_socket_client(path, names[i % 2], raws[names[i % 2]]) for i in range(count)]
    else:
        port, token = gateway.http_port(), gateway.token()
        jobs = [_http_client(port, token, names[i % 2], raws[names[i % 2]]) for i in range(count)]
    return await asyncio.gather(*jobs)


def concurrent_clients(gateway: Gateway, levels: list[int]) -> list[dict[str, Any]]:
    rows = []
    for kind in ("socket", "http"):
        for count in levels:
            with Sampler(gateway.pid) as sampler:
                results = asyncio.run(_burst(kind, count, gateway))
            latencies = [seconds for seconds, _ in results if seconds is not None]
            row = {
                "kind": kind,
                "clients": count,
                "answered": len(latencies),
                "correct": sum(1 for seconds, ok in results if seconds is not None and ok),
                **_quantiles(latencies),
                "fallbacks": 0,  # these clients talk to the gateway only; see "hooks" for fallbacks
                **{f"peak_{key}": value for key, value in sampler.peak.items()},
            }
            print(json.dumps(row))
            rows.append(row)
    return rows


# --- real hook processes ---------------------------------------------------------------------------


def installed_script(folder: Path) -> Path:
    """This checkout built as a wheel and installed into a fresh venv under ``folder``: the hook
    command as a deployment runs it. The development venv is an editable install, whose import
    finder alone costs each hook process more CPU than the hook client itself, and where
    ``PYTHONDONTWRITEBYTECODE`` is set no bytecode is cached, so every process compiles the
    client again; pip byte-compiles a wheel's modules when it installs them."""
    wheels = folder / "wheel"
    venv = folder / "venv"
    pip_env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
        env=pip_env,
    )
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    wheel = next(wheels.glob("dsh_policy-*.whl"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "-q",
            "--no-deps",
            str(wheel),
        ],
        check=True,
        env=pip_env,
    )
    # The dependencies (for the gateway's start and the in-process path) are this venv's own:
    # a path entry, after the venv's site-packages, so the installed wheel is the one imported.
    site_packages = next((venv / "lib").glob("python3*/site-packages"))
    here = next(path for path in sys.path if path.endswith("site-packages"))
    (site_packages / "zz-bench-dependencies.pth").write_text(here + "\n")
    return venv / "bin" / "dsh-policy"


def _hook(gateway: Gateway, name: str) -> tuple[float, int, str]:
    raw = (PAYLOADS / f"{name}.json").read_bytes()
    started = time.monotonic()
    done = subprocess.run(
        [str(SCRIPT), "hook", "claude-code", *gateway.argv()],
        input=raw,
        capture_output=True,
        env=gateway.env,
        timeout=60,
        check=False,
    )
    return time.monotonic() - started, done.returncode, done.stderr.decode(errors="replace")


def _in_process_records(gateway: Gateway) -> int:
    count = 0
    for line in gateway.audit.read_text().splitlines():
        if '"path":"in-process"' in line:
            count += 1
    return count


def hook_processes(gateway: Gateway, count: int) -> dict[str, Any]:
    before = _in_process_records(gateway)
    names = [list(EVENTS)[i % 2] for i in range(count)]
    results: list[tuple[float, int, str] | None] = [None] * count

    def run(index: int) -> None:
        results[index] = _hook(gateway, names[index])

    with Sampler(gateway.pid) as sampler:
        threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    done = [r for r in results if r is not None]
    row = {
        "kind": "hooks",
        "processes": count,
        "correct": sum(1 for (_, code, _), name in zip(done, names, strict=True) if code == EVENTS[name]),
        "fallbacks": _in_process_records(gateway) - before,
        **_quantiles([seconds for seconds, _, _ in done]),
        **{f"peak_{key}": value for key, value in sampler.peak.items()},
    }
    print(json.dumps(row))
    return row


# --- floods ------------------------------------------------------------------------------------------


async def _flood_connection(port: int, slow: bool, closed_after: list[float]) -> None:
    started = time.monotonic()
    try:
        async with asyncio.timeout(CLIENT_SECONDS):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            if slow:
                for byte in b"POST /hook/claude-code HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200:
                    writer.write(bytes([byte]))
                    await writer.drain()
                    try:
                        async with asyncio.timeout(1.0):
                            if not await reader.read(1024):
                                break
                    except TimeoutError:
                        continue
            else:
                await reader.read()
            closed_after.append(time.monotonic() - started)
            writer.close()
    except (OSError, TimeoutError):
        closed_after.append(time.monotonic() - started)


async def _floods(gateway: Gateway, slow: int, idle: int) -> dict[str, Any]:
    port = gateway.http_port()
    slow_closed: list[float] = []
    idle_closed: list[float] = []
    tasks = [asyncio.create_task(_flood_connection(port, True, slow_closed)) for _ in range(slow)]
    tasks += [asyncio.create_task(_flood_connection(port, False, idle_closed)) for _ in range(idle)]
    await asyncio.sleep(1.0)  # the flood is in place
    normal: list[float] = []
    wrong = 0
    for index in range(20):
        for kind in ("socket", "http"):
            results = await _burst(kind, 1, gateway)
            seconds, ok = results[0]
            if seconds is None or not ok:
                wrong += 1
            else:
                normal.append(seconds)
        await asyncio.sleep(0.1 if index < 19 else 0)
    await asyncio.gather(*tasks)
    return {
        "slow": slow,
        "idle": idle,
        "slow_closed_within_s": round(max(slow_closed), 2) if slow_closed else None,
        "idle_closed_within_s": round(max(idle_closed), 2) if idle_closed else None,
        "normal_requests": len(normal),
        "normal_failed": wrong,
        "normal": _quantiles(normal),
    }


def floods(gateway: Gateway, slow: int, idle: int) -> dict[str, Any]:
    with Sampler(gateway.pid) as sampler:
        row = asyncio.run(_floods(gateway, slow, idle))
    row = {"kind": "floods", **row, **{f"peak_{key}": value for key, value in sampler.peak.items()}}
    print(json.dumps(row))
    return row


# --- a frozen gateway, a killed one -----------------------------------------------------------------------


def frozen(gateway: Gateway) -> dict[str, Any]:
    from dsh_policy.policy.hooks.gateway import client, wire

    pid = gateway.pid
    raw = (PAYLOADS / "pre_tool_use_bash_rm_root.json").read_bytes()
    os.kill(pid, signal.SIGSTOP)
    try:
        sock = wire.unix_socket()
        sock.connect(gateway.socket)
        started = time.monotonic()
        try:
            wire.exchange(sock, _frame(raw), started + 30, client.SILENCE_SECONDS)
            silent_after = None
        except wire.WireError:
            silent_after = time.monotonic() - started
        finally:
            sock.close()
        seconds, code, err = _hook(gateway, "pre_tool_use_bash_rm_root")
    finally:
        os.kill(pid, signal.SIGCONT)
    row = {
        "kind": "frozen",
        "gave_up_waiting_after_s": round(silent_after, 2) if silent_after is not None else None,
        "hook_total_s": round(seconds, 2),
        "hook_exit": code,
        "decided_by_policy": "never-rm-root" in err,
    }
    print(json.dumps(row))
    return row


def restart(gateway: Gateway, hooks: int = 20, seconds: float = 12.0) -> dict[str, Any]:
    """``hooks`` loops of hook processes; SIGKILL the gateway a few seconds in."""
    stop_at = time.monotonic() + seconds
    samples: list[tuple[float, float, int, str]] = []
    lock = threading.Lock()
    peak_gateways = 0

    def loop(index: int) -> None:
        name = list(EVENTS)[index % 2]
        while time.monotonic() < stop_at:
            began = time.monotonic()
            took, code, _ = _hook(gateway, name)
            with lock:
                samples.append((began, took, code, name))

    victim = gateway.pid
    threads = [threading.Thread(target=loop, args=(i,)) for i in range(hooks)]
    for thread in threads:
        thread.start()
    time.sleep(3.0)
    killed_at = time.monotonic()
    os.kill(victim, signal.SIGKILL)
    while any(thread.is_alive() for thread in threads):
        peak_gateways = max(peak_gateways, len([p for p in gateway.serving_pids() if p != victim]))
        time.sleep(0.05)
    around = [took for began, took, _, _ in samples if began + took >= killed_at]
    row = {
        "kind": "restart",
        "hooks": hooks,
        "answers": len(samples),
        "wrong": sum(1 for _, _, code, name in samples if code != EVENTS[name] and code != 2),
        "gateways_started_after_kill": peak_gateways,
        "slowest_answer_after_kill_s": round(max(around), 2) if around else None,
    }
    print(json.dumps(row))
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="1,10,50,200,1000")
    parser.add_argument("--hooks", type=int, default=50)
    parser.add_argument("--slow", type=int, default=200)
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument(
        "--script",
        type=Path,
        help="the dsh-policy command the hook rows run (default: this checkout's wheel, installed "
        "into a temporary venv, as a deployment runs it)",
    )
    args = parser.parse_args()
    levels = [int(word) for word in args.levels.split(",") if word]
    report: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_before": os.getloadavg(),
        },
    }
    global SCRIPT
    with tempfile.TemporaryDirectory(prefix="dsh-gw-load-") as folder:
        SCRIPT = args.script or installed_script(Path(folder) / "installed")
        report["machine"]["hook_command"] = str(SCRIPT)
        gateway = Gateway(Path(folder))
        try:
            gateway.start()
            report["clients"] = concurrent_clients(gateway, levels)
            report["hooks"] = hook_processes(gateway, args.hooks)
            report["floods"] = floods(gateway, args.slow, args.idle)
            report["frozen"] = frozen(gateway)
            report["restart"] = restart(gateway)
            done = subprocess.run([*CLI, "verify", str(gateway.audit)], capture_output=True, check=False)
            report["log_verifies"] = done.returncode == 0
        finally:
            gateway.stop()
    report["machine"]["load_after"] = os.getloadavg()
    print(json.dumps({"log_verifies": report.get("log_verifies"), "load": report["machine"]}))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
