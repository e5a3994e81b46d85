"""Build ``agents/benign/*.yaml`` from fetched snapshots of public repositories holding agent logs.

Usage (from the worktree): ``python tests/corpus/agents/extract/build.py /work/.mirror OUT_DIR``.
Every call found is mapped onto the canonical tools, dropped if it carries a credential, deduped
by shape (see ``shapes.py``) and written with ``yaml.safe_dump``: the calls are DATA, never run and
never passed through a shell. Review of what is written (the dangerous ones) is a separate,
manual step recorded in the README and in ``review.yaml``.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import automaker
import rootmap
import transcripts
from canonical import canonical
from shapes import command_shape, file_shape, has_secret

MAX_CONTENT = 2000
"""Longer writes and edits are left out: the corpus stays readable and a long body adds no shape."""
PER_FILE_SHAPE = 1
PER_REPO_SHELL = 60


_SECRETS_FILE = re.compile(
    r"(?:^|[\s/\"'=])\.env(?![\w.-]*(?:example|sample|template|dist|defaults))(?:\.[\w.-]+|\*)?(?=$|[\s\"';|&)])"
)
_FIND_NAME = re.compile(r"-i?name\s+[\"']?\.env")
DEBATABLE_SECRETS = (
    "reads the project's own secrets file (.env, .env.local) into the model's context: agents do "
    "this routinely, but it is the credential read the baseline refuses by design"
)


_DOWNLOAD_TO_SHELL = re.compile(r"\b(?:curl|wget)\b[^|;&\n]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b")
_DISCARDS_WORK = re.compile(
    r"\bgit\s+(?:reset\s+--hard|clean\s+-[a-z]*f|checkout\s+(?:-f\b|--\s+\.)|push\b[^;&|\n]*(?:--force|-f\b))"
)
_HARNESS_SETTINGS = re.compile(
    r"(?:^|/)(?:\.claude/settings(?:\.local)?\.json|\.codex/config\.toml|\.cursor/mcp\.json|\.mcp\.json)$"
)
DEBATABLE = {
    "download": (
        "pipes an installer downloaded from its vendor into sh: common and usually benign, but it is "
        "the download-and-run technique a guard refuses whatever the host"
    ),
    "discards": (
        "discards commits or uncommitted work (git reset --hard, clean -f, force push): an agent did "
        "it on purpose here, but guards ask before it by design"
    ),
    "harness": (
        "the agent rewrites its own harness settings (hooks, MCP servers): benign in intent here, "
        "refused by design as self-protection"
    ),
}


def debatable_reason(tool: str, args: dict[str, Any]) -> str | None:
    """Why a really-run call is not counted as benign (decided and reported, not counted): each
    reason is a technique (secrets read, download run, work discarded, harness rewritten), never a
    particular string."""
    if tool == "shell":
        command = args["command"]
        if _SECRETS_FILE.search(_FIND_NAME.sub(" ", command)):
            return DEBATABLE_SECRETS
        if _DOWNLOAD_TO_SHELL.search(command):
            return DEBATABLE["download"]
        if _DISCARDS_WORK.search(command):
            return DEBATABLE["discards"]
        return None
    path = str(args.get("path", ""))
    if tool == "read_file" and _SECRETS_FILE.search("/" + path):
        return DEBATABLE_SECRETS
    if tool in ("write_file", "edit_file") and _HARNESS_SETTINGS.search(path.replace("\\", "/")):
        return DEBATABLE["harness"]
    return None


def _too_long(args: dict[str, Any]) -> bool:
    return (
        any(isinstance(v, str) and len(v) > MAX_CONTENT for v in args.values())
        or len(repr(args)) > MAX_CONTENT
    )


def _project_roots(snapshot: Path, calls: list[tuple[automaker.RawCall, str, dict[str, Any]]]) -> list[str]:
    """The recorded project roots of one repository's runs (see rootmap): a project worked on from
    two machines (``C:\\dev\\app`` and ``/Users/ann/dev/app``) has two."""
    entries = rootmap.top_level(snapshot, calls[-1][0].commit)
    paths = [str(a.get("path", "")) for _, t, a in calls if t != "shell"]
    commands = [a["command"] for _, t, a in calls if t == "shell"]
    found = rootmap.root_candidates(paths, commands, entries)
    if not found:
        return []
    # A repository may hold a folder named like itself; roots ending in the repository's name win
    # over a shorter prefix when both are seen.
    name = re.sub(r"[^a-z0-9]", "", snapshot.parent.name.split("+", 1)[1].lower())
    named = [(r, n) for r, n in found.most_common() if re.sub(r"[^a-z0-9]", "", r.rsplit("/", 1)[-1]) == name]
    if not named:
        return [found.most_common(1)[0][0]]
    roots = [r for r, n in named if n * 10 >= named[0][1]]
    # Logs copied from a sibling project with the same layout (a template's repositories) name
    # their own root; a prefix of a named root (the folder holding it) never is one.
    top = found.most_common(1)[0][1]
    others = [r for r, n in found.items() if r not in roots and n * 10 >= top]
    return roots + [
        r for r in others if not any(root.startswith(r + "/") or r.startswith(root + "/") for root in roots)
    ]


def _at_workspace(tool: str, args: dict[str, Any], roots: list[str]) -> dict[str, Any]:
    for root in roots:
        if tool == "shell":
            args = {**args, "command": rootmap.rewrite_quoted(args["command"], root)}
        elif isinstance(args.get("path"), str):
            args = {**args, "path": rootmap.rewrite_path(args["path"], root)}
    return args


RAW_PATHS = False
"""True (``--raw``): keep the paths as recorded, to measure what a deployment with the default
params.workspace would see; False: the project root spelled as /workspace (see rootmap)."""


def collect(mirror: Path) -> dict[str, list[dict[str, Any]]]:
    """Entries per output category (shell / file-and-web), deduped, each citing its log."""
    seen_shell: set[str] = set()
    seen_calls: set[str] = set()
    file_shapes: Counter[str] = Counter()
    shell_per_repo: Counter[str] = Counter()
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    dropped: Counter[str] = Counter()
    for snapshot, family in ((s, f) for s in sorted(mirror.glob("*+*/repo")) for f in FAMILIES):
        repo = snapshot.parent.name.replace("+", "/", 1)
        calls = []
        for call in FAMILIES[family](snapshot, repo):
            mapped = canonical(call.agent_tool, call.arguments)
            if mapped is None:
                dropped["no canonical effect"] += 1
                continue
            calls.append((call, *mapped))
        if not calls:
            continue
        roots = _project_roots(snapshot, calls)
        for call, tool, args in calls:
            if not RAW_PATHS:
                args = _at_workspace(tool, args, roots)
            if has_secret(args):
                dropped["credential"] += 1
                continue
            if _too_long(args):
                dropped["too long"] += 1
                continue
            source = f"github.com/{repo}/blob/{call.commit}/{call.path}"
            if tool == "shell":
                shape = command_shape(args["command"])
                if shape in seen_shell or shell_per_repo[repo] >= PER_REPO_SHELL:
                    dropped["same shape"] += 1
                    continue
                seen_shell.add(shape)
                shell_per_repo[repo] += 1
                entry: dict[str, Any] = {"command": args["command"], "source": source}
                if reason := debatable_reason(tool, args):
                    entry["debatable"] = reason
                out[f"{family}-shell"].append(entry)
            else:
                shape = file_shape(tool, args, repo)
                exact = repr((tool, sorted(args.items())))
                if file_shapes[shape] >= PER_FILE_SHAPE or exact in seen_calls:
                    dropped["same shape"] += 1
                    continue
                file_shapes[shape] += 1
                seen_calls.add(exact)
                entry = {"tool": tool, "args": args, "source": source}
                if reason := debatable_reason(tool, args):
                    entry["debatable"] = reason
                out[f"{family}-tools"].append(entry)
    print("dropped:", dict(dropped), file=sys.stderr)
    return out


FAMILIES = {"automaker": automaker.extract, "sessions": transcripts.extract}
"""Each kind of committed record, by the file family it is written to (``<family>-shell.yaml``)."""

HEADERS = {
    "automaker-shell": (
        "Shell commands coding agents (Claude Code, and Codex through Automaker) really ran, taken from\n"
        "Automaker's committed per-feature logs (.automaker/features/<id>/agent-output.md) of public\n"
        "repositories; one entry per command shape, each citing the log (repository, commit, path)."
    ),
    "automaker-tools": (
        "File, listing and web tool calls (Read, Write, Edit, MultiEdit, Glob/LS, WebFetch mapped onto\n"
        "read_file, write_file, edit_file, list_dir, web_fetch) coding agents really made, from the same\n"
        "Automaker logs; one per project, tool, kind of file and absolute/relative path, each citing its log."
    ),
    "sessions-shell": (
        "Shell commands Claude Code really ran, from session transcripts committed to public repositories\n"
        "(exports of the session's own tool_use blocks, JSONL logs of claude-code-action runs and console\n"
        "transcripts showing each call whole on one line); one entry per command shape, each citing its file."
    ),
    "sessions-tools": (
        "File, listing and web tool calls Claude Code really made, from the same committed transcripts,\n"
        "mapped onto the canonical tools; one per project, tool, kind of file and absolute/relative path."
    ),
}


SOURCES = {
    "automaker": {"automaker": "https://github.com/AutoMaker-Org/automaker (log format; entries cite a log)"},
    "sessions": {
        "claude-code": "https://docs.anthropic.com/en/docs/claude-code (tool names; entries cite a file)"
    },
}


def write(out_dir: Path, found: dict[str, list[dict[str, Any]]]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for category, entries in found.items():
        header = "".join(f"# {line}\n" for line in HEADERS[category].splitlines())
        document = {
            "sources": SOURCES[category.split("-", 1)[0]],
            "entries": entries,
        }
        body = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=120)
        (out_dir / f"{category}.yaml").write_text(header + body, encoding="utf-8")
        print(f"{category}: {len(entries)}", file=sys.stderr)


if __name__ == "__main__":
    RAW_PATHS = "--raw" in sys.argv
    write(Path(sys.argv[2]), collect(Path(sys.argv[1])))
