"""Techniques judged over a whole call rather than one path: the options that write (the
programs' table in :mod:`dsh_policy.cmdline.writers`), copies and recursive reads of a folder that
holds the signing key, nested harnesses without their hooks, MCP server entries (judged as the
commands they run), the resident gateway's processes and environment, and filling its log's disk.

Each function takes the call's :class:`~.scan.CallScan` (paths resolved against the line's working
folders, links and letter case) and returns a refusal or ``None``.
"""

from __future__ import annotations

import fnmatch
import os
import shlex
from collections import deque
from collections.abc import Sequence
from typing import Protocol

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.writers import (
    copies_trees,
    follows_links,
    reads_recursively,
    stow_target,
    tar_members,
    written_operands,
)
from dsh_policy.policy.self_protection import agents, gateway_commands, processes, vcs
from dsh_policy.policy.self_protection.locations import PROJECT_HOOK_FILES, Protected
from dsh_policy.policy.self_protection.refusals import KIND_TEXT, RULE_PREFIX, Refusal, message, refusal


class ProtectedSet(Protocol):
    """What the techniques read of the protected set (:class:`.protection.SelfProtection`)."""

    @property
    def entries(self) -> tuple[Protected, ...]: ...
    @property
    def secrets(self) -> tuple[Protected, ...]: ...
    @property
    def home(self) -> str: ...
    def protected(self, path: str, extra: Sequence[Protected] = ()) -> Protected | None: ...
    def holds_protected(self, folder: str, extra: Sequence[Protected] = ()) -> Protected | None: ...


class CallScan(Protocol):
    """What the techniques use of one call's scan (:class:`.scan.CallScan`; typed here so that
    this module does not import the scan that calls it)."""

    @property
    def protection(self) -> ProtectedSet: ...
    @property
    def cwd(self) -> str: ...
    @property
    def bases(self) -> list[str]: ...
    @property
    def local(self) -> list[Protected]: ...
    @property
    def moves(self) -> list[str]: ...
    def hit(self, word: str, *, folders: bool) -> Protected | None: ...
    def candidates(self, word: str) -> list[str]: ...
    def expand(self, word: str) -> str: ...
    def shell(self, line: str, tool: str) -> Refusal | None: ...
    def nested(self) -> CallScan: ...


_MAX_NESTED = 8
_INSTALL_VERBS = lazy_compile(r"\b(?:install|uninstall|remove|sync|add|upgrade)\b")
_INSTALLER_PATH = lazy_compile(
    r"""(?:^|[\s;&|('"`])([^\s;&|('"`]*/(?:pip|python|uv|poetry|pdm|conda)[0-9.]*)(?=[\s'"]|$)"""
)  # MCP entries judged inside one call (each is a whole check)


def _refuse(kind: str, action: str) -> Refusal:
    return Refusal(f"{RULE_PREFIX}/{kind}", message(action, KIND_TEXT[kind]))


def option_writes(scan: CallScan, argv: Sequence[str]) -> Refusal | None:
    """Files and folders the program's documented options write (``curl -oFILE``, ``tar -C``,
    ``patch -d``), and unpacking into a protected folder the line moved into."""
    written = written_operands(argv)
    program = os.path.basename(argv[0])
    for word in written.files:
        found = scan.hit(word, folders=False)
        if found is not None:
            return refusal(found, f"{program} would write {word}")
    for word in written.folders:
        found = scan.hit(word, folders=True)
        if found is not None:
            return refusal(found, f"{program} would write into {word}")
    if program == "stow":
        linked = stow_links(scan, argv)
        if linked is not None:
            return linked
    if written.unpacks_here:
        # The folder the line runs in, once it moved (``cd ~/.claude && tar x``); the session's
        # own folder is the project, where unpacking is ordinary work.
        for base in scan.bases[1:]:
            found = scan.protection.protected(base, scan.local) or scan.protection.holds_protected(
                base, scan.local
            )
            if found is not None:
                return refusal(found, f"{program} would unpack into {base}")
    return None


def stow_links(scan: CallScan, argv: Sequence[str]) -> Refusal | None:
    """The links ``stow PACKAGE...`` makes in its target folder, one per file of each package
    (read now): a link where a hook file is, or is missing, hands that file to the package's
    content. A package that does not exist links nothing."""
    words = list(argv[1:])
    target, packages_dir = stow_target(words), "."
    for index, word in enumerate(words):
        name, equals, value = word.partition("=")
        if name in ("-d", "--dir"):
            packages_dir = value if equals else (words[index + 1] if index + 1 < len(words) else ".")
    valued = {"-d", "--dir", "-t", "--target", "--ignore", "--defer", "--override"}
    packages = [w for i, w in enumerate(words) if w[:1] != "-" and (i == 0 or words[i - 1] not in valued)]
    for package in packages:
        for folder in scan.candidates(os.path.join(packages_dir, package))[:1]:
            for path in files_within(folder, True)[1:]:
                relative = os.path.relpath(path, folder)
                found = scan.hit(os.path.join(target, relative), folders=False)
                if found is not None:
                    linked = os.path.join(target, relative)
                    return refusal(found, f"stow would link {linked} to {package}'s copy")
    return None


def secret_trees(scan: CallScan, argv: Sequence[str]) -> Refusal | None:
    """Copying, packing or recursively reading a folder that holds the signing key, at any depth
    (its own folder, the deployment's, home): with the key, a rewritten log can be re-signed."""
    secrets = scan.protection.secrets
    if not secrets:
        return None
    copying, reading = copies_trees(argv), reads_recursively(argv)
    if not (copying or reading):
        return None
    program = os.path.basename(argv[0])
    follows = follows_links(argv)
    if (
        program in ("rg", "ag")
        and not follows
        and not any(w in ("--hidden", "-uu", "-uuu", "-.") for w in argv[1:])
    ):
        return None  # they skip dot folders, where keys live, unless told otherwise
    bases = list(scan.bases)  # the session's folder and every folder the line moved into
    words = list(argv[1:])
    keys = [s for s in secrets if s.kind == "signing-key"] or list(secrets)
    if program in ("tar", "bsdtar"):  # each member where its ``-C`` puts it
        members = [
            (word, [folder] if folder is not None else bases) for folder, word in tar_members(words)
        ]
    else:
        for index, word in enumerate(words):
            if word in ("-C", "--directory") and index + 1 < len(words):
                bases.extend(scan.candidates(words[index + 1])[:1])
        members = [(w, bases) for w in words if not w.startswith("-")]
    for word, folders in members or [(".", bases)]:
        for base in folders:
            joined = word if os.path.isabs(scan.expand(word)) else os.path.join(base, word)
            for candidate in scan.candidates(joined):
                for key in keys:
                    if _ancestor(candidate, key.path) and (copying or candidate != scan.cwd):
                        verb = "copy" if copying else "read"
                        return refusal(key, f"{program} would {verb} {word}, which holds the signing key")
                if follows:
                    found = _link_to_secret(candidate, keys)
                    if found is not None:
                        key, link = found
                        verb = "copy" if copying else "read"
                        return refusal(
                            key,
                            f"{program} follows links: it would {verb} {link}, which leads to the key",
                        )
    return None


_WALK_LIMIT = 4000  # entries looked at under one folder a link-following copy is given
_WALK_DEPTH = 6
_WALK_SKIP = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache"})


def _link_to_secret(folder: str, keys: Sequence[Protected]) -> tuple[Protected, str] | None:
    """A symbolic link under ``folder`` that leads to a key or a folder holding one (a program
    that follows links copies or reads what it leads to). Bounded: a link-following copy of a
    huge tree is judged on its first few thousand entries, shallowest first. ``os.scandir``
    knows each entry's type from the directory itself, so the walk costs no ``lstat`` per entry
    (this runs for every ``grep -R`` and ``zip -r``)."""
    if not os.path.isdir(folder):
        return None
    seen = 0
    pending = deque([(folder, 0)])
    while pending:
        root, depth = pending.popleft()
        try:
            entries = os.scandir(root)
        except OSError:
            continue
        with entries:
            for entry in entries:
                seen += 1
                if seen > _WALK_LIMIT:
                    return None
                if entry.is_symlink():
                    real = os.path.realpath(entry.path)
                    for key in keys:
                        if real == key.path or _ancestor(real, key.path):
                            return key, entry.path
                elif depth < _WALK_DEPTH and entry.name not in _WALK_SKIP and _is_folder(entry):
                    pending.append((entry.path, depth + 1))
    return None


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def files_within(path: str, tree: bool) -> list[str]:
    """``path`` and, for a protected folder, the files in it now (a bounded walk): what a
    ``find`` name test is matched against (``find .opencode -name '*.js' -delete`` selects the
    plugin inside the protected folder, not the folder's own name)."""
    found = [path]
    if not tree:
        return found
    for root, folders, files in os.walk(path):
        folders[:] = [f for f in folders if f not in _WALK_SKIP]
        found.extend(os.path.join(root, name) for name in (*files, *folders))
        if len(found) > _WALK_LIMIT or root.count("/") - path.count("/") >= _WALK_DEPTH:
            break
    return found


def find_selects(candidates: Sequence[Protected], names: Sequence[str], folded: bool) -> bool:
    """Whether a ``find``'s name tests (``-name``, ``-path``, ``-regex``; folded for ``-iname``)
    could select a protected entry or a file inside a protected folder."""
    paths = [p.lower() if folded else p for e in candidates for p in files_within(e.path, e.tree)]
    return any(
        fnmatch.fnmatch(os.path.basename(path), name)
        or fnmatch.fnmatch(path, name)
        or name.startswith("-regex")
        for path in paths
        for name in names
    )


def holds(folder: str, path: str) -> bool:
    """Whether ``folder`` is ``path``'s parent at any depth (``/`` holds everything: not counted)."""
    return _ancestor(folder, path)


def _ancestor(folder: str, path: str) -> bool:
    if folder in ("/", ""):
        return False
    return path.startswith(folder.rstrip("/") + "/")


def nested_agent(scan: CallScan, argv: Sequence[str], tool: str) -> Refusal | None:
    """A harness started without its hooks, or given an MCP server whose command is refused."""
    why = agents.unhooks(argv) or started_elsewhere(scan, argv)
    if why is not None:
        return _refuse("harness-settings", f"{tool} would start {why}, without this gateway's hooks")
    for count, command in enumerate(agents.server_commands(argv)):
        if count >= _MAX_NESTED:
            return _refuse("harness-settings", f"{tool} adds too many MCP servers to judge")
        found = server_refusal(scan, command, f"{tool} adds an MCP server that")
        if found is not None:
            return found
    for value in agents.mcp_config_values(argv):
        if value.lstrip().startswith("{"):
            continue  # judged above with the other servers the command line names
        found = _config_file_servers(scan, value, tool)
        if found is not None:
            return found
    return None


def _config_file_servers(scan: CallScan, path: str, tool: str) -> Refusal | None:
    """The servers of an MCP configuration file a harness start loads, read now and judged as
    their commands; a file that cannot be read now (missing, a device, written later in the
    line) holds servers nobody judged, so the start is refused."""
    for candidate in scan.candidates(path)[:1]:
        try:
            with open(candidate, encoding="utf-8", errors="replace") as handle:
                text = handle.read(_MAX_CONFIG + 1)
        except (OSError, ValueError):
            break
        if len(text) > _MAX_CONFIG or not os.path.isfile(candidate):
            break
        return mcp_file(scan, path, text, tool, loaded=True)
    return _refuse("harness-settings", f"{tool} would start MCP servers from {path}, unreadable now")


_MAX_CONFIG = 256 * 1024  # characters of an MCP configuration file read to judge its servers


def started_elsewhere(scan: CallScan, argv: Sequence[str]) -> str | None:
    """A harness whose hooks live in the project, started in another folder (``cd /tmp &&
    opencode run``, ``copilot`` from a scratch folder, ``--dir ELSEWHERE``): it loads none of them
    (and Copilot's and Gemini's folder trust is the project's, not the scratch folder's)."""
    harness = agents.harness_of(argv)
    if harness is None:
        return None
    folders = [*scan.moves]
    named = agents.folder_of(argv)
    if named is not None:
        folders.append(named)
    if not folders:
        return None
    if harness not in agents.PROJECT_HOOKED and agents.user_hooked(harness, scan.protection.home):
        return None
    project = scan.cwd.rstrip("/") + "/"
    for word in folders:
        expanded = scan.expand(word)
        if "$" in expanded or "`" in expanded:
            return f"{harness} in a folder computed when the line runs ({word})"
        candidates = scan.candidates(expanded)
        if candidates and not all((c.rstrip("/") + "/").startswith(project) for c in candidates):
            return f"{harness} in {word}, outside the project whose hooks guard it"
    return None


def server_refusal(scan: CallScan, command: Sequence[str], said: str) -> Refusal | None:
    """An MCP server entry, judged as the shell line it runs (the client will run it)."""
    line = command[0] if len(command) == 1 and " " in command[0] else shlex.join(command)
    found = scan.nested().shell(line, "mcp-server")
    if found is None:
        return None
    return Refusal(found.rule, found.message.replace("mcp-server", f"{said} runs `{line[:120]}`:", 1))


def mcp_file(scan: CallScan, path: str, content: str, tool: str, *, loaded: bool = False) -> Refusal | None:
    """A client configuration with MCP server entries (:func:`.agents.is_mcp_file`, or a file a
    harness is told to load): each entry's command is judged."""
    if not loaded and not agents.is_mcp_file(path, content):
        return None
    for count, command in enumerate(agents.file_commands(content)):
        if count >= _MAX_NESTED:
            return _refuse("harness-settings", f"{tool} writes too many MCP servers to judge")
        found = server_refusal(scan, command, f"{tool} writes an MCP server into {path} that")
        if found is not None:
            return found
    return None


def whole_line(scan: CallScan, commands: Sequence[Sequence[str]], line: str, tool: str) -> Refusal | None:
    """The line as a whole: the gateway's processes, where its hook client looks, its disk."""
    found = gateway_installer(scan, line, tool)
    if found is not None:
        return found
    for argv in commands:
        moved = jj_move(scan, argv) if argv and os.path.basename(argv[0]) == "jj" else None
        moved = moved or gateway_commands.shadowing_install(argv, scan.candidates)
        if moved is not None:
            return moved
    why = agents.started_by(commands)
    if why is not None:
        return _refuse(
            "harness-settings", f"{tool} would start {why}, where this gateway's hook settings do not apply"
        )
    starts_harness = any(argv and agents.harness_of(argv) for argv in commands)
    why = processes.redirects_nested(line, starts_harness)
    if why is not None:
        return _refuse("gateway-runtime", f"{tool}: {why}")
    names = {os.path.basename(argv[0]) for argv in commands if argv}
    if names & (
        processes.SIGNAL_SENDERS
        | {"systemctl", "launchctl", "service", "rc-service", "sv", "xargs", "loginctl", "dsh-policy"}
    ):
        runtime = [e.path for e in scan.protection.entries if e.kind == "gateway-runtime"]
        files = processes.runtime_files(runtime)
        why = processes.stops_gateway(commands, line, processes.gateway_processes(runtime), files)
        if why is not None:
            return _refuse("gateway-runtime", f"{tool}: {why}")
    if names & {"fallocate", "truncate", "dd", "head", "xfs_mkfile", "mkfile"}:
        logs = [e.path for e in scan.protection.entries if e.kind == "audit-log"]
        free = processes.free_bytes(os.path.dirname(logs[0])) if logs else None
        for argv in commands:
            why = processes.fills_disk(argv, free)
            if why is not None:
                return _refuse("audit-log", f"{tool}: {why}")
    return None


def git_rollback(scan: CallScan, argv: Sequence[str]) -> Refusal | None:
    """A git command that moves the working tree to another commit (``reset --hard REV``,
    ``checkout REV``, ``switch BRANCH``) is refused when that commit's hook files differ from the
    ones in force: the working tree would get another (older) version of them; one that applies
    another commit's change (``revert``, ``cherry-pick``, ``merge``, ``rebase``, ``stash pop``)
    when that change touches them (:func:`.vcs.applied_changes`). Asked of git itself (``git diff
    --quiet REVS -- HOOK FILES``, read-only, the deployment's files tracked in the project
    included). A change named by a revision this repository does not hold now (a branch not
    fetched yet, ``git pull REMOTE BRANCH``) is judged by where it lands, not by whether git would
    find it: refused when the tree holds hook files or protected files. A whole-tree move to a
    commit git does not know changes nothing (git only moves to states it holds)."""
    target = vcs.target_commit(argv)
    pulled = [[f"HEAD...{revision}"] for revision in vcs.pulled_revisions(argv)]
    if target is None and vcs.stash_saves(argv) is not None:
        target = "HEAD"  # a stash puts the tree back to HEAD: its uncommitted hook files go
    changes = (
        (vcs.applied_changes(argv) or pulled or vcs.bisect_targets(argv)) if target is None else [[target]]
    )
    if not changes:
        return None
    tree = vcs.work_tree(argv)
    folder = scan.candidates(tree)[0] if scan.candidates(tree) else scan.cwd
    paths = [entry.path for entry in scan.protection.entries if entry.kind != "gateway-runtime"]
    unknown = [
        revision
        for revision in vcs.named_revisions(argv)
        if "$" not in revision and "`" not in revision and not vcs.git_knows(folder, revision)
    ]
    held = held_in(scan, folder) if unknown else None
    if held is not None:
        return refusal(
            held,
            f"git would apply the change of {unknown[0]}, which this repository does not hold now, "
            f"to a tree that holds {held.path}",
        )
    for revisions in changes:
        shown = " ".join(revisions)
        if "$" in shown or "`" in shown:
            return _refuse(
                "harness-settings",
                f"git would change the working tree by a commit computed when the line runs ({shown})",
            )
        if vcs.differs(folder, revisions, paths):
            said = (
                f"give the working tree the hook files of {target}"
                if target is not None
                else f"apply a change ({shown}) to hook files or protected files"
            )
            return _refuse("harness-settings", f"git would {said}, not the ones in force")
    return None


def jj_move(scan: CallScan, argv: Sequence[str]) -> Refusal | None:
    """A jj command that gives the working copy another revision (``jj new REV``, ``edit``,
    ``undo``, ``abandon``...). jj snapshots every file of the working copy, tracked by git or not,
    so the hook files change unless that revision holds the same ones: asked of git in a
    colocated repository (:func:`.vcs.differs`, ``root()`` as the empty tree); a revision git
    cannot name is refused when the folder holds hook files or protected files."""
    targets = vcs.jj_targets(argv)
    if not targets:
        return None
    folder = scan.cwd
    for index, word in enumerate(argv[:-1]):
        if word == "-R" or word == "--repository":
            folder = (scan.candidates(argv[index + 1]) or [folder])[0]
    held = held_in(scan, folder)
    if held is None:
        return None
    paths = [entry.path for entry in scan.protection.entries if entry.kind != "gateway-runtime"]
    for target in targets:
        known = target != "?" and vcs.git_knows(folder, target)
        if not known or target == vcs.EMPTY_TREE or vcs.differs(folder, [target], paths):
            shown = "a revision named only when it runs" if target == "?" else target
            return refusal(held, f"jj would give the working copy {shown}, not the hook files in force")
    return None


def held_in(scan: CallScan, folder: str) -> Protected | None:
    """A protected entry or a client's hook file inside ``folder`` (a working tree a change
    lands in), or ``None``."""
    return scan.protection.holds_protected(folder, scan.local) or next(
        (Protected(os.path.join(folder, name), "harness-settings") for name in PROJECT_HOOK_FILES
         if os.path.lexists(os.path.join(folder, name))),
        None,
    )


def gateway_installer(scan: CallScan, line: str, tool: str) -> Refusal | None:
    """An installer run from the gateway's own environment (``VENV/bin/pip install``): the
    shell reader names programs by their base name, so their paths are read from the line."""
    if not _INSTALL_VERBS.search(line):
        return None
    for match in _INSTALLER_PATH.finditer(line):
        for candidate in scan.candidates(match.group(1)):
            found = scan.protection.protected(candidate, scan.local)
            if found is not None and found.kind == "gateway-package":
                return refusal(found, f"{tool} would change the gateway's environment with {match.group(1)}")
    return None
