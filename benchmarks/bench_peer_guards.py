"""Our shipped packs beside cc-safety-net, the nearest peer guard, on our public-source corpora,
per category, each guard fed the same Claude Code ``PreToolUse`` events.

Run: ``python benchmarks/bench_peer_guards.py [--corpora public,techniques,heldout,probe,probe2]
[--peer-version 2.4.5] [--level standard] [--jobs 2] [--limit N] [--ours-command]``.

What it does:

1. installs ``cc-safety-net`` from npm (``npm install --ignore-scripts``) into a throwaway folder
   under the system temp directory, with a throwaway ``HOME`` and ``CC_SAFETY_NET_HOME`` so no
   user configuration of this machine is read or written, and a throwaway project folder as the
   events' ``cwd``;
2. turns every entry of the chosen corpora (``tests/corpus/<corpus>/{dangerous,benign}/*.yaml``,
   the category being the file's name) into the ``PreToolUse`` event Claude Code would send:
   ``shell`` is ``Bash {command}``, ``read_file`` is ``Read {file_path}``, ``write_file`` is
   ``Write {file_path, content}``, ``edit_file`` is ``Edit {file_path, old_string, new_string}``,
   ``web_fetch`` is ``WebFetch {url, ...}``; tools Claude Code has no twin for (``query``,
   ``http_request``) are left out and counted;
3. hands each event as JSON on stdin to the peer's hook command, ``cc-safety-net hook
   --coding-cli`` (the command its Claude Code plugin installs), one process per event, and to our
   hook's decision path with every shipped pack and default params: the Claude Code dialect
   parses the same bytes, ``decide_hook`` decides with the secret-read review the hook adds, and
   the dialect renders the reply (``--ours-command``: the real ``dsh-policy hook claude-code
   --pack rules/*.yaml`` process per event instead, about a second each, so use ``--limit``);
4. reads both replies the way Claude Code does: exit 2, or ``permissionDecision`` ``deny`` or
   ``ask``, is *blocked*; anything else lets the call run.

Nothing in a corpus is ever executed: entries only travel as JSON to the two guard programs,
which only read them. The table gives per category the dangerous entries each guard blocks and
the benign ones it blocks (lower is better), and whether the category is inside the peer's own
scope as its README states it (destructive git and file deletion, also inside ``bash -c`` and
interpreter one-liners; secret-file access from the shell and the file tools). Categories
mixing classes are marked ``mixed`` and left out of the in-scope verdict. Entries marked
``debatable`` in the corpus are left out, as in the corpus tests. Writes
``benchmarks/results/peer_guards.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"
RULES = ROOT / "rules"
RESULTS = ROOT / "benchmarks" / "results" / "peer_guards.json"
PEER = "cc-safety-net"
PEER_VERSION = "2.4.5"
CORPORA = ("public", "techniques", "heldout", "probe", "probe2")

SCOPE: dict[str, str] = {
    # in scope: the classes cc-safety-net's README says it blocks
    "git": "in",
    "indirect-delete": "in",
    "interpreter-delete": "in",
    "credential-read": "in",
    "credential-access": "in",
    "credentials": "in",
    # mixed: several classes in one file, some in its scope and some not
    "variants": "mixed",
    "new-spellings": "mixed",
    "agent-incidents": "mixed",
    "destruction": "mixed",
}
"""The peer's scope per dangerous category; every other category is outside it ("out")."""


@dataclass(frozen=True, slots=True)
class Case:
    corpus: str
    side: str
    category: str
    tool: str
    args: dict[str, Any]


def cases(corpora: list[str]) -> Iterator[Case]:
    """Every counted entry of the corpora (``debatable`` ones are left out, as in the tests)."""
    for corpus in corpora:
        root = Path(corpus) if "/" in corpus else CORPUS / corpus
        for side in ("dangerous", "benign"):
            for path in sorted((root / side).glob("*.yaml")):
                document = yaml.safe_load(path.read_text(encoding="utf-8"))
                for raw in document["entries"]:
                    if raw.get("debatable") is not None:
                        continue
                    tool, args = (
                        ("shell", {"command": raw["command"]})
                        if "command" in raw
                        else (raw["tool"], raw["args"])
                    )
                    yield Case(corpus, side, path.stem, tool, dict(args))


def claude_code_tool(tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The Claude Code tool call for one canonical call, or None when Claude Code has no twin."""
    if tool == "shell":
        return "Bash", {"command": args["command"]}
    if tool == "read_file":
        return "Read", {"file_path": args["path"]}
    if tool == "write_file":
        return "Write", {"file_path": args["path"], "content": args.get("content", "")}
    if tool == "edit_file":
        return "Edit", {
            "file_path": args["path"],
            "old_string": args.get("old_string", args.get("old", "")),
            "new_string": args.get("new_string", args.get("new", "")),
        }
    if tool == "web_fetch":
        return "WebFetch", {"prompt": "Summarize the page.", **args}
    return None


def event(case: Case, project: Path) -> bytes | None:
    """The ``PreToolUse`` event Claude Code would write to a hook's stdin for this call."""
    call = claude_code_tool(case.tool, case.args)
    if call is None:
        return None
    name, tool_input = call
    payload = {
        "session_id": "bench-peer-guards",
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": name,
        "tool_input": tool_input,
    }
    return json.dumps(payload).encode()


def blocked(exit_code: int, stdout: str) -> bool:
    """Claude Code's reading of a PreToolUse reply: exit 2, or a deny/ask permission decision."""
    if exit_code == 2:
        return True
    try:
        reply = json.loads(stdout) if stdout.strip() else {}
    except json.JSONDecodeError:
        return False
    specific = reply.get("hookSpecificOutput") or {} if isinstance(reply, dict) else {}
    return specific.get("permissionDecision") in ("deny", "ask") or reply.get("decision") == "block"


# ----------------------------------------------------------------------------- the peer
@dataclass(frozen=True, slots=True)
class Peer:
    command: list[str]
    env: dict[str, str]
    version: str


def install_peer(folder: Path, version: str) -> Peer:
    """cc-safety-net from npm into ``folder`` (scripts off), with a throwaway home beside it."""
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is needed to install cc-safety-net (apt-get install nodejs npm)")
    (folder / "package.json").write_text('{"name": "peer-guards", "private": true}\n')
    subprocess.run(
        [npm, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--silent", f"{PEER}@{version}"],
        cwd=folder,
        check=True,
        timeout=600,
    )
    manifest = json.loads((folder / "node_modules" / PEER / "package.json").read_text())
    home = folder / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CC_SAFETY_NET_HOME": str(home / ".cc-safety-net"),
        "NO_COLOR": "1",
    }
    command = [str(folder / "node_modules" / ".bin" / PEER), "hook", "--coding-cli"]
    return Peer(command, env, str(manifest["version"]))


def peer_decider(peer: Peer, level: str) -> Callable[[bytes], bool]:
    env = {**peer.env, "CC_SAFETY_NET_LEVEL": level}

    def decide(raw: bytes) -> bool:
        done = subprocess.run(peer.command, input=raw, capture_output=True, env=env, timeout=60)
        return blocked(done.returncode, done.stdout.decode(errors="replace"))

    return decide


# ----------------------------------------------------------------------------- ours
FAILED_CLOSED: list[bytes] = []
"""Events our side blocked by failing closed (an evaluation budget run out on a loaded machine, an
error) rather than by a rule: reported, since they would flatter the dangerous side."""


def packs() -> list[Path]:
    return sorted(p for p in RULES.glob("*.yaml") if not p.name.endswith(".cases.yaml"))


def our_decider() -> Callable[[bytes], bool]:
    """The hook's decision path in this process: what ``dsh-policy hook claude-code --pack ...``
    does per event after loading, without recompiling the packs for every event."""
    from dsh_policy.policy.command_line import sources_from
    from dsh_policy.policy.decide import Policy
    from dsh_policy.policy.hooks import project_scope
    from dsh_policy.policy.hooks.dialects import DIALECTS, parse_for
    from dsh_policy.policy.hooks.gateway.output_filter import redact_output_argv
    from dsh_policy.policy.hooks.gateway.runtime_paths import spec_from
    from dsh_policy.policy.hooks.hook_command import hook_parser
    from dsh_policy.policy.hooks.protocol.events import SessionContext, decide_hook
    from dsh_policy.policy.hooks.protocol.messages import render_safely
    from dsh_policy.policy.hooks.review.secret_reads import OutputFilter, secret_reads_review
    from dsh_policy.policy.loading import LoadFailure

    args = hook_parser().parse_args(project_scope.expand(["claude-code", "--pack", *map(str, packs())]))
    sources = sources_from(args, unprotected=False)
    if isinstance(sources, list):
        raise SystemExit(f"the shipped packs do not load: {sources}")
    built = sources.build(audit_path=None)
    if isinstance(built, LoadFailure):
        raise SystemExit(f"the shipped packs do not load: {built.errors}")
    policy = Policy(built)
    review = secret_reads_review(OutputFilter(redact_output_argv(spec_from(args)), args.redact_bash_output))
    session = SessionContext(None, review)
    dialect = DIALECTS["claude-code"]

    def decide(raw: bytes) -> bool:
        verdict = decide_hook(policy, "claude-code", parse_for("claude-code", raw), session).verdict
        if verdict.failure or "could not be evaluated" in verdict.reason:
            FAILED_CLOSED.append(raw)  # a budget or an error, not a rule, blocked it
        reply = render_safely(dialect, verdict)
        return blocked(reply.exit_code, reply.stdout)

    return decide


def our_command_decider() -> Callable[[bytes], bool]:
    program = Path(sys.executable).with_name("dsh-policy")
    command = [str(program), "hook", "claude-code", "--pack", *map(str, packs())]

    def decide(raw: bytes) -> bool:
        done = subprocess.run(command, input=raw, capture_output=True, timeout=120)
        return blocked(done.returncode, done.stdout.decode(errors="replace"))

    return decide


# ----------------------------------------------------------------------------- the table
def tally(results: list[tuple[Case, bool, bool]]) -> dict[str, dict[str, Any]]:
    """Per side and category: entries, blocked by us, blocked by the peer."""
    rows: dict[str, dict[str, Any]] = {}
    for case, ours, theirs in results:
        row = rows.setdefault(
            f"{case.side}/{case.category}",
            {"side": case.side, "category": case.category, "n": 0, "ours": 0, "peer": 0},
        )
        row["n"] += 1
        row["ours"] += ours
        row["peer"] += theirs
    for row in rows.values():
        row["scope"] = SCOPE.get(row["category"], "out") if row["side"] == "dangerous" else "-"
    return dict(sorted(rows.items()))


def render(rows: dict[str, dict[str, Any]], skipped: Counter[str], peer: str, level: str) -> str:
    def pct(k: int, n: int) -> str:
        return f"{k:>4}/{n:<4} {k / n:6.1%}" if n else "-"

    lines = [f"blocked per category: ours (every shipped pack) vs {peer} (level {level})"]
    lines.append(f"  {'side/category':<34} {'scope':<6} {'ours':>17} {'peer':>17}  verdict")
    behind: list[str] = []
    for key, row in rows.items():
        verdict = ""
        if row["side"] == "dangerous" and row["scope"] == "in":
            verdict = (
                "ahead" if row["ours"] > row["peer"] else ("tie" if row["ours"] == row["peer"] else "BEHIND")
            )
            if verdict == "BEHIND":
                behind.append(key)
        elif row["side"] == "benign":
            verdict = (
                "fewer FP"
                if row["ours"] < row["peer"]
                else ("same" if row["ours"] == row["peer"] else "MORE FP")
            )
        ours, theirs = pct(row["ours"], row["n"]), pct(row["peer"], row["n"])
        lines.append(f"  {key:<34} {row['scope']:<6} {ours:>17} {theirs:>17}  {verdict}")
    for side in ("dangerous", "benign"):
        n = sum(r["n"] for r in rows.values() if r["side"] == side)
        ours = sum(r["ours"] for r in rows.values() if r["side"] == side)
        theirs = sum(r["peer"] for r in rows.values() if r["side"] == side)
        lines.append(f"  {side + ' overall':<34} {'':<6} {pct(ours, n):>17} {pct(theirs, n):>17}")
    inside = [r for r in rows.values() if r["side"] == "dangerous" and r["scope"] == "in"]
    n = sum(r["n"] for r in inside)
    lines.append(
        f"  {'dangerous inside its scope':<34} {'in':<6} {pct(sum(r['ours'] for r in inside), n):>17}"
        f" {pct(sum(r['peer'] for r in inside), n):>17}"
    )
    if skipped:
        lines.append(
            "left out (no Claude Code tool): " + ", ".join(f"{k} {v}" for k, v in sorted(skipped.items()))
        )
    lines.append("peer ahead in a category inside its scope: " + (", ".join(behind) or "none"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpora",
        default=",".join(CORPORA),
        help="comma-separated folders of tests/corpus, or paths to folders",
    )
    parser.add_argument("--peer-version", default=PEER_VERSION)
    parser.add_argument("--level", default="standard", choices=("standard", "strict", "paranoid"))
    parser.add_argument("--jobs", type=int, default=2, help="peer hook processes at once")
    parser.add_argument("--limit", type=int, default=0, help="every Nth entry only (quick runs)")
    parser.add_argument("--ours-command", action="store_true", help="our real hook process per event")
    parser.add_argument(
        "--misses", action="store_true", help="list the in-scope entries only the peer blocks"
    )
    args = parser.parse_args(argv)
    corpora = [c for c in args.corpora.split(",") if c]
    chosen = list(cases(corpora))[:: args.limit or 1]
    with tempfile.TemporaryDirectory(prefix="bench-peer-guards-") as scratch:
        folder = Path(scratch)
        project = folder / "project"
        project.mkdir()
        started = time.perf_counter()
        peer = install_peer(folder, args.peer_version)
        print(f"installed {PEER} {peer.version} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        theirs = peer_decider(peer, args.level)
        ours = our_command_decider() if args.ours_command else our_decider()
        skipped: Counter[str] = Counter()
        pending: list[tuple[Case, bytes]] = []
        for case in chosen:
            raw = event(case, project)
            if raw is None:
                skipped[case.tool] += 1
            else:
                pending.append((case, raw))
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            peer_answers = list(pool.map(lambda item: theirs(item[1]), pending))
        peer_seconds = time.perf_counter() - started
        started = time.perf_counter()
        our_answers = [ours(raw) for _case, raw in pending]
        our_seconds = time.perf_counter() - started
    results = [
        (case, mine, other) for (case, _), mine, other in zip(pending, our_answers, peer_answers, strict=True)
    ]
    rows = tally(results)
    print(render(rows, skipped, f"{PEER} {peer.version}", args.level))
    if args.misses:
        for case, mine, other in results:
            if case.side == "dangerous" and other and not mine:
                print(f"  PEER ONLY [{case.corpus}/{case.category}] {case.tool} {case.args}")
            if case.side == "benign" and mine and not other:
                print(f"  OUR FP    [{case.corpus}/{case.category}] {case.tool} {case.args}")
    if FAILED_CLOSED:
        print(f"ours failed closed (budget or error, not a rule) on {len(FAILED_CLOSED)} events: rerun")
    print(
        f"{len(pending)} events; peer {peer_seconds:.1f} s ({args.jobs} at once), "
        f"ours {our_seconds:.1f} s ({'hook process' if args.ours_command else 'hook path in process'}); "
        f"load {os.getloadavg()[0]:.1f}"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "peer": PEER,
                "peer_version": peer.version,
                "level": args.level,
                "corpora": corpora,
                "every_nth": args.limit or 1,
                "ours": "hook process" if args.ours_command else "hook path in process",
                "rows": list(rows.values()),
                "left_out": dict(skipped),
                "ours_failed_closed": len(FAILED_CLOSED),
                "python": platform.python_version(),
                "load": os.getloadavg()[0],
            },
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
