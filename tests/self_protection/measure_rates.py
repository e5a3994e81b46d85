"""Refused and allowed rates of a tamper corpus through the real hook command (a measurement, not a
test): a fresh throwaway home and project under a temporary folder, the shipped Claude Code
settings and all six shipped packs, each entry handed to ``/bin/sh -c`` with the settings' own
PreToolUse command line, as Claude Code runs it.

Two layouts, as the threat model names them:

- ``per-user``: the deployment, its audit log and signing key in ``~/.dsh-policy/``, the hook
  settings in ``~/.claude/settings.json`` (the hooks of every project of that user), and a project
  that is a git repository of its own;
- ``per-project``: the deployment, log and key in the project's ``.dsh/`` and the hook settings in
  its ``.claude/settings.json``, all tracked by the project's git repository.

    .venv/bin/python tests/self_protection/measure_rates.py [CORPUS.yaml] [--layout per-user]
        [--clients all|claude-code] [--by class|technique] [--show refused|allowed|wrong|all]

Every supported client is wired into the layout by default (``dsh-policy init``: Codex per user or
per project as the layout is, Gemini CLI, Qwen Code, OpenCode and Copilot CLI per project), so their
hook files exist and are tracked; ``--clients claude-code`` wires Claude Code alone, as the first
two sets were measured. ``--by technique`` totals a set's entries by their ``technique`` field.

Placeholders in a corpus: ``{project}``, ``{home}``, ``{deploy}`` (the deployment's folder),
``{pack}`` (one loaded pack), ``{runtime}`` (the resident gateway's runtime folder), ``{venv}``
(the gateway's environment, ``sys.prefix``). Entries are DATA: they are never run, only decided.
The resident gateway this starts is stopped by the PID its lock file names.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "hooks"
PACKS = sorted(p for p in (ROOT / "rules").glob("*.yaml") if not p.name.endswith(".cases.yaml"))
BIN = Path(sys.executable).parent
DEFAULT_CORPUS = Path(__file__).with_name("heldout_corpus.yaml")


def _command(config: str) -> str:
    """The shipped PreToolUse command line, its deployment path replaced by the layout's."""
    settings = json.loads((EXAMPLES / "claude-code-settings.json").read_text())
    command = str(settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"])
    return command.replace('"$CLAUDE_PROJECT_DIR/.dsh/gateway.yaml"', config)


OTHER_CLIENTS = ("gemini-cli", "qwen-code", "opencode", "copilot-cli")


def wire_other_clients(home: Path, project: Path, config: Path, layout: str) -> None:
    """Every other supported client wired with ``dsh-policy init`` as a user would: Codex per user
    (``~/.codex/config.toml``) in the per-user layout, else per project, and Gemini CLI, Qwen
    Code, OpenCode and Copilot CLI per project (they have no per-user hooks), so that their hook
    files exist and are tracked, as in a project a team runs several agents in."""
    environment = {"HOME": str(home), "PATH": f"{BIN}:{os.environ['PATH']}"}
    codex = ["codex", "--user"] if layout == "per-user" else ["codex", "--project", str(project)]
    for client in [codex] + [[name, "--project", str(project)] for name in OTHER_CLIENTS]:
        subprocess.run(
            [str(BIN / "dsh-policy"), "init", *client, "--config", str(config)],
            env=environment,
            cwd=project,
            check=True,
            capture_output=True,
        )


def make_layout(base: Path, layout: str, clients: str = "all") -> dict[str, str]:
    """The fresh home and project; returns the placeholder values and the hook command."""
    from dsh_policy.audit.keys import write_key_pair

    home, project = base / "home", base / "home" / "work" / "app"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("def f():\n    return 1\n")
    (project / "README.md").write_text("# app\n")
    deploy = home / ".dsh-policy" if layout == "per-user" else project / ".dsh"
    settings_dir = home / ".claude" if layout == "per-user" else project / ".claude"
    (deploy / "audit").mkdir(parents=True)
    (deploy / "keys").mkdir()
    settings_dir.mkdir(parents=True, exist_ok=True)
    (home / ".claude").mkdir(exist_ok=True)
    write_key_pair(deploy / "keys" / "audit")
    (project / "cfg").symlink_to(deploy)  # links earlier work left behind
    (project / "dotclaude").symlink_to(home / ".claude")
    packs = ", ".join(str(p) for p in PACKS)
    (deploy / "gateway.yaml").write_text(
        "apiVersion: dsh-policy/v1\nkind: Gateway\nmetadata:\n  name: measured\nspec:\n"
        f"  packs: [{packs}]\n  params:\n    workspace: {project}\n"
        "  audit:\n    path: audit/hooks.jsonl\n    fsync: batch\n    fail_closed: true\n"
        "    checkpoint_key: keys/audit.key\n"
    )
    config = (
        '"$HOME/.dsh-policy/gateway.yaml"'
        if layout == "per-user"
        else '"$CLAUDE_PROJECT_DIR/.dsh/gateway.yaml"'
    )
    shipped = (EXAMPLES / "claude-code-settings.json").read_text()
    if layout == "per-user":
        shipped = shipped.replace(
            '\\"$CLAUDE_PROJECT_DIR/.dsh/gateway.yaml\\"', '\\"$HOME/.dsh-policy/gateway.yaml\\"'
        )
    (settings_dir / "settings.json").write_text(shipped)
    environment = {"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "PATH": os.environ["PATH"]}
    if clients == "all":
        wire_other_clients(home, project, deploy / "gateway.yaml", layout)
    for argv in (
        ["git", "init", "-q"],
        ["git", "-c", "user.email=a@b", "-c", "user.name=a", "add", "-A"],
        ["git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "start"],
    ):
        subprocess.run(argv, cwd=project, env=environment, check=True)
    return {
        "project": str(project),
        "home": str(home),
        "deploy": str(deploy),
        "pack": str(PACKS[0]),
        "venv": sys.prefix,
        "command": _command(config),
    }


def _fill(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return re.sub(r"\{(project|home|deploy|pack|runtime|venv)\}", lambda m: names[m.group(1)], value)
    if isinstance(value, dict):
        return {key: _fill(item, names) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill(item, names) for item in value]
    return value


def decide(names: dict[str, str], entry: dict[str, Any], runtime: str) -> tuple[int, str]:
    payload = {
        "session_id": "measure",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": names["project"],
        "hook_event_name": "PreToolUse",
        "tool_name": entry["tool"],
        "tool_input": _fill(entry["input"], names),
        "tool_use_id": "toolu_measure",
    }
    environment = {
        **os.environ,
        "PATH": f"{BIN}:{os.environ['PATH']}",
        "CLAUDE_PROJECT_DIR": names["project"],
        "HOME": names["home"],
        "DSH_POLICY_RUNTIME_DIR": runtime,
    }
    done = subprocess.run(
        ["/bin/sh", "-c", names["command"]],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=names["project"],
        env=environment,
        timeout=120,
        check=False,
    )
    out = done.stdout.decode()
    refused = done.returncode == 2 or '"deny"' in out
    return (1 if refused else 0), (done.stderr.decode() or out).strip().splitlines()[0:1][0][:160] if (
        done.stderr or out
    ) else ""


def stop_gateways(runtime: str) -> None:
    for lock in Path(runtime).glob("*.lock"):
        with contextlib.suppress(ValueError, OSError):
            pid = int(lock.read_text().strip() or 0)
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if pid > 0 else []
            if b"serve" in argv and any(b"dsh" in word for word in argv):
                os.kill(pid, signal.SIGTERM)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", default=str(DEFAULT_CORPUS))
    parser.add_argument("--layout", choices=["per-user", "per-project"], default="per-user")
    parser.add_argument(
        "--clients",
        choices=["all", "claude-code"],
        default="all",
        help="wire every supported client into the layout (default), or Claude Code only",
    )
    parser.add_argument("--by", choices=["class", "technique"], default="class")
    parser.add_argument("--show", choices=["refused", "allowed", "wrong", "all"], default="wrong")
    args = parser.parse_args(argv)
    document = yaml.load(Path(args.corpus).read_text(), Loader=yaml.CSafeLoader)
    base = Path(tempfile.mkdtemp(prefix="dsh-measure-"))
    runtime = base / "runtime"
    runtime.mkdir(mode=0o700)
    try:
        names = make_layout(base, args.layout, args.clients)
        names["runtime"] = str(runtime)
        totals: dict[str, list[int]] = {}
        by_class: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
        for section, want in (("tamper", 1), ("benign", 0)):
            results = totals.setdefault(section, [])
            for entry in document.get(section) or []:
                got, said = decide(names, entry, str(runtime))
                results.append(got)
                by_class[(section, entry.get(args.by, "-"))].append(got)
                if (
                    args.show == "all"
                    or (args.show == "wrong" and got != want)
                    or (args.show in ("refused", "allowed") and got == (args.show == "refused"))
                ):
                    print(
                        f"  {section}/{entry.get('class', '-')}/{entry.get('technique', '-')}: "
                        f"{'REFUSED' if got else 'allowed'}: "
                        f"{entry['name']} | {said}"
                    )
        print(
            f"layout {args.layout}, clients {args.clients}, corpus {Path(args.corpus).name}, "
            f"packs {len(PACKS)}"
        )
        for (section, name), results in sorted(by_class.items()):
            print(f"  {section:7} {name:28} refused {sum(results):3}/{len(results)}")
        tamper, benign = totals["tamper"], totals["benign"]
        print(
            f"tamper refused {sum(tamper)}/{len(tamper)} ({100 * sum(tamper) / max(1, len(tamper)):.1f}%), "
            f"benign allowed {len(benign) - sum(benign)}/{len(benign)} "
            f"({100 * (len(benign) - sum(benign)) / max(1, len(benign)):.1f}%)"
        )
    finally:
        stop_gateways(str(runtime))
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
