"""Per-call overhead of ``dsh-policy mcp proxy`` over a direct stdio connection to the same server.

One run measures both paths against the same SDK-built server (``tests/mcp_proxy/demo_server.py``,
its ``echo`` tool) with raw newline-delimited JSON-RPC from this process, so the client's own cost
is the same on both sides and the difference is the proxy's: parse, decide (pre-execute, guard,
post-execute with the shipped secrets pack), audit (one ``tool_result`` record, fsync batch),
relay. Then it makes ``--calls`` more calls through the proxy and reads the proxy's resident
memory (``VmRSS``) after them.

    .venv/bin/python benchmarks/bench_mcp.py [--calls 10000] [--samples 2000] [--baseline-src DIR]

``--baseline-src DIR`` adds a third path, the proxy of another version of the code (``DIR`` holds
a ``dsh_policy`` folder, e.g. ``git archive REV | tar -x -C DIR/dsh_policy``), interleaved with the
other two, so a change's before and after are measured side by side in one run under one load.

Needs the ``mcp`` extra (the server is built with the SDK): ``pip install 'dsh-policy[mcp]'``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, str(ROOT / "tests" / "mcp_proxy" / "demo_server.py")]
PACKS = [ROOT / "tests" / "mcp_proxy" / "mcp-test.yaml", ROOT / "rules" / "secrets.yaml"]
PROTOCOL_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench_mcp", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Session:
    """A raw JSON-RPC client on a child's stdio."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.stdout: IO[bytes] = self.process.stdout
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
        answer = self.request("tools/call", {"name": "echo", "arguments": {"text": "hello"}})
        elapsed = time.perf_counter() - started
        assert "result" in answer and not answer["result"].get("isError"), answer
        return elapsed

    def close(self) -> None:
        self.stdin.close()
        self.process.wait(timeout=30)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000, help="timed calls per path")
    parser.add_argument("--calls", type=int, default=10_000, help="calls before the memory reading")
    parser.add_argument(
        "--baseline-src", metavar="DIR", help="also time the proxy of the dsh_policy package in DIR"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:

        def proxy_argv(log: str) -> list[str]:
            argv = [sys.executable, "-m", "dsh_policy.policy.cli", "mcp", "proxy", "--name", "demo"]
            return [*argv, "--pack", *map(str, PACKS), "--audit", str(Path(folder) / log), "--", *SERVER]

        sessions = {"direct": Session(SERVER), "proxy": Session(proxy_argv("audit.jsonl"))}
        if args.baseline_src:
            env = {**os.environ, "PYTHONPATH": args.baseline_src}
            sessions["baseline"] = Session(proxy_argv("baseline.jsonl"), env=env)
        try:
            for session in sessions.values():
                session.request("tools/list", {})
                for _ in range(200):  # warm up every path
                    session.call()
            timings: dict[str, list[float]] = {name: [] for name in sessions}
            for _ in range(args.samples):  # interleaved, so load changes hit every path alike
                for name, session in sessions.items():
                    timings[name].append(session.call())
            proxied = sessions["proxy"]
            start_rss = rss_kib(proxied.process.pid)
            for _ in range(args.calls):
                proxied.call()
            end_rss = rss_kib(proxied.process.pid)
        finally:
            for session in sessions.values():
                session.close()
    for name, samples in timings.items():
        print(
            f"{name:>6}: p50 {statistics.median(samples) * 1e3:7.3f} ms  "
            f"p99 {percentile(samples, 0.99) * 1e3:7.3f} ms  ({len(samples)} calls)"
        )
    for name in timings:
        if name == "direct":
            continue
        overhead = [p - d for p, d in zip(sorted(timings[name]), sorted(timings["direct"]), strict=True)]
        print(
            f"{name} overhead: p50 {statistics.median(overhead) * 1e3:.3f} ms  "
            f"p99 {percentile(overhead, 0.99) * 1e3:.3f} ms (its percentile minus direct's)"
        )
    print(f"proxy memory: {start_rss} KiB before, {end_rss} KiB after {args.calls:,} more calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
