"""Per-call overhead of ``dsh-policy mcp proxy`` over a direct connection to the same server, over
stdio and over Streamable HTTP, in one run.

Both transports are measured against the same SDK-built server (``tests/mcp_proxy/demo_server.py``,
its ``echo`` tool), with a raw client in this process (newline-delimited JSON-RPC on a pipe; HTTP
POSTs on one keep-alive connection, the stateless 2026-07-28 revision), so the client's own cost is
the same on both sides of each pair and the difference is the proxy's: parse, decide (pre-execute,
guard with self-protection, post-execute with the shipped secrets pack), audit (a ``tool_dispatch``
and a ``tool_result`` record in a fail-closed, hash-chained log, group-committed), relay. Every
path is called in turn within each round (interleaved), so a change in the machine's load hits
them all alike.

Printed per path: wall-clock p50 and p99; per proxy: its p50/p99 overhead over the direct path of
its transport (its percentile minus direct's), and the **CPU time per call** of the proxy process
(user + system from ``/proc/PID/stat`` over the timed calls), which scheduling delay on a loaded
machine does not inflate. Then ``--calls`` more calls go through each proxy and its resident memory
(``VmRSS``) is read before and after them. The load average is printed at the start and the end.

    .venv/bin/python benchmarks/bench_mcp.py [--samples 2000] [--calls 10000] [--transport stdio|http|both]
        [--baseline-src DIR] [--floor]

``--baseline-src DIR`` adds the proxies of another version of the code (``DIR`` holds a
``dsh_policy`` folder, e.g. ``git archive REV | tar -x -C DIR/dsh_policy``), interleaved with the
others, so a change's before and after are measured side by side in one run under one load.
``--floor`` adds a stdio relay that only copies lines (two threads, no parse, no policy): what the
extra process and its two pipe hops cost by themselves.

Needs the ``mcp`` extra (the server is built with the SDK): ``pip install 'dsh-policy[mcp]'``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Protocol

ROOT = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, str(ROOT / "tests" / "mcp_proxy" / "demo_server.py")]
PACKS = [ROOT / "tests" / "mcp_proxy" / "mcp-test.yaml", ROOT / "rules" / "secrets.yaml"]
PROTOCOL = "2026-07-28"
PROTOCOL_META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientInfo": {"name": "bench_mcp", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
ECHO = {"name": "echo", "arguments": {"text": "hello"}}
#: Issue 27's targets: the proxy's p50 overhead over a direct connection, per transport.
TARGET_P50_OVERHEAD_MS = {"stdio": 1.0, "http": 2.0}
RESULTS = ROOT / "benchmarks" / "results" / "mcp.json"
_SERVING = re.compile(r"serving http://([\d.]+):(\d+)/")
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
#: A relay that copies lines both ways and nothing else (``--floor``).
_FLOOR_RELAY = """
import subprocess, sys, threading
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def back():
    for line in iter(child.stdout.readline, b""):
        sys.stdout.buffer.write(line); sys.stdout.buffer.flush()
threading.Thread(target=back, daemon=True).start()
for line in iter(sys.stdin.buffer.readline, b""):
    child.stdin.write(line); child.stdin.flush()
child.stdin.close(); child.wait()
"""


class Path_(Protocol):
    pid: int

    def call(self) -> float: ...

    def close(self) -> None: ...


def _check(answer: dict[str, object]) -> None:
    result = answer.get("result")
    assert isinstance(result, dict) and not result.get("isError"), answer


class StdioSession:
    """A raw JSON-RPC client on a child's stdio."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.stdout: IO[bytes] = self.process.stdout
        self.pid = self.process.pid
        self.next_id = 0

    def request(self, method: str, params: dict[str, object]) -> dict[str, object]:
        self.next_id += 1
        body = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": method,
            "params": {**params, "_meta": PROTOCOL_META},
        }
        self.stdin.write(json.dumps(body).encode() + b"\n")
        self.stdin.flush()
        while True:
            answer = json.loads(self.stdout.readline())
            if answer.get("id") == self.next_id:
                return answer

    def call(self) -> float:
        started = time.perf_counter()
        answer = self.request("tools/call", ECHO)
        elapsed = time.perf_counter() - started
        _check(answer)
        return elapsed

    def close(self) -> None:
        self.stdin.close()
        self.process.wait(timeout=30)


class HttpSession:
    """A raw Streamable HTTP client (stateless revision) on one keep-alive connection."""

    def __init__(self, port: int, pid: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.pid = pid
        self.next_id = 0

    def request(self, method: str, params: dict[str, object]) -> dict[str, object]:
        self.next_id += 1
        body = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": method,
            "params": {**params, "_meta": PROTOCOL_META},
        }
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL,
            "Mcp-Method": method,
        }
        if "name" in params:
            headers["Mcp-Name"] = str(params["name"])
        try:
            self.connection.request("POST", "/mcp", body=json.dumps(body).encode(), headers=headers)
            response = self.connection.getresponse()
        except (ConnectionError, http.client.RemoteDisconnected):  # an idle keep-alive was closed
            self.connection.close()
            self.connection.request("POST", "/mcp", body=json.dumps(body).encode(), headers=headers)
            response = self.connection.getresponse()
        payload = response.read()
        if (response.getheader("Content-Type") or "").startswith("text/event-stream"):
            for line in payload.decode().splitlines():
                if line.startswith("data:") and line[5:].strip():
                    answer = json.loads(line[5:])
                    if answer.get("id") == self.next_id:
                        return answer
            raise AssertionError(f"no answer in the stream: {payload[:200]!r}")
        answer = json.loads(payload)
        assert isinstance(answer, dict), answer
        return answer

    def call(self) -> float:
        started = time.perf_counter()
        answer = self.request("tools/call", ECHO)
        elapsed = time.perf_counter() - started
        _check(answer)
        return elapsed

    def close(self) -> None:
        self.connection.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("the HTTP server exited before it listened")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


class Bench:
    """The paths of one run, their processes, and the clean-up of both."""

    def __init__(self, folder: Path, baseline_src: str | None) -> None:
        self.folder = folder
        self.baseline_env = {**os.environ, "PYTHONPATH": baseline_src} if baseline_src else None
        self.paths: dict[str, Path_] = {}
        self.processes: list[subprocess.Popen[bytes]] = []

    def proxy_argv(self, log: str) -> list[str]:
        argv = [sys.executable, "-m", "dsh_policy.policy.cli", "mcp", "proxy", "--name", "demo"]
        return [*argv, "--pack", *map(str, PACKS), "--audit", str(self.folder / log)]

    def add_stdio(self, floor: bool) -> None:
        self.paths["stdio direct"] = StdioSession(SERVER)
        self.paths["stdio proxy"] = StdioSession([*self.proxy_argv("stdio.jsonl"), "--", *SERVER])
        if self.baseline_env is not None:
            argv = [*self.proxy_argv("stdio-baseline.jsonl"), "--", *SERVER]
            self.paths["stdio baseline"] = StdioSession(argv, env=self.baseline_env)
        if floor:
            self.paths["stdio floor"] = StdioSession([sys.executable, "-c", _FLOOR_RELAY, *SERVER])

    def add_http(self) -> None:
        port = _free_port()
        server = subprocess.Popen(
            [*SERVER, "--http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.processes.append(server)
        _wait_for_port(port, server)
        upstream = f"http://127.0.0.1:{port}/mcp"
        self.paths["http direct"] = HttpSession(port, server.pid)
        self.paths["http proxy"] = self._http_proxy(upstream, "http.jsonl", None)
        if self.baseline_env is not None:
            self.paths["http baseline"] = self._http_proxy(upstream, "http-baseline.jsonl", self.baseline_env)

    def _http_proxy(self, upstream: str, log: str, env: dict[str, str] | None) -> HttpSession:
        argv = [*self.proxy_argv(log), "--upstream", upstream, "--listen", "127.0.0.1:0"]
        process = subprocess.Popen(argv, stderr=subprocess.PIPE, env=env)
        self.processes.append(process)
        assert process.stderr is not None
        line = process.stderr.readline().decode()
        found = _SERVING.search(line)
        if found is None:
            raise SystemExit(f"the HTTP proxy did not start: {line}")
        threading.Thread(target=process.stderr.read, daemon=True).start()  # never let it block
        return HttpSession(int(found.group(2)), process.pid)

    def close(self) -> None:
        for path in self.paths.values():
            path.close()
        for process in self.processes:
            _stop(process)


def _report(timings: dict[str, list[float]], cpu: dict[str, float], samples: int) -> dict[str, object]:
    rows: dict[str, dict[str, float]] = {}
    for name, values in timings.items():
        rows[name] = {
            "p50_ms": statistics.median(values) * 1e3,
            "p99_ms": percentile(values, 0.99) * 1e3,
            "cpu_ms_per_call": cpu[name] / samples * 1e3,
        }
        print(
            f"{name:>14}: p50 {rows[name]['p50_ms']:7.3f} ms  p99 {rows[name]['p99_ms']:7.3f} ms  "
            f"CPU {rows[name]['cpu_ms_per_call']:6.3f} ms/call  ({len(values)} calls)"
        )
    print("(CPU: of the process the client talks to, the server itself on a direct path)")
    for name in timings:
        transport, _, role = name.partition(" ")
        direct = timings.get(f"{transport} direct")
        if role == "direct" or direct is None:
            continue
        p50 = statistics.median(timings[name]) - statistics.median(direct)
        p99 = percentile(timings[name], 0.99) - percentile(direct, 0.99)
        rows[name] |= {"p50_overhead_ms": p50 * 1e3, "p99_overhead_ms": p99 * 1e3}
        target = TARGET_P50_OVERHEAD_MS.get(transport)
        verdict = (
            "" if role != "proxy" or target is None else (" (met)" if p50 * 1e3 <= target else " (MISSED)")
        )
        goal = f", target p50 at most {target:g} ms{verdict}" if role == "proxy" and target else ""
        print(
            f"{name} overhead over {transport} direct: p50 {p50 * 1e3:.3f} ms  p99 {p99 * 1e3:.3f} ms{goal}"
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000, help="timed calls per path")
    parser.add_argument("--calls", type=int, default=10_000, help="calls per proxy before the memory reading")
    parser.add_argument("--transport", choices=("stdio", "http", "both"), default="both")
    parser.add_argument(
        "--baseline-src", metavar="DIR", help="also time the proxies of the dsh_policy package in DIR"
    )
    parser.add_argument("--floor", action="store_true", help="also time a stdio relay that only copies lines")
    args = parser.parse_args()
    start_load = os.getloadavg()
    print(f"load average at start: {load_average()}  ({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory() as folder:
        bench = Bench(Path(folder), args.baseline_src)
        try:
            if args.transport in ("stdio", "both"):
                bench.add_stdio(args.floor)
            if args.transport in ("http", "both"):
                bench.add_http()
            paths = bench.paths
            for path in paths.values():
                for _ in range(200):  # warm up every path (imports, caches, connections)
                    path.call()
            timings: dict[str, list[float]] = {name: [] for name in paths}
            cpu_before = {name: cpu_seconds(path.pid) for name, path in paths.items()}
            for _ in range(args.samples):  # interleaved
                for name, path in paths.items():
                    timings[name].append(path.call())
            cpu = {name: cpu_seconds(path.pid) - cpu_before[name] for name, path in paths.items()}
            memory: list[tuple[str, int, int]] = []
            proxies: list[tuple[str, Callable[[], float], int]] = [
                (name, path.call, path.pid) for name, path in paths.items() if name.endswith(" proxy")
            ]
            for name, call, pid in proxies:
                before = rss_kib(pid)
                for _ in range(args.calls):
                    call()
                memory.append((name, before, rss_kib(pid)))
        finally:
            bench.close()
    rows = _report(timings, cpu, args.samples)
    for name, before, after in memory:
        print(f"{name} memory: {before:,} KiB before, {after:,} KiB after {args.calls:,} more calls")
    print(f"load average at end: {load_average()}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "load_average": {"start": start_load, "end": os.getloadavg()},
        "samples": args.samples,
        "paths": rows,
        "memory_kib": {
            name: {"before": before, "after": after, "calls": args.calls} for name, before, after in memory
        },
    }
    RESULTS.write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
