"""An in-memory machine for demo sessions: a file tree, a simulated shell and a simulated web.

``dsh-policy run`` drives scripted sessions through the real loop and the real gateway, but the
tools act on this sandbox, so a demo that shows ``rm -rf /`` being denied cannot touch the host even
if a rule were wrong. The shell understands a small, honest subset (``ls cat echo rm mkdir touch
pwd cd head grep wc cp mv git curl``); anything else reports ``command not found`` exactly as a
shell would, rather than pretending to have run.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(slots=True)
class ShellOutcome:
    """What a simulated command printed and its exit status."""

    stdout: str
    stderr: str
    exit_code: int


class SandboxError(Exception):
    """A tool asked the sandbox for something impossible (missing file, directory as file)."""


@dataclass(slots=True)
class Sandbox:
    """Files keyed by absolute normalized path; directories are implied by their files or listed in
    ``dirs``. ``web`` maps URLs to response bodies for ``web_fetch`` and ``curl``."""

    files: dict[str, str] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=lambda: {"/"})
    web: dict[str, str] = field(default_factory=dict)
    cwd: str = "/workspace"

    @classmethod
    def from_spec(cls, files: Mapping[str, str], web: Mapping[str, str], cwd: str) -> Sandbox:
        """Build a sandbox from a session script's ``files`` and ``web`` tables."""
        box = cls(web=dict(web), cwd=posixpath.normpath(cwd))
        box.make_dirs(box.cwd)
        for path, content in files.items():
            box.write(path, content)
        return box

    # --- files ------------------------------------------------------------------------------------

    def resolve(self, path: str) -> str:
        """Absolute, normalized form of ``path`` relative to the working directory."""
        if path.startswith("~"):
            path = "/root" + path[1:]
        return posixpath.normpath(posixpath.join(self.cwd, path))

    def make_dirs(self, path: str) -> None:
        """Create ``path`` and its parents."""
        current = self.resolve(path)
        while current not in self.dirs:
            self.dirs.add(current)
            current = posixpath.dirname(current)

    def is_dir(self, path: str) -> bool:
        """Whether ``path`` is a directory (explicit or implied by a file below it)."""
        target = self.resolve(path)
        prefix = target.rstrip("/") + "/"
        return target in self.dirs or any(name.startswith(prefix) for name in self.files)

    def read(self, path: str) -> str:
        """The content of a file, or :class:`SandboxError`."""
        target = self.resolve(path)
        if target in self.files:
            return self.files[target]
        if self.is_dir(target):
            raise SandboxError(f"{path}: is a directory")
        raise SandboxError(f"{path}: no such file or directory")

    def write(self, path: str, content: str) -> None:
        """Create or replace a file, creating parent directories."""
        target = self.resolve(path)
        if self.is_dir(target):
            raise SandboxError(f"{path}: is a directory")
        self.make_dirs(posixpath.dirname(target))
        self.files[target] = content

    def list_dir(self, path: str) -> list[str]:
        """Names directly under a directory, sorted; directories end with ``/``."""
        target = self.resolve(path)
        if not self.is_dir(target):
            raise SandboxError(f"{path}: no such directory")
        prefix = target.rstrip("/") + "/"
        names: set[str] = set()
        for name in [*self.files, *self.dirs]:
            if name.startswith(prefix) and name != target:
                head, _, rest = name[len(prefix) :].partition("/")
                names.add(head + "/" if rest or name in self.dirs else head)
        return sorted(names)

    def remove(self, path: str, *, recursive: bool) -> int:
        """Remove a file or, with ``recursive``, a tree; returns how many files went."""
        target = self.resolve(path)
        if target in self.files:
            del self.files[target]
            return 1
        if not self.is_dir(target):
            raise SandboxError(f"{path}: no such file or directory")
        if not recursive:
            raise SandboxError(f"{path}: is a directory")
        prefix = "/" if target == "/" else target + "/"
        doomed = [name for name in self.files if name.startswith(prefix)]
        for name in doomed:
            del self.files[name]
        self.dirs = {d for d in self.dirs if not (d == target or d.startswith(prefix))} | {"/"}
        return len(doomed)

    # --- web --------------------------------------------------------------------------------------

    def fetch(self, url: str) -> str:
        """The body the simulated web serves for ``url``."""
        if url in self.web:
            return self.web[url]
        raise SandboxError(f"could not resolve {url} (the demo sandbox has no network)")

    # --- shell ------------------------------------------------------------------------------------

    def run_shell(self, command: str) -> ShellOutcome:
        """Run a command line: ``;``, ``&&`` and ``||`` chain simple commands; ``|`` feeds stdout
        into the next command's stdin."""
        out: list[str] = []
        err: list[str] = []
        status = 0
        try:
            tokens = _shell_tokens(command)
        except ValueError as exc:
            return ShellOutcome("", f"sh: syntax error: {exc}\n", 2)
        for connector, pipeline in _split_chain(tokens):
            if (connector == "&&" and status != 0) or (connector == "||" and status == 0):
                continue
            stdin = ""
            for argv in pipeline:
                result = self._run_simple(argv, stdin)
                stdin = result.stdout
                status = result.exit_code
                err.append(result.stderr)
            out.append(stdin)
        return ShellOutcome("".join(out), "".join(err), status)

    def _run_simple(self, argv: list[str], stdin: str) -> ShellOutcome:
        if not argv:
            return ShellOutcome("", "", 0)
        name, args = posixpath.basename(argv[0]), argv[1:]
        if name == "sudo":
            return self._run_simple(args, stdin)
        runner = _COMMANDS.get(name)
        if runner is None:
            return ShellOutcome("", f"sh: {argv[0]}: command not found\n", 127)
        try:
            return runner(self, args, stdin)
        except SandboxError as exc:
            return ShellOutcome("", f"{name}: {exc}\n", 1)


def _shell_tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def _split_chain(tokens: list[str]) -> list[tuple[str, list[list[str]]]]:
    """Group tokens into ``(connector, pipeline)`` pairs; the first connector is ``;``."""
    chain: list[tuple[str, list[list[str]]]] = []
    connector = ";"
    pipeline: list[list[str]] = []
    argv: list[str] = []
    for token in tokens:
        if token in {";", "&&", "||", "&", "\n"}:
            chain.append((connector, [*pipeline, argv]))
            connector, pipeline, argv = (";" if token == "&" else token), [], []
        elif token == "|":
            pipeline.append(argv)
            argv = []
        else:
            argv.append(token)
    chain.append((connector, [*pipeline, argv]))
    return chain


def _ok(stdout: str = "") -> ShellOutcome:
    return ShellOutcome(stdout, "", 0)


def _flags_and_operands(args: list[str]) -> tuple[set[str], list[str]]:
    flags: set[str] = set()
    operands: list[str] = []
    for arg in args:
        if arg.startswith("--") and len(arg) > 2:
            flags.add(arg)
        elif arg.startswith("-") and len(arg) > 1:
            flags.update(f"-{c}" for c in arg[1:])
        else:
            operands.append(arg)
    return flags, operands


def _cmd_ls(box: Sandbox, args: list[str], _stdin: str) -> ShellOutcome:
    _, operands = _flags_and_operands(args)
    lines = [name for target in operands or ["."] for name in box.list_dir(target)]
    return _ok("".join(f"{line}\n" for line in lines))


def _cmd_cat(box: Sandbox, args: list[str], stdin: str) -> ShellOutcome:
    _, operands = _flags_and_operands(args)
    return _ok("".join(box.read(p) for p in operands) if operands else stdin)


def _cmd_head(box: Sandbox, args: list[str], stdin: str) -> ShellOutcome:
    count, operands = 10, []
    it = iter(args)
    for arg in it:
        if arg == "-n":
            count = int(next(it, "10"))
        elif arg.startswith("-") and arg[1:].isdigit():
            count = int(arg[1:])
        else:
            operands.append(arg)
    text = "".join(box.read(p) for p in operands) if operands else stdin
    return _ok("".join(line for line in text.splitlines(keepends=True)[:count]))


def _cmd_echo(_box: Sandbox, args: list[str], _stdin: str) -> ShellOutcome:
    return _ok(" ".join(args) + "\n")


def _cmd_pwd(box: Sandbox, _args: list[str], _stdin: str) -> ShellOutcome:
    return _ok(box.cwd + "\n")


def _cmd_cd(box: Sandbox, args: list[str], _stdin: str) -> ShellOutcome:
    target = box.resolve(args[0] if args else "/root")
    if not box.is_dir(target):
        raise SandboxError(f"{target}: no such directory")
    box.cwd = target
    return _ok()


def _cmd_mkdir(box: Sandbox, args: list[str], _stdin: str) -> ShellOutcome:
    for path in _flags_and_operands(args)[1]:
        box.make_dirs(path)
    return _ok()


def _cmd_touch(box: Sandbox, args: list[str], _stdin: str) -> ShellOutcome:
    for path in _flags_and_operands(args)[1]:
        target = box.resolve(path)
        if target not in box.files:
            box.write(target, "")
    return _ok()


def _cmd_rm(box: Sandbox, args: list[str], _stdin: str) -> ShellOutcome:
    flags, operands = _flags_and_operands(args)
    recursive = bool(flags & {"-r", "-R", "--recursive"})
    removed = sum(box.remove(path, recursive=recursive) for path in operands)
    return _ok(f"removed {removed} file(s)\n" if "-v" in flags else "")


def _cmd_cp(box: Sandbox, args: list[str], _stdin: str) -> ShellOutcome:
    _, operands = _flags_and_operands(args)
    if len(operands) != 2:
        raise SandboxError("usage: cp SOURCE DEST")
    box.write(operands[1], box.read(operands[0]))
    return _ok()


def _cmd_mv(box: Sandbox, args: list[str], stdin: str) -> ShellOutcome:
    _cmd_cp(box, args, stdin)
    box.remove(_flags_and_operands(args)[1][0], recursive=False)
    return _ok()


def _cmd_grep(box: Sandbox, args: list[str], stdin: str) -> ShellOutcome:
    flags, operands = _flags_and_operands(args)
    if not operands:
        raise SandboxError("usage: grep PATTERN [FILE...]")
    needle, paths = operands[0], operands[1:]
    fold = "-i" in flags
    sources = [(p, box.read(p)) for p in paths] or [("", stdin)]
    hits = [
        (f"{path}:" if len(sources) > 1 else "") + line
        for path, text in sources
        for line in text.splitlines(keepends=True)
        if (needle.lower() in line.lower() if fold else needle in line)
    ]
    return ShellOutcome("".join(hits), "", 0 if hits else 1)


def _cmd_wc(box: Sandbox, args: list[str], stdin: str) -> ShellOutcome:
    _, operands = _flags_and_operands(args)
    text = "".join(box.read(p) for p in operands) if operands else stdin
    return _ok(f"{len(text.splitlines())} {len(text.split())} {len(text)}\n")


def _cmd_curl(box: Sandbox, args: list[str], _stdin: str) -> ShellOutcome:
    urls = [a for a in args if "://" in a]
    if not urls:
        raise SandboxError("no URL specified")
    return _ok(box.fetch(urls[0]))


def _cmd_git(_box: Sandbox, args: list[str], _stdin: str) -> ShellOutcome:
    sub = args[0] if args else ""
    canned = {
        "status": "On branch main\nnothing to commit, working tree clean\n",
        "log": "commit 3f2a9c1 (HEAD -> main)\n    Initial import\n",
        "branch": "* main\n",
    }
    if sub in canned:
        return _ok(canned[sub])
    if sub == "push":
        return _ok(f"(simulated) pushed {' '.join(args[1:])}\n")
    return ShellOutcome("", f"git: '{sub}' is not simulated in the demo sandbox\n", 1)


_COMMANDS = {
    "ls": _cmd_ls,
    "cat": _cmd_cat,
    "head": _cmd_head,
    "echo": _cmd_echo,
    "pwd": _cmd_pwd,
    "cd": _cmd_cd,
    "mkdir": _cmd_mkdir,
    "touch": _cmd_touch,
    "rm": _cmd_rm,
    "cp": _cmd_cp,
    "mv": _cmd_mv,
    "grep": _cmd_grep,
    "wc": _cmd_wc,
    "curl": _cmd_curl,
    "git": _cmd_git,
}
