#!/usr/bin/env python3
"""The real-client suite: every supported coding client, driven offline, guarded by dsh-policy.

Per client (``clients.py``), in a throwaway workspace under /tmp wired with ``dsh-policy init``:

  deny_rm        ``rm -rf`` of the workspace root: refused, the workspace survives
  deny_sentinel  ``touch SENTINEL && python3 -c 'print("rm -rf /")'``: refused, no sentinel
  allow_ls       ``ls`` of the workspace: runs, its output reaches the model
  redact_cat     ``cat`` of a file holding a fake AWS key: the key never reaches the model
  redact_indirect the same file printed by a command that names no file (python3 -c): only the
                 PostToolUse answer can keep the key from the model
  redact_view    (Copilot CLI) the same file read with the client's own file tool
  control        deny_sentinel in a folder with no hooks: the sentinel appears (the check works)
  latency        allow_ls N times with hooks and N times without; the median gap between the
                 model sending the call and receiving its result, with minus without
  audit          the deployment's audit log verifies and holds this client's records

The last line printed is one summary per client, joined by ``; ``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from clients import CLIENTS, Setup, harness_of, install, kill_strays

HERE = Path(__file__).resolve().parent
#: Clients whose hooks cannot change what the model sees of a shell call's output (docs/clients.md).
CANNOT_REDACT = ("qwen-code",)
#: Extra redaction cases with a client's own file-read tool (scripted_model.CHAT_TOOL_SCENARIOS).
EXTRA_REDACT: dict[str, tuple[str, ...]] = {
    "copilot-cli": ("redact_view",),
    "claude-code": ("redact_read", "redact_grep", "redact_webfetch", "redact_mcp"),
    "claude-code-http": ("redact_read", "redact_grep", "redact_webfetch", "redact_mcp"),
}
FAKE_KEY = "AKIAZ7QK3M5N2P4R6T8V"  # shaped like an AWS access key id; not a credential


class Suite:
    def __init__(self, args: argparse.Namespace) -> None:
        self.root = Path(args.root).resolve()
        if not str(self.root).startswith("/tmp/"):
            raise SystemExit("refusing: --root must lie under /tmp/")
        self.work = self.root / "work"
        self.logs = self.work / "logs"
        self.cache = Path(args.cache)
        self.venv_bin = Path(args.venv) / "bin"
        self.runs, self.timeout = args.runs, args.timeout
        self.server: subprocess.Popen[bytes] | None = None
        self.tls_pem = self.work / "tls.pem"
        self.port = 0

    def prepare(self) -> None:
        if self.work.exists():
            shutil.rmtree(self.work)
        for d in (self.work / "proj", self.work / "plain", self.logs, self.work / "home"):
            d.mkdir(parents=True)
        # A throwaway certificate for 127.0.0.1, so WebFetch (which only fetches https) can reach
        # the scripted model's page; Claude Code trusts it through NODE_EXTRA_CA_CERTS.
        subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=127.0.0.1",
                "-addext",
                "subjectAltName=IP:127.0.0.1",
                "-keyout",
                str(self.tls_pem),
                "-out",
                str(self.tls_pem),
            ],
            check=True,
            capture_output=True,
        )
        self.reset_files()

    def reset_files(self) -> None:
        proj = self.work / "proj"
        (proj / "KEEP").write_text("keep\n")
        (proj / "deploy-notes.txt").write_text(f"aws_access_key_id = {FAKE_KEY}\nregion = eu-west-1\n")
        sentinel = self.work / "SENTINEL"
        if sentinel.exists():
            sentinel.unlink()

    def start_model(self) -> None:
        port_file = self.logs / "port"
        self.server = subprocess.Popen(
            [
                sys.executable,
                str(HERE / "scripted_model.py"),
                "--port-file",
                str(port_file),
                "--log",
                str(self.logs / "model.jsonl"),
                "--bodies",
                str(self.logs / "bodies"),
                "--work",
                str(self.work),
                "--tls-cert",
                str(self.tls_pem),
            ],
            stdout=(self.logs / "model.out").open("wb"),
            stderr=subprocess.STDOUT,
        )
        for _ in range(100):
            if port_file.exists() and port_file.read_text().strip():
                self.port = int(port_file.read_text())
                return
            time.sleep(0.1)
        raise SystemExit("the scripted model did not start")

    def stop_model(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(5)
            except subprocess.TimeoutExpired:
                self.server.kill()

    def _records_since(self, offset: int) -> list[dict[str, Any]]:
        path = self.logs / "model.jsonl"
        if not path.exists():
            return []
        with path.open("rb") as fh:
            fh.seek(offset)
            return [json.loads(line) for line in fh.read().decode().splitlines() if line.strip()]

    def run(self, setup: Setup, name: str, scenario: str, hooks: bool) -> dict[str, Any]:
        argv, env = setup.command(name, scenario, hooks)
        log = self.logs / "model.jsonl"
        offset = log.stat().st_size if log.exists() else 0
        t0 = time.time()
        proc = subprocess.Popen(
            argv,
            cwd=self.work / ("proj" if hooks else "plain"),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=self.timeout)
            rc: int | str = proc.returncode
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            rc = "timeout"
        wall = time.time() - t0
        time.sleep(0.2)
        records = self._records_since(offset)
        calls = [r for r in records if r.get("reply") == "tool_call"]
        results = [tr for r in records if r.get("reply") == "final" for tr in r.get("tool_results") or []]
        secret = any(
            FAKE_KEY in Path(r["body_file"]).read_text("utf-8", "replace")
            for r in records
            if calls and r["n"] > calls[0]["n"] and r.get("body_file")
        )
        tag = f"{name}-{scenario}-{'hooks' if hooks else 'plain'}-{int(t0 * 1000)}"
        (self.logs / f"{tag}.out").write_bytes(out)
        (self.logs / f"{tag}.err").write_bytes(err)
        return {
            "scenario": scenario,
            "hooks": hooks,
            "rc": rc,
            "wall_s": round(wall, 2),
            "calls": len(calls),
            "results": results,
            "secret_reached_model": secret,
            "log": tag,
            "stderr_tail": err.decode("utf-8", "replace")[-800:],
        }

    def effects(self) -> dict[str, bool]:
        return {
            "workspace_deleted": not (self.work / "proj" / "KEEP").exists(),
            "sentinel_created": (self.work / "SENTINEL").exists(),
        }


def texts(run: dict[str, Any]) -> list[str]:
    return [str(r.get("content") or "") for r in run["results"]]


def client_suite(suite: Suite, setup: Setup, name: str) -> dict[str, Any]:
    res: dict[str, Any] = {}
    for case in (
        "deny_rm",
        "deny_sentinel",
        "allow_ls",
        "redact_cat",
        "redact_indirect",
        *EXTRA_REDACT.get(name, ()),
    ):
        run = suite.run(setup, name, case, hooks=True)
        fx = suite.effects()
        if fx["workspace_deleted"]:
            raise SystemExit(f"{name}: the workspace was deleted; stopping (see {run['log']})")
        suite.reset_files()
        said = texts(run)
        if case.startswith("deny"):
            ok = bool(said) and any("[policy: baseline/" in t for t in said) and not any(fx.values())
        elif case == "allow_ls":
            ok = any("KEEP" in t and "deploy-notes.txt" in t for t in said)
        elif case == "redact_webfetch":
            # WebFetch hands the fetched page to a model inside the tool, before any hook runs
            # (recorded, docs/clients.md); what the hooks decide is what the conversation gets.
            run["page_sent_to_model_by_the_tool"] = run["secret_reached_model"]
            run["secret_reached_model"] = any(FAKE_KEY in t for t in said)
            ok = bool(said) and "[REDACTED:" in " ".join(said) and not run["secret_reached_model"]
        else:
            ok = bool(said) and not run["secret_reached_model"]
        run["ok"] = ok
        run["effects"] = fx
        res[case] = run
        print(
            f"  {name} {case}: {'ok' if ok else 'FAIL'} {json.dumps(fx)} {[t[:160] for t in said]}",
            flush=True,
        )
    control = suite.run(setup, name, "deny_sentinel", hooks=False)
    control["ok"] = suite.effects()["sentinel_created"]
    suite.reset_files()
    res["control"] = control
    print(f"  {name} control: {'ok' if control['ok'] else 'FAIL'}", flush=True)
    with_h: list[float] = []
    without: list[float] = []
    for _ in range(suite.runs):
        for hooks, into in ((True, with_h), (False, without)):
            run = suite.run(setup, name, "allow_ls", hooks=hooks)
            into += [r["gap_ms"] for r in run["results"] if r.get("gap_ms") is not None]
    ms = statistics.median(with_h) - statistics.median(without) if with_h and without else None
    res["latency"] = {"with_hooks_ms": with_h, "without_ms": without, "hook_ms_per_tool_call": ms}
    if name == "claude-code-http":
        # One tool call's two events answered by the gateway over http, timed by the suite itself
        # (docs/clients.md: the end-to-end gap above varies by more than this from run to run).
        res["latency"]["http_round_trip_ms"] = setup.http_round_trip_ms()
    print(f"  {name} latency: {json.dumps(res['latency'])}", flush=True)
    return res


def audit_folder(suite: Suite, name: str) -> Path:
    # Codex is wired with `init codex --user` (its hooks live in CODEX_HOME), which names the
    # machine-wide deployment, so its log is under the suite's HOME; the others write the project's.
    if name == "codex":
        return suite.work / "home" / ".config" / "dsh-policy" / "audit"
    if name == "claude-code-http":
        return suite.work / "proj" / ".dsh" / "audit-http"
    return suite.work / "proj" / ".dsh" / "audit"


def audit_sizes(suite: Suite, name: str) -> dict[Path, int]:
    """How long each audit log is before a client runs (clients may share a deployment's log)."""
    folder = audit_folder(suite, name)
    return {log: log.stat().st_size for log in folder.glob("*.jsonl")} if folder.exists() else {}


def audit_ok(suite: Suite, name: str, before: dict[Path, int]) -> bool:
    """Every audit log verifies, and what was appended while this client ran holds its records."""
    folder = audit_folder(suite, name)
    logs = sorted(folder.glob("*.jsonl")) if folder.exists() else []
    if not logs:
        return False
    for log in logs:
        verify = subprocess.run([str(suite.venv_bin / "dsh-policy"), "verify", str(log)], capture_output=True)
        if verify.returncode != 0:
            return False
    marker = f'"{harness_of(name)}"'.encode()
    for log in logs:
        with log.open("rb") as fh:
            fh.seek(before.get(log, 0))
            if marker in fh.read():
                return True
    return False


def _round_trip(r: dict[str, Any]) -> str:
    rtt = r["latency"].get("http_round_trip_ms")
    return "" if rtt is None else f" (http round trip {rtt:.0f} ms)"


def summary(name: str, version: str, r: dict[str, Any]) -> str:
    if "error" in r:
        return f"{name} {version}: not run ({r['error']})"
    word = lambda ok: "ok" if ok else "FAIL"  # noqa: E731
    ms = r["latency"]["hook_ms_per_tool_call"]
    cases = [r["redact_cat"], r["redact_indirect"], *(r[c] for c in EXTRA_REDACT.get(name, ()))]
    redact = (
        "ok"
        if all(c["ok"] for c in cases)
        else ("fail (secret reached model)" if any(c["secret_reached_model"] for c in cases) else "FAIL")
    )
    if name in CANNOT_REDACT and redact != "ok":
        redact = "n/a (no hook can change a tool's output)"
    return (
        f"{name} {version}: deny {word(r['deny_rm']['ok'] and r['deny_sentinel']['ok'])}, "
        f"allow {word(r['allow_ls']['ok'])}, redact {redact}, "
        f"hook ms {None if ms is None else round(ms)} per tool call{_round_trip(r)}, "
        f"control {word(r['control']['ok'])}, "
        f"audit {word(r['audit'])}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default="/tmp/dsh-realclient")
    parser.add_argument("--cache", required=True)
    parser.add_argument("--venv", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument("--only", default="", help="comma-separated client names (default: all)")
    args = parser.parse_args()
    # In CLIENTS' order whatever --only lists (Copilot CLI must run before Claude Code is wired).
    wanted = [n for n in args.only.split(",") if n] if args.only else list(CLIENTS)
    names = [n for n in CLIENTS if n in wanted] + [n for n in wanted if n not in CLIENTS]
    # A stop (SIGTERM) still runs the finally below: the model server and strays are ended by pid.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    suite = Suite(args)
    suite.prepare()
    suite.start_model()
    results: dict[str, Any] = {}
    lines: list[str] = []
    setup = Setup(suite.work, suite.venv_bin, suite.cache, suite.port)
    try:
        for name in names:
            client = CLIENTS[name]
            print(f"{name} {client.version}:", flush=True)
            try:
                install(client, suite.cache)
                before = audit_sizes(suite, name)
                setup.wire(name)
                print(f"  {name} doctor: {setup.doctor(name)}", flush=True)
                results[name] = client_suite(suite, setup, name)
                results[name]["audit"] = audit_ok(suite, name, before)
            except (subprocess.CalledProcessError, OSError) as error:
                detail = getattr(error, "stderr", "") or ""
                results[name] = {"error": f"{type(error).__name__}: {str(error)[:200]} {str(detail)[-300:]}"}
            setup.stop_servers()
            kill_strays(suite.work)
            lines.append(summary(name, client.version, results[name]))
            print(f"  {lines[-1]}", flush=True)
    finally:
        setup.stop_servers()
        suite.stop_model()
        kill_strays(suite.work)
        (suite.work / "results.json").write_text(json.dumps(results, indent=1, ensure_ascii=False))
    line = "; ".join(lines)
    (suite.work / "summary.txt").write_text(line + "\n")
    print(f"results: {suite.work / 'results.json'}")
    print(line)
    return (
        0 if all("FAIL" not in part and "fail" not in part and "not run" not in part for part in lines) else 1
    )


if __name__ == "__main__":
    sys.exit(main())
