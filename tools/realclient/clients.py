"""The coding clients the real-client suite drives: how each is installed, wired and run.

Every client is installed from npm at a pinned version into its own folder of the cache (never
into the repository), wired with ``dsh-policy init <client>`` exactly as a user would, pointed at
the scripted model on 127.0.0.1, and run headless in the throwaway workspace.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import socket
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Client:
    name: str
    package: str
    version: str
    binary: str  # path below the install folder

    def folder(self, cache: Path) -> Path:
        return cache / "npm" / f"{self.package.replace('/', '+')}@{self.version}"

    def executable(self, cache: Path) -> Path:
        return self.folder(cache) / self.binary


CLIENTS: dict[str, Client] = {
    c.name: c
    for c in (
        # First: Copilot CLI also runs the hooks of .claude/settings.json (measured), so it runs
        # before Claude Code's are wired into the shared workspace.
        Client("copilot-cli", "@github/copilot", "1.0.102", "node_modules/.bin/copilot"),
        Client("claude-code", "@anthropic-ai/claude-code", "2.1.332", "node_modules/.bin/claude"),
        # The same binary with http hooks to a gateway the suite starts (`dsh-policy serve --http`).
        Client("claude-code-http", "@anthropic-ai/claude-code", "2.1.332", "node_modules/.bin/claude"),
        Client("codex", "@openai/codex", "0.171.0", "node_modules/.bin/codex"),
        Client("gemini-cli", "@google/gemini-cli", "0.61.0", "node_modules/.bin/gemini"),
        Client("qwen-code", "@qwen-code/qwen-code", "0.24.4", "node_modules/.bin/qwen"),
        Client("opencode", "opencode-ai", "1.18.33", "node_modules/opencode-linux-x64/bin/opencode"),
    )
}


def notes_mcp_server(work: Path) -> dict[str, object]:
    """The suite's stdio MCP server entry (``notes_mcp.py``), for Claude Code's MCP case."""
    here = Path(__file__).resolve().parent
    return {"command": "/usr/bin/python3", "args": [str(here / "notes_mcp.py"), "--work", str(work)]}


def harness_of(name: str) -> str:
    """The ``dsh-policy`` harness a suite client speaks (the http variant is Claude Code's)."""
    return "claude-code" if name == "claude-code-http" else name


def install(client: Client, cache: Path) -> None:
    """``npm install`` the pinned version into the cache (skipped when already there)."""
    if client.executable(cache).exists():
        return
    folder = client.folder(cache)
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "npm",
            "install",
            "--prefix",
            str(folder),
            "--no-fund",
            "--no-audit",
            "--loglevel=error",
            f"{client.package}@{client.version}",
        ],
        check=True,
    )


class Setup:
    """Wires every client into ``proj`` (hooks) and gives each a plain twin in ``plain``."""

    def __init__(self, work: Path, venv_bin: Path, cache: Path, port: int) -> None:
        self.work, self.venv_bin, self.cache, self.port = work, venv_bin, cache, port
        self.proj, self.plain, self.home = work / "proj", work / "plain", work / "home"
        self.servers: list[subprocess.Popen[bytes]] = []
        self.http_hook: dict[str, object] = {}
        self.restore: dict[Path, str] = {}  # files a client's wiring changed, and their text before

    def dsh(self, *args: str, env: dict[str, str] | None = None) -> None:
        subprocess.run(
            [str(self.venv_bin / "dsh-policy"), *args],
            check=True,
            capture_output=True,
            env=env or self.env(),
            text=True,
        )

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {
            "PATH": f"{self.venv_bin}:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "HOME": str(self.home),
            "NO_COLOR": "1",
        }
        env.update(extra or {})
        return env

    def wire(self, name: str) -> None:
        """``dsh-policy init`` for one client, plus what the client needs to reach the model."""
        port = self.port
        if name == "claude-code":
            self.dsh("init", "claude-code", "--project", str(self.proj))
            self.skip_webfetch_preflight()
        elif name == "claude-code-http":
            self.wire_claude_code_http()
        elif name == "codex":
            for home, _hooks in ((self.work / "codex-hooks", True), (self.work / "codex-plain", False)):
                home.mkdir(parents=True, exist_ok=True)
                (home / "config.toml").write_text(
                    'model = "scripted"\nmodel_provider = "scripted"\napproval_policy = "never"\n'
                    'sandbox_mode = "danger-full-access"\n\n[model_providers.scripted]\nname = "scripted"\n'
                    f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\n'
                    'env_key = "SCRIPTED_KEY"\n'
                )
            codex_bin = str(CLIENTS["codex"].executable(self.cache).parent)
            env = self.env(
                {
                    "CODEX_HOME": str(self.work / "codex-hooks"),
                    "PATH": f"{codex_bin}:{self.venv_bin}:/usr/bin:/bin",
                }
            )
            self.dsh("init", "codex", "--project", str(self.proj), "--user", "--trust", env=env)
        elif name in ("gemini-cli", "qwen-code"):
            folder = ".gemini" if name == "gemini-cli" else ".qwen"
            auth = "gemini-api-key" if name == "gemini-cli" else "openai"
            user = self.home / folder
            user.mkdir(parents=True, exist_ok=True)
            (user / "settings.json").write_text(
                json.dumps(
                    {
                        "security": {"auth": {"selectedType": auth}},
                        "general": {"disableAutoUpdate": True},
                        "privacy": {"usageStatisticsEnabled": False},
                        "telemetry": {"enabled": False},
                    }
                )
            )
            # Both clients load project hooks only in a trusted folder: trust the two workspaces.
            (user / "trustedFolders.json").write_text(
                json.dumps({str(self.proj): "TRUST_FOLDER", str(self.plain): "TRUST_FOLDER"})
            )
            self.dsh("init", name, "--project", str(self.proj))
        elif name == "opencode":
            config = {
                "$schema": "https://opencode.ai/config.json",
                "autoupdate": False,
                "share": "disabled",
                "provider": {
                    "scripted": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "scripted",
                        "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "dummy"},
                        "models": {"scripted": {"name": "scripted", "tool_call": True}},
                    }
                },
                "model": "scripted/scripted",
                "permission": {"bash": "allow", "edit": "allow", "external_directory": "allow"},
            }
            for folder in (self.proj, self.plain):
                (folder / "opencode.json").write_text(json.dumps(config, indent=1))
            self.dsh("init", "opencode", "--project", str(self.proj))
        elif name == "copilot-cli":
            # Copilot runs repository hooks only in a folder the user trusted; its trust prompt
            # records the folder here, which is what this does.
            user = self.home / ".copilot"
            user.mkdir(parents=True, exist_ok=True)
            (user / "config.json").write_text(
                json.dumps({"trustedFolders": [str(self.proj), str(self.plain)]})
            )
            self.dsh("init", "copilot-cli", "--project", str(self.proj))

    def skip_webfetch_preflight(self) -> None:
        """WebFetch first asks claude.ai whether a domain is safe, which fails offline: the
        documented ``skipWebFetchPreflight`` setting lets it fetch the scripted model's page."""
        path = self.proj / ".claude" / "settings.json"
        settings = json.loads(path.read_text())
        settings["skipWebFetchPreflight"] = True
        path.write_text(json.dumps(settings, indent=2))

    def wire_claude_code_http(self) -> None:
        """``init claude-code``, then every dsh-policy command hook in ``.claude/settings.json``
        replaced by an http hook to ``dsh-policy serve --http`` on a free loopback port (started
        here, stopped by :meth:`stop_servers`), as docs/hooks.md describes.

        The gateway serves a deployment of its own (``gateway-http.yaml``, audit log under
        ``audit-http/``): a project wired for http from the start. On the command-hook deployment
        the swap would be seen by its tamper watch as hook settings that no longer run
        ``dsh-policy hook``, which fails closed until an operator acknowledges it."""
        self.dsh("init", "claude-code", "--project", str(self.proj))
        deployment = self.proj / ".dsh" / "gateway-http.yaml"
        deployment.write_text(
            (self.proj / ".dsh" / "gateway.yaml").read_text().replace("path: audit/", "path: audit-http/")
        )
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        token_file = self.home / "http.token"
        token_file.write_text(secrets.token_urlsafe(32) + "\n")
        token_file.chmod(0o600)
        hook = {
            "type": "http",
            "url": f"http://127.0.0.1:{port}/hook/claude-code",
            "headers": {"Authorization": f"Bearer {token_file.read_text().strip()}"},
            "timeout": 30,
            "onFailure": "block",
        }
        self.http_hook = hook
        path = self.proj / ".claude" / "settings.json"
        # Put back after this client: the other clients share the project's command-hook
        # deployment, whose tamper watch would count the http hooks as a weakening.
        self.restore[path] = path.read_text()
        settings = json.loads(path.read_text())
        for groups in settings["hooks"].values():
            for group in groups:
                group["hooks"] = [
                    hook if "dsh-policy" in str(h.get("command", "")) else h for h in group["hooks"]
                ]
        path.write_text(json.dumps(settings, indent=2))
        self.skip_webfetch_preflight()
        log = (self.work / "logs" / "serve-http.out").open("wb")
        server = subprocess.Popen(
            [
                str(self.venv_bin / "dsh-policy"),
                "serve",
                "--config",
                str(deployment),
                "--http",
                f"127.0.0.1:{port}",
                "--token-file",
                str(token_file),
            ],
            cwd=self.proj,
            env=self.env(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.servers.append(server)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.poll() is None:
            with socket.socket() as conn:
                if conn.connect_ex(("127.0.0.1", port)) == 0:
                    return
            time.sleep(0.2)
        raise OSError(f"dsh-policy serve --http did not listen on {port} (exit {server.poll()})")

    def http_round_trip_ms(self, rounds: int = 20) -> float | None:
        """The median time the http gateway takes to answer one tool call's two events (PreToolUse
        and PostToolUse of an ``ls``, one new connection each, as a hook client without keep-alive
        would): the cost of the hook itself, without the client's own run-to-run variance."""
        if not self.http_hook:
            return None
        url = str(self.http_hook["url"])
        port = int(url.split(":")[2].split("/")[0])
        headers = {**self.http_hook["headers"], "Content-Type": "application/json"}  # type: ignore[dict-item]
        common = {"session_id": "suite-rtt", "cwd": str(self.proj), "transcript_path": None}
        tool = {"tool_name": "Bash", "tool_input": {"command": f"ls {self.proj}"}}
        bodies = [
            json.dumps({**common, **tool, "hook_event_name": "PreToolUse"}),
            json.dumps(
                {
                    **common,
                    **tool,
                    "hook_event_name": "PostToolUse",
                    "tool_response": {"stdout": "KEEP\ndeploy-notes.txt", "stderr": "", "interrupted": False},
                }
            ),
        ]
        totals = []
        for _ in range(rounds):
            start = time.perf_counter()
            for body in bodies:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                conn.request("POST", "/hook/claude-code", body=body, headers=headers)
                answer = conn.getresponse()
                answer.read()
                conn.close()
                if answer.status != 200:
                    return None
            totals.append((time.perf_counter() - start) * 1000)
        return statistics.median(totals)

    def stop_servers(self) -> None:
        """Stop the gateways :meth:`wire_claude_code_http` started, by pid, and put back the
        settings it changed."""
        for server in self.servers:
            if server.poll() is None:
                server.terminate()
                try:
                    server.wait(10)
                except subprocess.TimeoutExpired:
                    server.kill()
        self.servers.clear()
        self.http_hook = {}
        for path, text in self.restore.items():
            path.write_text(text)
        self.restore.clear()

    def doctor(self, name: str) -> str:
        """``dsh-policy doctor`` for one client: its probes also start the resident gateway, so the
        first real event does not pay for that start (on a loaded machine it can pass the hook's
        deadline, and the event then fails closed). What was not OK, and the last line."""
        env = self.env()
        if name == "codex":
            # Its trust check asks the codex binary itself, as `init codex --trust` did.
            env["CODEX_HOME"] = str(self.work / "codex-hooks")
            env["PATH"] = f"{CLIENTS['codex'].executable(self.cache).parent}:{env['PATH']}"
        done = subprocess.run(
            [str(self.venv_bin / "dsh-policy"), "doctor", harness_of(name), "--project", str(self.proj)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        lines = done.stdout.strip().splitlines() or ["(no output)"]
        return "; ".join([line for line in lines[:-1] if not line.startswith("OK")] + lines[-1:])

    def command(self, name: str, scenario: str, hooks: bool) -> tuple[list[str], dict[str, str]]:
        """argv and environment of one headless run."""
        exe = str(CLIENTS[name].executable(self.cache))
        prompt = f"scenario={scenario}"
        base = f"http://127.0.0.1:{self.port}"
        if name in ("claude-code", "claude-code-http"):
            mcp = self.work / "mcp.json"
            mcp.write_text(json.dumps({"mcpServers": {"notes": notes_mcp_server(self.work)}}))
            tools = "Bash,Read,Grep,WebFetch,mcp__notes__read_notes"
            argv = [exe, "-p", prompt, "--allowedTools", tools, "--mcp-config", str(mcp)]
            argv.append("--strict-mcp-config")
            return [*argv, "--output-format", "json"], self.env(
                {
                    "ANTHROPIC_BASE_URL": base,
                    "ANTHROPIC_API_KEY": "dummy",
                    "DISABLE_TELEMETRY": "1",
                    "DISABLE_AUTOUPDATER": "1",
                    "DISABLE_ERROR_REPORTING": "1",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                    # Every tool in the first request (WebFetch and MCP tools are otherwise deferred
                    # behind ToolSearch), so the scripted model can call them directly.
                    "ENABLE_TOOL_SEARCH": "false",
                    "NODE_EXTRA_CA_CERTS": str(self.work / "tls.pem"),
                }
            )
        if name == "codex":
            home = self.work / ("codex-hooks" if hooks else "codex-plain")
            return [exe, "exec", "--skip-git-repo-check", prompt], self.env(
                {"CODEX_HOME": str(home), "SCRIPTED_KEY": "dummy"}
            )
        if name == "gemini-cli":
            return [exe, "-p", prompt, "--yolo", "-m", "gemini-2.5-flash"], self.env(
                {"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": base}
            )
        if name == "qwen-code":
            return [exe, "-p", prompt, "--yolo"], self.env(
                {
                    "OPENAI_API_KEY": "dummy",
                    "OPENAI_BASE_URL": f"{base}/v1",
                    "OPENAI_MODEL": "scripted",
                    "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
                }
            )
        if name == "opencode":
            return [exe, "run", prompt], self.env({"OPENCODE_DISABLE_AUTOUPDATE": "1"})
        if name == "copilot-cli":
            # Offline mode with a BYOK provider: no GitHub login, no telemetry, no update check.
            return [exe, "-p", prompt, "--allow-all-tools", "--allow-all-paths"], self.env(
                {
                    "COPILOT_OFFLINE": "true",
                    "COPILOT_PROVIDER_BASE_URL": f"{base}/v1",
                    "COPILOT_PROVIDER_API_KEY": "dummy",
                    "COPILOT_MODEL": "scripted",
                    "COPILOT_AUTO_UPDATE": "false",
                    # The binary unpacks itself once per cache folder: keep that out of the workspace.
                    "COPILOT_CACHE_HOME": str(self.cache / "copilot-cache"),
                }
            )
        raise KeyError(name)


def kill_strays(work: Path) -> list[int]:
    """End processes whose command line names the throwaway folder (a client's helper or daemon
    left behind), one by one by pid; never anything outside it."""
    killed = []
    mine = str(work).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if mine in argv and b"scripted_model.py" not in argv:
            try:
                os.kill(int(entry.name), 15)
                killed.append(int(entry.name))
            except OSError:
                pass
    return killed
