"""Checking a hook installation end to end, the way the harness will exercise it.

Each check yields :class:`Finding` values (``ok``, ``warn`` or ``fail``); any ``fail`` makes
``dsh-policy doctor`` exit non-zero. In order:

1. settings: the harness's settings files wire all five events to ``dsh-policy hook`` (PreToolUse
   and PostToolUse for every tool), each command ends in ``|| exit 2``, and for Claude Code each
   hook sets ``onFailure: "block"``;
2. Codex trust: what ``codex app-server`` reports for our hooks (untrusted hooks do not run, and
   ``codex exec`` says nothing about it; managed ones need no trust), with how to fix it
   (:mod:`.doctor_codex`);
3. the deployment file named by the hooks: its packs load, and its audit log can be written;
4. probes: a synthetic destructive call and a benign one sent through the configured PreToolUse
   command, exactly as the harness runs it (``sh -c``, project folder, the harness's variables),
   with what came back and how long it took; the destructive one must be refused, the benign one
   must pass;
5. the resident gateway of that deployment answers its status (policy digest, uptime, decisions),
   and runs the policy the files compile to now.

Claude Code ``http`` hooks aimed at ``dsh-policy serve --http`` get their own settings checks,
probes and status (:mod:`.doctor_http`).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlsplit

from dsh_policy.policy.hooks.harness_files import read_text
from dsh_policy.policy.hooks.install.settings_files import HOOK_EVENTS

Level = Literal["ok", "warn", "fail"]
PROBE_SESSION: Final[str] = "dsh-policy-doctor"
PROBE_SECONDS: Final[float] = 60.0
# Data for the policy engine only (sent on the hook's stdin); no probe command is ever run.
DENY_PROBE_COMMAND: Final[str] = "rm -rf /"
ALLOW_PROBE_COMMAND: Final[str] = "ls"


@dataclass(frozen=True, slots=True)
class Finding:
    """One result line."""

    level: Level
    subject: str
    message: str

    def __str__(self) -> str:
        return f"{self.level.upper():<4}  {self.subject}: {self.message}"


@dataclass(frozen=True, slots=True)
class InstalledHook:
    """One configured dsh-policy hook."""

    event: str
    command: str
    source: str
    group: Mapping[str, Any]
    hook: Mapping[str, Any]
    url: str | None = None  # an ``http`` hook's URL (``command`` is then empty)


HTTP_HOOK_PATH: Final[str] = "/hook/claude-code"

# --- settings ---------------------------------------------------------------------------------


def is_gateway_http_hook(hook: Mapping[str, Any]) -> bool:
    """Whether a settings entry is a Claude Code http hook aimed at a dsh-policy gateway."""
    url = hook.get("url")
    return (
        hook.get("type") == "http"
        and isinstance(url, str)
        and urlsplit(url).path.rstrip("/") == HTTP_HOOK_PATH
    )


def claude_code_settings_files(project: str, home: str) -> list[str]:
    """Where Claude Code reads hooks from, project first, then the user's and the managed ones."""
    from dsh_policy.policy.hooks.claude_code.managed import managed_settings_path

    return [
        os.path.join(project, ".claude", "settings.json"),
        os.path.join(project, ".claude", "settings.local.json"),
        os.path.join(home, ".claude", "settings.json"),
        managed_settings_path(),
    ]


def installed_hooks(harness: str, files: list[str]) -> tuple[list[InstalledHook], list[Finding]]:
    """The dsh-policy hooks configured in ``files`` and the files that could not be read."""
    found: list[InstalledHook] = []
    problems: list[Finding] = []
    marker = f"dsh-policy hook {harness}"
    for path in files:
        text = read_text(path)
        if text is None:
            continue
        try:
            document = json.loads(text) if path.endswith(".json") else tomllib.loads(text)
        except (ValueError, tomllib.TOMLDecodeError) as error:
            problems.append(Finding("fail", "settings", f"{path} does not parse: {error}"))
            continue
        hooks = document.get("hooks") if isinstance(document, dict) else None
        for event, groups in (hooks or {}).items() if isinstance(hooks, dict) else ():
            for group in groups if isinstance(groups, list) else ():
                for hook in group.get("hooks", []) if isinstance(group, dict) else ():
                    if not isinstance(hook, dict):
                        continue
                    command = hook.get("command")
                    if isinstance(command, str) and marker in command:
                        found.append(InstalledHook(event, command, path, group, hook))
                    elif harness == "claude-code" and is_gateway_http_hook(hook):
                        found.append(InstalledHook(event, "", path, group, hook, url=hook["url"]))
    return found, problems


def check_settings(harness: str, hooks: list[InstalledHook]) -> Iterator[Finding]:
    """Every event wired, for every tool, failing closed."""
    wired = {hook.event for hook in hooks}
    missing = [event for event, _, _ in HOOK_EVENTS if event not in wired]
    if not hooks:
        yield Finding(
            "fail",
            "settings",
            f"no `dsh-policy hook {harness}` hooks are configured (run `dsh-policy init {harness}`)",
        )
        return
    if missing:
        yield Finding("fail", "settings", f"no dsh-policy hook for {', '.join(missing)}")
    for hook in hooks:
        where = f"{hook.event} in {hook.source}"
        if hook.url is None and not hook.command.rstrip().endswith("|| exit 2"):
            yield Finding(
                "fail",
                "settings",
                f"{where}: the command does not end in `|| exit 2`, so a "
                "missing or crashing dsh-policy would let calls through",
            )
        matcher = hook.group.get("matcher")
        if hook.event in ("PreToolUse", "PostToolUse") and matcher not in (None, "", "*"):
            yield Finding("fail", "settings", f"{where}: matcher {matcher!r} leaves other tools unguarded")
        if harness == "claude-code" and hook.hook.get("onFailure") != "block":
            yield Finding(
                "fail",
                "settings",
                f'{where}: set "onFailure": "block", or a hook that times '
                "out or cannot start lets the call run",
            )
    if not missing:
        sources = sorted({hook.source for hook in hooks})
        yield Finding("ok", "settings", f"all five events wired in {', '.join(sources)}")


# --- deployment, audit and probes -------------------------------------------------------------


def hook_argv(command: str, project: str) -> list[str] | None:
    """The dsh-policy arguments of a hook command (from ``hook`` to the last ``||``), variables
    expanded as the hook's shell will and ``--project`` as the hook will for ``project``."""
    home = os.environ.get("HOME") or os.path.expanduser("~")
    expanded = command
    for name, value in (("CLAUDE_PROJECT_DIR", project), ("HOME", home)):
        expanded = expanded.replace("${" + name + "}", value).replace("$" + name, value)
    try:
        words = shlex.split(expanded)
    except ValueError:
        return None
    # Skip a leading ``trap ... ;`` and the missing-program guard (the shipped settings have both).
    start = next(
        (i for i, word in enumerate(words[:-1]) if word.endswith("dsh-policy") and words[i + 1] == "hook"),
        None,
    )
    if start is None:
        return None
    words = words[start + 1 :]
    if "||" in words:
        words = words[: words.index("||")]
    from dsh_policy.policy.hooks.project_scope import expand

    return expand(words, {"CLAUDE_PROJECT_DIR": project, "HOME": home}, project)


def check_deployment(argv: list[str], project: str) -> tuple[list[Finding], Any, str | None]:
    """Packs load and the audit log is writable; the findings, the spec (or None) and the
    digest of the policy the files compile to (or None)."""
    from dsh_policy.policy.command_line import UsageError, sources_from
    from dsh_policy.policy.hooks.gateway.audit import audit_target
    from dsh_policy.policy.hooks.gateway.runtime_paths import spec_from
    from dsh_policy.policy.hooks.hook_command import hook_parser
    from dsh_policy.policy.loading import LoadFailure

    findings: list[Finding] = []
    try:
        args = hook_parser().parse_args(argv[1:] if argv and argv[0] == "hook" else argv)
    except UsageError as error:
        return [Finding("fail", "deployment", f"the hook command does not parse: {error}")], None, None
    cwd = os.getcwd()
    os.chdir(project)
    try:
        spec = spec_from(args)  # exactly the deployment (and gateway) the hook computes
        sources = sources_from(args, unprotected=bool(args.no_self_protection))
    finally:
        os.chdir(cwd)
    if isinstance(sources, list):
        findings.append(Finding("fail", "deployment", "; ".join(str(error) for error in sources[:5])))
        return findings, spec, None
    built = sources.build()
    digest: str | None = None
    if isinstance(built, LoadFailure):
        findings.append(Finding("fail", "packs", "; ".join(str(error) for error in built.errors[:5])))
    else:
        digest = built.digest
        names = ", ".join(pack.name for pack in built.packs)
        findings.append(
            Finding("ok", "packs", f"{names} load ({built.digest[:19]}, {built.engine_name} engine)")
        )
    workspace = sources.params.get("workspace")
    if workspace is not None:
        origin = sources.param_origins.get("workspace")
        whence = "the hook's --project" if origin is not None and origin.file == "--param" else "the file"
        findings.append(Finding("ok", "workspace", f"{workspace} (from {whence})"))
    plan = audit_target(args.audit, sources)
    if plan is None:
        findings.append(Finding("warn", "audit", "no audit log configured: decisions are not recorded"))
    else:
        findings.append(_audit_writable(plan.path))
    return findings, spec, digest


def _audit_writable(path: str) -> Finding:
    folder = os.path.dirname(path) or "."
    existing = folder
    while not os.path.isdir(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)  # the writer creates missing folders below it
    target = path if os.path.exists(path) else existing
    if not os.access(target, os.W_OK):
        return Finding("fail", "audit", f"{target} is not writable (the log is {path})")
    return Finding(
        "ok",
        "audit",
        f"{path} is writable" + ("" if os.path.isdir(folder) else " (its folder is made on first use)"),
    )


def probe_payload(harness: str, command: str, project: str) -> bytes:
    """A synthetic PreToolUse event for a shell call (never run: the policy engine reads it)."""
    document: dict[str, Any] = {
        "session_id": PROBE_SESSION,
        "hook_event_name": "PreToolUse",
        "cwd": project,
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": f"{PROBE_SESSION}-{int(time.time() * 1000)}",
    }
    if harness == "codex":
        document.update({"model": "dsh-policy-doctor", "turn_id": PROBE_SESSION})
    else:
        document["transcript_path"] = os.devnull
    return json.dumps(document).encode()


def run_probe(command: str, harness: str, project: str, payload: bytes) -> tuple[int, str, str, float]:
    """Run a configured hook command as the harness does; (exit code, stdout, stderr, ms)."""
    env = dict(os.environ)
    if harness == "claude-code":
        env["CLAUDE_PROJECT_DIR"] = project
    start = time.perf_counter()
    try:
        done = subprocess.run(
            ["/bin/sh", "-c", command],
            input=payload,
            capture_output=True,
            cwd=project,
            env=env,
            timeout=PROBE_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return -1, "", f"timed out after {PROBE_SECONDS:.0f} s", (time.perf_counter() - start) * 1000
    elapsed = (time.perf_counter() - start) * 1000
    return (
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
        elapsed,
    )


def check_probes(command: str, harness: str, project: str) -> Iterator[Finding]:
    """The synthetic deny and allow through the configured PreToolUse command."""
    words = shlex.split(command) if command.strip() else []
    program = next((word for word in words if word.endswith("dsh-policy")), "")
    if program and shutil.which(program) is None:
        yield Finding(
            "fail",
            "command",
            f"`{program}` is not on PATH here; the harness must find it on its "
            "PATH (or use an absolute path in the hook command)",
        )
    code, out, err, ms = run_probe(
        command, harness, project, probe_payload(harness, DENY_PROBE_COMMAND, project)
    )
    said = (err.strip() or out.strip()).splitlines()[-1:] or ["(nothing)"]
    if code == 2 and "[policy:" in err:
        yield Finding("ok", "deny probe", f"`{DENY_PROBE_COMMAND}` refused in {ms:.0f} ms: {said[0][:200]}")
    elif code == 2:
        yield Finding(
            "fail",
            "deny probe",
            f"`{DENY_PROBE_COMMAND}` was refused, but not by a policy rule ({ms:.0f} ms): {said[0][:200]}",
        )
    else:
        yield Finding(
            "fail",
            "deny probe",
            f"`{DENY_PROBE_COMMAND}` was not refused (exit {code}, {ms:.0f} ms): {said[0][:200]}",
        )
    code, out, err, ms = run_probe(
        command, harness, project, probe_payload(harness, ALLOW_PROBE_COMMAND, project)
    )
    if code == 0 and '"deny"' not in out:
        yield Finding("ok", "allow probe", f"`{ALLOW_PROBE_COMMAND}` allowed in {ms:.0f} ms")
    else:
        said = (err.strip() or out.strip()).splitlines()[-1:] or ["(nothing)"]
        yield Finding(
            "fail",
            "allow probe",
            f"`{ALLOW_PROBE_COMMAND}` was refused (exit {code}, {ms:.0f} ms): {said[0][:200]}",
        )


def check_gateway(spec: Any, digest: str | None) -> Iterator[Finding]:
    """The resident gateway of the deployment answers, with the policy the files compile to."""
    from dsh_policy.policy.hooks.gateway.client import query_gateway

    status = query_gateway(spec, "status")
    if isinstance(status, str):
        if os.environ.get("DSH_POLICY_GATEWAY", "").lower() == "off":
            yield Finding("warn", "gateway", "DSH_POLICY_GATEWAY=off: every hook decides in process (slow)")
        else:
            yield Finding("fail", "gateway", f"not reachable after the probes: {status}")
        return
    if digest is not None and status.get("policy_digest") != digest:
        yield Finding(
            "fail",
            "gateway",
            f"runs policy {str(status.get('policy_digest'))[:19]}, but the files "
            f"compile to {digest[:19]} (a broken edit keeps the last good policy; see its log)",
        )
    yield describe_status("gateway", status)
    behind = falling_behind(status)
    if behind is not None:
        yield Finding("warn", "gateway", behind)


def falling_behind(status: Mapping[str, Any]) -> str | None:
    """Why the gateway is not keeping up with its hooks (its status says so), or None."""
    load = status.get("load")
    decisions = load.get("decisions") if isinstance(load, Mapping) else None
    if not isinstance(decisions, Mapping) or not decisions.get("behind"):
        return None
    return (
        f"falling behind: {decisions.get('slow_waits_last_minute')} requests in the last minute waited "
        f"over a second for one of its {decisions.get('workers')} decision workers (longest "
        f"{decisions.get('max_wait_s')} s); hooks past the wait decide in process, slowly. Fewer "
        "parallel agents, or more cores, for this deployment"
    )


def describe_status(subject: str, status: Mapping[str, Any]) -> Finding:
    """A gateway's status answer as one finding (a failed audit writer fails it)."""
    return Finding(
        "ok" if status.get("ok") else "fail",
        subject,
        f"pid {status.get('pid')}, policy {str(status.get('policy_digest'))[:19]}, up "
        f"{float(str(status.get('uptime_s') or 0)):.1f} s, {status.get('decisions')} decisions served"
        + ("" if status.get("ok") else f", audit failure: {status.get('audit')}"),
    )
