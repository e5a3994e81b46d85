"""Issue 12's resource cases through real hook processes: wall time and peak memory per case.

Each case runs the shipped Claude Code command line (``sh -c "trap ...; dsh-policy hook ..."``)
against a fresh project whose deployment file loads the baseline pack plus the issue's plausible
native-engine rule (200 blocked words, ``(" " + args.command + " ").contains(...)``), and reports:
the exit code (2 = refused, the safe answer for PreToolUse), the wall time of the whole hook
process, and the peak RSS of the largest process in it (the deciding child). A control case (an
ordinary ``ls``) gives the cost of a hook run that decides normally, side by side.

    .venv/bin/python benchmarks/bench_limits.py          # writes benchmarks/results/limits.json

Each case runs in its own helper process, so ``RUSAGE_CHILDREN`` measures that case alone.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "limits.json"
BIN = Path(sys.executable).parent
WORDS = ROOT / "tests" / "limits" / "words_pack.yaml"  # the rule tests/limits decides
CASES = {
    "control: ls": "ls -la",
    "true; x 40,000": "true;" * 40_000,
    "a| x 100,000": "a|" * 100_000,
    "{ x 60,000 (one word)": "{" * 60_000,
    "{  x 60,000 (words)": "{ " * 60_000,
    "30 MiB argument, 200-word native rule": "x" * (30 << 20),
    "1 MiB argument (under the cap), same rule": "y" * ((1 << 20) - 64),
}


def _project(base: Path) -> Path:
    project = base / "project"
    (project / ".dsh" / "audit").mkdir(parents=True)
    (project / ".claude").mkdir()
    examples = ROOT / "examples" / "hooks"
    (project / ".claude" / "settings.json").write_text((examples / "claude-code-settings.json").read_text())
    (project / ".dsh" / "words.yaml").write_text(WORDS.read_text())
    text = (examples / "gateway.yaml").read_text()
    text = text.replace("[../../rules/baseline.yaml]", f"[{ROOT / 'rules' / 'baseline.yaml'}, words.yaml]")
    (project / ".dsh" / "gateway.yaml").write_text(text.replace("/work/app", str(project)))
    return project


def _one(project: Path, command: str) -> dict[str, object]:
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    line = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    payload = json.dumps(
        {
            "session_id": "bench",
            "hook_event_name": "PreToolUse",
            "cwd": str(project),
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }
    ).encode()
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "CLAUDE_PROJECT_DIR": str(project)}
    started = time.perf_counter()
    done = subprocess.run(
        ["/bin/sh", "-c", line],
        input=payload,
        capture_output=True,
        cwd=project,
        env=env,
        timeout=120,
        check=False,
    )
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "exit": done.returncode,
        "wall_s": round(wall, 2),
        "peak_rss_mib": round(peak, 1),
        "reason": done.stderr.decode(errors="replace").strip()[:160],
    }


def main() -> int:
    if len(sys.argv) == 3:  # a helper process: one case, printed as JSON
        print(json.dumps(_one(Path(sys.argv[1]), CASES[sys.argv[2]])))
        return 0
    rows: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as base:
        project = _project(Path(base))
        for name in CASES:
            out = subprocess.run(
                [sys.executable, __file__, str(project), name],
                capture_output=True,
                text=True,
                timeout=300,
                check=True,
            )
            rows[name] = json.loads(out.stdout)
            row = rows[name]
            assert isinstance(row, dict)
            print(
                f"{name:<44} exit {row['exit']}  {row['wall_s']:>6.2f} s  {row['peak_rss_mib']:>7.1f} MiB  "
                f"{str(row['reason'])[:70]}"
            )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
