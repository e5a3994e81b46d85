"""The command line a tool call stands for, when its server wraps a program.

Many MCP servers and agent tools are a program behind a schema: the AWS API server's
``call_aws {cli_command}``, Amazon Q's ``use_aws {service_name, operation_name, parameters}``, a
gcloud server's ``run_gcloud_command {args: [...]}``, the reference git server's
``git_diff {repo_path, target}``, Docker servers' ``create_container {image, volumes,
privileged}``, a process tool's ``kill_process {pid}``, and code runners' ``execute_python
{code}``. What the call does is what that command line does, so it is judged as that line too:
the shell readers already know ``aws iam create-access-key``, ``git diff --output=~/.bashrc``,
``docker run -v /var/run/docker.sock:...`` and ``python3 -c CODE``, whatever tool carries them.

:func:`cli_lines` gives those lines (none for any other call); :mod:`.tool_views` makes each a
``shell`` view.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator, Mapping
from typing import Any, Final

from dsh_policy.cmdline.interpreters.invocation import inline_code_option
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.tool_names import identifier_words, own_name

# Programs a tool's name may say it runs, its argument list then being that program's argv.
_PROGRAMS: Final = frozenset(
    {
        "aws",
        "gcloud",
        "gsutil",
        "az",
        "kubectl",
        "helm",
        "docker",
        "podman",
        "gh",
        "glab",
        "terraform",
        "git",
        "npm",
        "pip",
    }
)
_ARGV_KEYS: Final = ("args", "argv", "arguments")
# The reference git server (mcp-server-git): which git sub-command each tool runs.
_GIT_TOOLS: Final[dict[str, tuple[str, ...]]] = {
    "status": ("status",),
    "diff_unstaged": ("diff",),
    "diff_staged": ("diff", "--cached"),
    "diff": ("diff",),
    "commit": ("commit",),
    "add": ("add",),
    "reset": ("reset",),
    "log": ("log",),
    "create_branch": ("branch",),
    "checkout": ("checkout",),
    "show": ("show",),
    "init": ("init",),
    "push": ("push",),
    "pull": ("pull",),
    "fetch": ("fetch",),
    "branch": ("branch",),
    "merge": ("merge",),
    "rebase": ("rebase",),
    "clean": ("clean",),
}
# Arguments that are the git command's operands, in the order git takes them.
_GIT_OPERANDS: Final = (
    "remote",
    "target",
    "revision",
    "branch_name",
    "branch",
    "base_branch",
    "source_branch",
)
_LANGUAGES: Final[dict[str, str]] = {
    "python": "python3", "python3": "python3", "py": "python3", "ipython": "python3",
    "javascript": "node", "js": "node", "node": "node", "nodejs": "node", "typescript": "node", "ts": "node",
    "deno": "node", "bun": "node", "bash": "bash", "sh": "bash", "shell": "bash", "zsh": "bash",
    "ruby": "ruby", "rb": "ruby", "perl": "perl", "php": "php",
    # agent-zero's code_execution_tool {runtime: terminal}; Open Interpreter's {language: shell}
    "terminal": "bash", "console": "bash", "cmd": "bash", "powershell": "bash", "pwsh": "bash",
    "applescript": "osascript", "osascript": "osascript", "jxa": "osascript-jxa",
}  # fmt: skip
# A server named for macOS automation (macos-automator-mcp, an AppleScript server) runs its
# JavaScript as JXA through osascript.
_MAC_AUTOMATION_WORDS: Final = frozenset({"applescript", "osascript", "jxa", "automator", "macos", "mac"})
# Packages a code runner installs before it runs the code.
_LIBRARY_KEYS: Final = ("libraries_used", "libraries")
# A tool named only for JavaScript may run it in a web page (``run_js {code: "goto(...)"}``), where
# it reads no file and runs no program: only an explicit language argument makes it Node.
_PAGE_LANGUAGES: Final = frozenset({"javascript", "js", "typescript", "ts"})
_LANGUAGE_KEYS: Final = ("language", "languageId", "lang", "kernel", "runtime")
# ``cell_source``: a notebook cell a Jupyter server inserts and runs (insert_execute_code_cell).
_CODE_KEYS: Final = ("code", "source", "source_code", "cell_source", "script_content", "code_snippet")
# A REPL tool's code may come as its one text argument (LangChain's Python_REPL and
# python_repl_ast {query}): read as code only for a tool named for a REPL or a language.
_REPL_TEXT_KEYS: Final = ("query", "input", "tool_input")
_REPL_WORDS: Final = frozenset({"repl", "python", "python3", "ipython", "interpreter"})
_RUN_WORDS: Final = frozenset(
    {"run", "execute", "exec", "eval", "interpreter", "repl", "executor", "execution"}
)
# A code block in a Markdown fence (AutoGen's executors take ```sh ... ``` blocks): the fence's
# language runs its body.
_FENCE: Final = lazy_compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
# A computer-use tool typing text that ends in Enter into whatever has the focus: a terminal runs it.
_TYPING_WORDS: Final = frozenset({"computer"})
_BROWSER_WORDS: Final = frozenset({"browser", "playwright", "puppeteer", "page"})
# Windsurf's Cascade spells its grep_search {Query, SearchPath, Includes} in capitals
_SEARCH_ROOT_KEYS: Final = ("path", "dir_path", "directory", "root", "cwd", "SearchPath", "search_path")
# Names only public key material has (what the credential rules exempt): a search for them is a listing.
_PUBLIC_NAME: Final = re.compile(r"(?i)\.pub\*?$|^known_hosts|^authorized_keys2?$")
_INCLUDE_KEYS: Final = ("includePattern", "include_pattern", "include", "Includes")
# What a search tool searches, when an argument says it (desktop-commander's start_search
# {searchType: content}: the file's text, as grep reads it).
_SEARCH_KIND_KEYS: Final = ("searchType", "search_type", "type", "mode")
# A tool that types into a running process or session (``interact_with_process {pid, input}``).
_FEED_WORDS: Final = frozenset({"interact", "send", "write", "input", "type"})
_SESSION_WORDS: Final = frozenset({"process", "session", "terminal", "repl", "pty", "shell"})
_MANIFEST_KEYS: Final = ("resource", "manifest", "yaml", "spec_yaml")
# A program's command given as text to a tool named for the program (``azmcp_extension_az {command}``).
_PROGRAM_COMMAND_KEYS: Final = ("command", "cmd", "cli_command", "command_line")
# A tool named for running a command inside a workload (``kubectl_exec {pod, command}``): its
# command is the workload's, not the program's sub-command.
_IN_WORKLOAD_WORDS: Final = frozenset({"exec", "shell", "ssh", "pod", "pods", "container", "attach"})
# The operands of a one-word sub-command, in the order the program takes them.
_OPERAND_KEYS: Final = ("subCommand", "sub_command", "resourceType", "resource_type", "name")
# What a Terraform run of each type amounts to on the command line.
_TERRAFORM_RUNS: Final[dict[str, tuple[str, ...]]] = {
    "is_destroy": ("terraform", "destroy"),
    "destroy": ("terraform", "destroy"),
    "auto_approve": ("terraform", "apply", "-auto-approve"),
    "plan_and_apply": ("terraform", "apply"),
    "allow_empty_apply": ("terraform", "apply"),
    "apply": ("terraform", "apply"),
    "refresh_state": ("terraform", "apply", "-refresh-only"),
    "plan_only": ("terraform", "plan"),
}


#: Argument names that can make a line here (beside the code and command keys tool_views reads).
# Switches whose being set on a sub-command tool is what makes it destructive (read by
# _verb_tool_line: a call carrying one is worth reading as its command line).
_DESTRUCTIVE_SWITCHES: Final = frozenset(
    {"destroy", "auto_approve", "autoApprove", "force", "purge", "prune", "recursive", "all", "cascade"}
)
CLI_KEYS: Final = frozenset(
    {
        "repo_path",
        "input",
        "chart",
        "launchOptions",
        "service_name",
        "pid",
        "image",
        "regex",
        "pattern",
        "run_type",
        "action",
        "nodeName",
        "cell_source",
        "script_content",
        "code_snippet",
        "tool_input",
        "libraries_used",
        *_ARGV_KEYS,
        *_MANIFEST_KEYS,
        *_DESTRUCTIVE_SWITCHES,
    }
)


def cli_lines(tool: str, args: Mapping[str, Any]) -> list[str]:
    """The command lines ``tool(args)`` stands for (see the module docstring); ``[]`` if none."""
    words = identifier_words(own_name(tool))
    # the server's name may say the program (mcp__docker__create_container)
    everything = identifier_words(tool)
    return list(_lines(tool, words, everything, args))


def _lines(
    tool: str, words: frozenset[str], everything: frozenset[str], args: Mapping[str, Any]
) -> Iterator[str]:
    own = own_name(tool).lower()
    if own.startswith("git_") and isinstance(args.get("repo_path"), str):
        yield _git_line(own[4:], args)
        return
    service, operation = args.get("service_name"), args.get("operation_name")
    if "aws" in everything and isinstance(service, str) and isinstance(operation, str):
        yield _aws_line(service, operation, args)
        return
    program = next(iter(sorted(words & _PROGRAMS)), None)
    argv = _argv(args)
    if program is not None and argv is not None and not _sub_command(args):
        yield shlex.join([program, *argv[1:]] if argv and argv[0] == program else [program, *argv])
        return
    if program is not None and not words & _IN_WORKLOAD_WORDS:
        line = _program_line(program, args)
        if line is not None:
            yield line
            return
    line = _verb_tool_line(tool, words, everything, args)
    if line is not None:
        yield line
        return
    if "terraform" in everything and "run" in words:
        line = _terraform_run(args)
        if line is not None:
            yield line
            return
    if words & {"helm", "chart"} and words & {"install", "upgrade"}:
        line = _helm_line(args)
        if line is not None:
            yield line
            return
    launch = args.get("launchOptions") or args.get("launch_options")
    if isinstance(launch, Mapping):
        # a browser started with a program of the caller's choosing (puppeteer's launchOptions:
        # executablePath, or a --*-cmd-prefix / --gpu-launcher switch Chromium runs before its
        # children): that program runs (probe17)
        for program in _launched_programs(launch):
            yield program
    if "node" in words:
        line = _node_operation(args)
        if line is not None:
            yield line
            return
    if "docker" in everything and "container" in words and words & {"create", "run", "start"}:
        line = _docker_run(args)
        if line:
            yield line
            return
    pattern = _search_pattern(words, args)
    if pattern is not None:
        # Copilot's grep_search {query, includePattern}: an absolute include glob is the root
        include = next((args[k] for k in _INCLUDE_KEYS if isinstance(args.get(k), str)), "")
        yield shlex.join(["grep", "-rnE", "--", pattern, _search_root(args, _SEARCH_ROOT_KEYS, include)])
        return
    named = _name_search(words, args)
    if named is not None:
        if not _PUBLIC_NAME.search(named[2]):  # listing public keys or known hosts hunts nothing
            yield shlex.join(["find", *named])
        return
    fed = args.get("input")
    if isinstance(fed, str) and fed.strip() and words & _FEED_WORDS and words & _SESSION_WORDS:
        # text typed into a running process (desktop-commander's interact_with_process {pid, input}):
        # a shell line for a shell, code for the interpreter a REPL is (probe17)
        yield shlex.join(["python3", "-c", fed]) if _reads_as_python(fed) else fed
        return
    pid = args.get("pid")
    kills = "kill" in words or {"terminate", "process"} <= words
    if kills and isinstance(pid, int | str) and not isinstance(pid, bool) and str(pid).strip().isdigit():
        yield f"kill -9 {str(pid).strip()}"
        return
    if words & _TYPING_WORDS and args.get("action") == "type":
        typed = args.get("text")
        if isinstance(typed, str) and typed.endswith(("\n", "\r")):
            # typed and entered: judged as the line a terminal would run (probe21)
            yield from (line.strip() for line in typed.splitlines() if line.strip())
            return
    installs = _installed_libraries(words, args)
    if installs is not None:
        yield installs
    code = next((args[key] for key in _CODE_KEYS if isinstance(args.get(key), str)), None)
    if code is None and words & _REPL_WORDS:
        code = next((args[key] for key in _REPL_TEXT_KEYS if isinstance(args.get(key), str)), None)
        if code is not None and not _parses_as_python(code):
            code = None  # a REPL tool's SQL or search text is left to the readers of those
    if code is not None and code.strip():
        interpreter = _interpreter(words, args)
        if interpreter == "node" and everything & _MAC_AUTOMATION_WORDS:
            # a macOS automation server's JavaScript is JXA, run by osascript (macos-automator-mcp's
            # execute_script {language: javascript}), not Node (probe23)
            interpreter = "osascript-jxa"
        if interpreter is not None:
            yield from _code_lines(interpreter, code)


def _code_lines(interpreter: str, code: str) -> Iterator[str]:
    """The command lines running ``code`` with ``interpreter`` amounts to: Markdown-fenced blocks
    each in its fence's language, and a Python cell's IPython lines (``!cmd``, ``%pip``, ``%env``,
    ``%%bash``, ``%%writefile``) as the shell lines they run beside the Python left (probe21)."""
    if "```" in code:
        blocks = _FENCE.findall(code)
        if blocks:
            for language, body in blocks:
                program = _LANGUAGES.get(language.lower(), interpreter) if language else interpreter
                if body.strip():
                    yield from _code_lines(program, body)
            return
    if interpreter == "python3" and ("!" in code or "%" in code):
        shell, python = _ipython_split(code)
        yield from shell
        if python.strip():
            yield shlex.join([interpreter, inline_code_option(interpreter), python])
        return
    if interpreter == "osascript-jxa":
        yield shlex.join(["osascript", "-l", "JavaScript", "-e", code])
        return
    option = "-e" if interpreter == "osascript" else inline_code_option(interpreter)
    yield shlex.join([interpreter, option, code])


def _installed_libraries(words: frozenset[str], args: Mapping[str, Any]) -> str | None:
    """The ``pip install`` a code runner does before running its code, when the call lists the
    packages (CrewAI's CodeInterpreterTool {code, libraries_used}): what it installs runs too."""
    if not words & _RUN_WORDS:
        return None
    for key in _LIBRARY_KEYS:
        listed = args.get(key)
        if isinstance(listed, list | tuple):
            names = [name for name in listed if isinstance(name, str) and name.strip()]
            if names:
                return shlex.join(["pip", "install", *names])
    return None


# IPython line magics that run a program of the same name, and cell magics that run a shell.
_MAGIC_PROGRAMS: Final = frozenset(
    {"pip", "conda", "mamba", "uv", "cd", "ls", "cat", "rm", "mv", "cp", "mkdir"}
)
_SHELL_CELLS: Final = frozenset({"bash", "sh", "script", "system", "sx"})


def _ipython_split(code: str) -> tuple[list[str], str]:
    """(shell lines, the Python left) of an IPython cell."""
    lines = code.splitlines()
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        magic = first[2:].split()
        body = "\n".join(lines[1:])
        if magic and magic[0] in _SHELL_CELLS:
            return [body], ""
        if magic and magic[0] == "writefile" and len(magic) > 1:
            append = "-a" in magic[1:]
            target = [m for m in magic[1:] if m != "-a"]
            if target:
                redirect = ">>" if append else ">"
                return [f"printf %s {shlex.quote(body)} {redirect} {shlex.quote(target[-1])}"], ""
        return [], body
    shell: list[str] = []
    python: list[str] = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("!"):
            shell.append(stripped.lstrip("!").strip())
        elif stripped.startswith("%") and not stripped.startswith("%%"):
            parts = stripped[1:].split(None, 1)
            name = parts[0] if parts else ""
            rest = parts[1] if len(parts) > 1 else ""
            if name in _MAGIC_PROGRAMS:
                shell.append(stripped[1:])
            elif name in ("system", "sx"):
                shell.append(rest)
            elif name in ("env", "set_env") and "=" not in rest and " " not in rest.strip():
                shell.append(f"printenv {rest}".strip())
            elif name == "run" and rest:
                shell.append(f"python3 {rest}")
        else:
            python.append(line)
    return shell, "\n".join(python)


def _parses_as_python(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _reads_as_python(text: str) -> bool:
    """Text that is Python and does something a shell line would not show: an import or a call
    (``ls -la`` parses as Python too, as a subtraction, and is left to the shell view)."""
    if "import" not in text and "(" not in text:
        return False
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _search_pattern(words: frozenset[str], args: Mapping[str, Any]) -> str | None:
    """The regular expression of a content search (Claude Code's Grep, Gemini's
    search_file_content, Cursor's grep_search, Cline's search_files {regex}, desktop-commander's
    start_search {searchType: content}): such a call is the ``grep -r`` it runs. A search by
    file name (Glob, the filesystem server's search_files {pattern}) reads no content and stays
    a listing."""
    regex = args.get("regex")
    if isinstance(regex, str) and regex:
        return regex
    kind = next((args[k] for k in _SEARCH_KIND_KEYS if isinstance(args.get(k), str)), "")
    if (
        words & {"grep", "rg", "ripgrep"}
        or {"search", "content"} <= words
        or ("search" in words and kind.strip().lower() in ("content", "contents", "text", "grep"))
    ):
        for key in ("pattern", "query", "Query"):
            value = args.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def _fixed_folders(pattern: str) -> str:
    """The leading folders of a glob before its first wildcard (``/home/dev/**/*.env`` ->
    ``/home/dev``), ``/`` when the first part is already a wildcard."""
    fixed: list[str] = []
    for part in pattern.strip().split("/")[:-1]:
        if any(ch in part for ch in "*?[{"):
            break
        fixed.append(part)
    return "/".join(fixed) or "/"


def _search_root(args: Mapping[str, Any], root_keys: tuple[str, ...], glob: str) -> str:
    """Where a search runs: the call's folder argument, else the fixed leading folders of an
    absolute glob (``/home/dev/**/*.env`` -> ``/home/dev``), else the workspace (``.``)."""
    root = next((args[key] for key in root_keys if isinstance(args.get(key), str) and args[key]), None)
    if root is not None:
        return str(root)
    return _fixed_folders(glob) if glob.startswith(("/", "~", "$HOME")) else "."


def name_search_target(tool: str, args: Mapping[str, Any]) -> str | None:
    """The files a search by name reads the names of, as one glob (``ROOT/NAME``): judged as a read
    of those files, so listing ``~/.ssh/*.pub`` is a read of public keys and ``~/.ssh/id_*`` of
    private ones; ``None`` for any other call."""
    named = _name_search(identifier_words(own_name(tool)), args)
    if named is None:
        return None
    root, _, name = named
    return root.rstrip("/") + "/" + name if root not in ("", ".") else name


def _name_search(words: frozenset[str], args: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """``(root, "-name", name)`` of a search by file name (Claude Code's Glob, Gemini's glob, the
    filesystem server's search_files {path, pattern}, Cursor's file_search {query}, Windsurf's
    find_by_name {SearchDirectory, Pattern}): such a call is the ``find ROOT -name NAME`` it runs,
    so a hunt for key, token and state files over the home folder or the machine (``**/*.pem``
    under ``/home/dev``) is the same search the shell readers know. The root is the call's folder
    argument, else the fixed leading folders of an absolute pattern, else the workspace (``.``);
    the name is the pattern's last part (``**/terraform.tfstate*`` -> ``terraform.tfstate*``)."""
    if not (words & {"glob"} or (words & {"search", "find"} and words & {"file", "files", "name"})):
        return None
    pattern = next(
        (
            args[key]
            for key in ("pattern", "Pattern", "glob", "query", "name")
            if isinstance(args.get(key), str)
        ),
        None,
    )
    if not pattern or not pattern.strip():
        return None
    parts = [part for part in pattern.strip().split("/") if part and part != "**"]
    if not parts:
        return None
    root = _search_root(args, (*_SEARCH_ROOT_KEYS, "SearchDirectory"), pattern.strip())
    return root, "-name", parts[-1]


def repository_views(tool: str, args: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """What the git server's tools do to the repository folder itself: ``git_init`` writes a
    ``.git`` there; every other tool reads the folder (status lists its files, diff and show print
    them), so a ``repo_path`` of ``~/.ssh`` is a read of ``~/.ssh`` whatever the sub-command."""
    own = own_name(tool).lower()
    repo = args.get("repo_path")
    if not own.startswith("git_") or not isinstance(repo, str) or not repo:
        return []
    if own == "git_init":
        return [("apply_patch", {"patch": "", "paths": [repo.rstrip("/") + "/.git/config"]})]
    return [("read_file", {"path": repo})]


def manifest_text(args: Mapping[str, Any]) -> str | None:
    """A Kubernetes manifest a cluster server applies (``resources_create_or_update {resource}``,
    ``kubectl_apply {manifest}``): judged as the infrastructure file it is, by what it grants."""
    for key in _MANIFEST_KEYS:
        value = args.get(key)
        if isinstance(value, str) and "apiVersion" in value and "kind" in value:
            return value
    return None


_NOTEBOOK_PATH = lazy_compile(r"(?i)\.ipynb$|(?:^|/)notebooks?/[^/]+\.(?:py|sql|scala|r)$")
_DAG_PATH = lazy_compile(r"(?i)(?:^|/)dags?/(?:[^/]+/)*[^/]+\.py$")
_DBT_PROJECT = lazy_compile(r"(?i)(?:^|/)dbt_project\.ya?ml$")
# a notebook's shell escapes: `!cmd`, `%sh cmd`, `%system cmd` (line by line; in .ipynb JSON each
# line is a string ending in an escaped newline)
_NOTEBOOK_SHELL = lazy_compile(
    r'(?m)(?:^|")[ \t]*(?:!|%(?:sh|system|bash)[ \t]+)(?!=)((?:[^"\\\n]|\\")+?)(?:\\n)?(?:"|$)'
)
_TASK_COMMAND = lazy_compile(r"""\bbash_command\s*=\s*(?:f|r)?(?P<q>["'])(?P<text>(?:(?!(?P=q)).)+)(?P=q)""")
_TASK_SQL = lazy_compile(r"""\bsql\s*=\s*(?:f|r)?(?P<q>["'])(?P<text>(?:(?!(?P=q)).)+)(?P=q)""")
_DBT_HOOK = lazy_compile(
    r"(?m)^[ \t]*(?:on-run-(?:start|end)|\+?(?:pre|post)-hook)[ \t]*:[ \t]*"
    r"(?:\n[ \t]*-[ \t]*)?[\"']?([^\"'\n]+)"
)
# a notebook line that loads a model or data file in a way that can run code (judged as the
# `python -c` line it is, by the data platforms' reader of unsafe loads)
_NOTEBOOK_LOAD = lazy_compile(
    r'(?m)(?:^|")[ \t]*((?:[^"\\\n]|\\")*?\b(?:torch\.load|pickle\.loads?|joblib\.load|dill\.loads?'
    r'|cloudpickle\.loads?|read_pickle|allow_pickle|trust_remote_code|trust_repo|safe_mode|unsafe_load)\b(?:[^"\\\n]|\\")*?)(?:\\n)?(?:"|$)'
)


def scheduled_task_texts(path: str, text: str) -> list[tuple[str, str]]:
    """What a written notebook, Airflow DAG or dbt project will run later, as ``("shell", line)``
    and ``("sql", statement text)`` pairs (probe19): a notebook's shell escapes (``!gsutil ...``,
    ``%sh ...``), a DAG's ``bash_command=`` and ``sql=`` literals, and dbt's run hooks. A file
    a scheduler or a notebook kernel runs is judged as the commands it holds, as a CI workflow's
    steps are. Only these file kinds are read; nothing for others."""
    found: list[tuple[str, str]] = []
    if _NOTEBOOK_PATH.search(path):
        found += [("shell", m.group(1).replace('\\"', '"').strip()) for m in _NOTEBOOK_SHELL.finditer(text)]
        found += [
            ("shell", "python3 -c " + shlex.quote(m.group(1).replace('\\"', '"').strip()))
            for m in _NOTEBOOK_LOAD.finditer(text)
        ]
    if _DAG_PATH.search(path) or ("from airflow" in text and path.endswith(".py")):
        found += [("shell", m.group("text")) for m in _TASK_COMMAND.finditer(text)]
        found += [("sql", m.group("text")) for m in _TASK_SQL.finditer(text)]
    if _DBT_PROJECT.search(path):
        found += [("sql", m.group(1).strip()) for m in _DBT_HOOK.finditer(text)]
    return [(kind, value) for kind, value in found[:32] if value.strip()]


def _sub_command(args: Mapping[str, Any]) -> str | None:
    """A program's command given as text (``command``/``cmd``), not as an argv list."""
    for key in _PROGRAM_COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _program_line(program: str, args: Mapping[str, Any]) -> str | None:
    """The line a tool named for a program runs when it takes the program's command as text
    without the program's own name: Azure MCP's ``azmcp_extension_az {command: "group delete
    ..."}`` runs ``az group delete ...``. A one-word command is a sub-command whose operands are
    the call's other fields, in the order the program takes them (Flux159's ``kubectl_generic
    {command: delete, resourceType, name, namespace, flags, args}``). A command that already starts
    with the program is read as it is (tool_views' command keys)."""
    command = _sub_command(args)
    if command is None:
        return None
    try:
        parts = shlex.split(command)
    except ValueError:
        return None
    if not parts or parts[0] == program or parts[0].endswith("/" + program):
        return None
    argv = [program, *parts]
    if len(parts) == 1:
        argv += [args[k] for k in _OPERAND_KEYS if isinstance(args.get(k), str) and args[k].strip()]
        namespace = args.get("namespace")
        if isinstance(namespace, str) and namespace.strip():
            argv += ["-n", namespace.strip()]
        output = args.get("outputFormat") or args.get("output")
        if isinstance(output, str) and output.strip():
            argv += ["-o", output.strip()]
        flags = args.get("flags")
        for key, value in flags.items() if isinstance(flags, Mapping) else ():
            option = "--" + str(key).lstrip("-")
            if value is True:
                argv.append(option)
            elif isinstance(value, str | int | float) and not isinstance(value, bool):
                argv.append(f"{option}={value}")
        rest = _argv(args)
        argv += rest or []
    return shlex.join(argv)


def _verb_tool_line(
    tool: str, words: frozenset[str], everything: frozenset[str], args: Mapping[str, Any]
) -> str | None:
    """A server named for a program whose tools are named for its sub-commands, with the command's
    switches as true booleans (``mcp__terraform__apply {destroy: true, auto_approve: true}`` is
    ``terraform apply -destroy -auto-approve``). Only a call with at least one switch set says
    more than its name; Terraform spells switches with one dash, the others with two."""
    if _sub_command(args) is not None or _argv(args) is not None:
        return None
    program = next(iter(sorted(everything & _PROGRAMS)), None)
    if program is None:
        return None
    verbs = [w.lower() for w in _WORDS_IN_ORDER.findall(own_name(tool)) if w.lower() != program]
    dash = "-" if program == "terraform" else "--"
    switches = [dash + str(key).replace("_", "-") for key, value in args.items() if value is True]
    if not verbs or not switches:
        return None
    return shlex.join([program, *verbs, *switches])


_WORDS_IN_ORDER = lazy_compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _terraform_run(args: Mapping[str, Any]) -> str | None:
    """The Terraform command a run created through a Terraform server amounts to (hashicorp's
    terraform-mcp-server ``create_run {run_type}``, ``action_run {action}``): a destroy run is
    ``terraform destroy``, an auto-approved one ``terraform apply -auto-approve``."""
    kind = args.get("run_type") or args.get("action")
    if not isinstance(kind, str) or not kind.strip():
        return None
    argv = _TERRAFORM_RUNS.get(kind.strip().lower().replace("-", "_"))
    return shlex.join(argv) if argv else None


def _node_operation(args: Mapping[str, Any]) -> str | None:
    """A cluster node operation (Flux159's ``node_management {operation, nodeName, force,
    deleteLocalData, ignoreDaemonsets}``) as the ``kubectl drain|cordon|uncordon`` it runs."""
    operation, node = args.get("operation"), args.get("nodeName") or args.get("node_name") or args.get("node")
    if operation not in ("drain", "cordon", "uncordon") or not isinstance(node, str) or not node.strip():
        return None
    argv = ["kubectl", operation, node.strip()]
    for key, option in (
        ("force", "--force"),
        ("deleteLocalData", "--delete-emptydir-data"),
        ("ignoreDaemonsets", "--ignore-daemonsets"),
    ):
        if args.get(key) is True:
            argv.append(option)
    return shlex.join(argv)


def _helm_line(args: Mapping[str, Any]) -> str | None:
    """A chart installed through a cluster server (Flux159's ``install_helm_chart {name, chart,
    repo, namespace, values}``, ``helm_install {chart, name, namespace, values}``) as the ``helm
    upgrade --install`` it runs, its values as ``--set`` settings."""
    chart = args.get("chart")
    if not isinstance(chart, str) or not chart.strip():
        return None
    argv = ["helm", "upgrade", "--install"]
    name = args.get("name") or args.get("release") or args.get("releaseName")
    if isinstance(name, str) and name.strip():
        argv.append(name.strip())
    argv.append(chart.strip())
    repo = args.get("repo") or args.get("repository")
    if isinstance(repo, str) and repo.strip():
        argv += ["--repo", repo.strip()]
    namespace = args.get("namespace")
    if isinstance(namespace, str) and namespace.strip():
        argv += ["-n", namespace.strip()]
    values = args.get("values")
    for key, value in _flattened(values, "") if isinstance(values, Mapping) else ():
        argv += ["--set", f"{key}={value}"]
    return shlex.join(argv)


def _flattened(values: Mapping[str, Any], prefix: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    """``{a: {b: true}}`` as ``("a.b", "true")``: the dotted settings ``--set`` takes."""
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and depth < 8:
            yield from _flattened(value, name + ".", depth + 1)
        elif isinstance(value, bool):
            yield name, "true" if value else "false"
        elif isinstance(value, str | int | float):
            yield name, str(value)


_LAUNCHER_SWITCHES: Final = lazy_compile(
    r"^--(?:renderer|utility|gpu|plugin|ppapi)-(?:cmd-)?(?:prefix|launcher)=(.+)$|^--gpu-launcher=(.+)$"
    r"|^--browser-subprocess-path=(.+)$"
)


def _launched_programs(launch: Mapping[str, Any]) -> list[str]:
    programs: list[str] = []
    executable = launch.get("executablePath") or launch.get("executable_path")
    if isinstance(executable, str) and executable.strip():
        programs.append(executable.strip())
    switches = launch.get("args")
    for switch in switches if isinstance(switches, list | tuple) else ():
        found = _LAUNCHER_SWITCHES.match(switch) if isinstance(switch, str) else None
        if found is not None:
            programs.append(next(group for group in found.groups() if group))
    return programs


def manifest_commands(text: str) -> list[str]:
    """The command lines a manifest's containers run (``command`` then ``args`` of each container
    of a Pod, Job, CronJob, Deployment, ...): a workload the cluster runs is judged as the line it
    runs, as ``kubectl run -- CMD`` would be (probe17). YAML or JSON, several documents; nothing
    for text that does not parse."""
    import yaml  # only calls carrying a manifest pay for the YAML reader

    try:
        documents = list(yaml.load_all(text[:200_000], Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except yaml.YAMLError:
        return []
    lines: list[str] = []
    stack: list[tuple[Any, int]] = [(document, 0) for document in documents]
    # YAML aliases make one node reachable many times (nested aliases, exponentially many: a 1 KB
    # text took 16 s): each node is walked once, aliased or not
    walked: set[int] = set()
    while stack and len(lines) < 32:
        item, depth = stack.pop()
        if isinstance(item, Mapping | list) and depth < 24:
            if id(item) in walked:
                continue
            walked.add(id(item))
        if isinstance(item, Mapping) and depth < 24:
            if isinstance(item.get("image"), str):
                argv: list[Any] = []
                for key in ("command", "args"):
                    parts = item.get(key)
                    if isinstance(parts, list):
                        argv += [
                            p for p in parts if isinstance(p, str | int | float) and not isinstance(p, bool)
                        ]
                if argv:
                    lines.append(shlex.join(str(part) for part in argv))
            stack.extend((value, depth + 1) for value in item.values())
        elif isinstance(item, list) and depth < 24:
            stack.extend((value, depth + 1) for value in item)
    return lines


def _argv(args: Mapping[str, Any]) -> list[str] | None:
    for key in _ARGV_KEYS:
        value = args.get(key)
        if isinstance(value, list | tuple) and value and all(isinstance(part, str) for part in value):
            return list(value)
    return None


def _git_line(sub: str, args: Mapping[str, Any]) -> str:
    repo = args["repo_path"]
    verb = _GIT_TOOLS.get(sub, (sub.replace("_", "-"),))
    argv = ["git", "init", repo] if verb == ("init",) else ["git", "-C", repo, *verb]
    mode = args.get("mode")
    if isinstance(mode, str) and mode.strip().lstrip("-").isalpha():
        argv.append("--" + mode.strip().lstrip("-"))
    if args.get("force") is True:
        argv.append("--force")
    message = args.get("message")
    if isinstance(message, str) and verb == ("commit",):
        argv += ["-m", message]
    count = args.get("max_count")
    if isinstance(count, int) and not isinstance(count, bool):
        argv += ["-n", str(count)]
    argv += [args[key] for key in _GIT_OPERANDS if isinstance(args.get(key), str) and args[key]]
    files = args.get("files")
    if isinstance(files, list | tuple) and all(isinstance(f, str) for f in files) and files:
        argv += ["--", *files]
    return shlex.join(argv)


def _aws_line(service: str, operation: str, args: Mapping[str, Any]) -> str:
    argv = ["aws", service, operation]
    parameters = args.get("parameters")
    if isinstance(parameters, Mapping):
        for key, value in parameters.items():
            option = "--" + str(key).lstrip("-")
            if value is True:
                argv.append(option)
            elif isinstance(value, str | int | float) and not isinstance(value, bool):
                argv += [option, str(value)]
            elif isinstance(value, list | tuple):
                argv += [option, *(str(item) for item in value)]
    region = args.get("region")
    if isinstance(region, str) and region:
        argv += ["--region", region]
    return shlex.join(argv)


def _docker_run(args: Mapping[str, Any]) -> str | None:
    image = args.get("image")
    if not isinstance(image, str) or not image:
        return None
    argv = ["docker", "run"]
    if args.get("privileged") is True:
        argv.append("--privileged")
    for key, option in (
        ("network_mode", "--network"),
        ("pid_mode", "--pid"),
        ("ipc_mode", "--ipc"),
        ("user", "--user"),
    ):
        value = args.get(key)
        if isinstance(value, str) and value:
            argv += [option, value]
    volumes = args.get("volumes")
    for volume in volumes if isinstance(volumes, list | tuple) else ():
        if isinstance(volume, str):
            argv += ["-v", volume]
    argv.append(image)
    command = args.get("command")
    if isinstance(command, str) and command.strip():
        argv += shlex.split(command) if _splits(command) else [command]
    elif isinstance(command, list | tuple) and all(isinstance(part, str) for part in command):
        argv += list(command)
    return shlex.join(argv)


def _splits(text: str) -> bool:
    try:
        shlex.split(text)
    except ValueError:
        return False
    return True


def _interpreter(words: frozenset[str], args: Mapping[str, Any]) -> str | None:
    """The program that runs a code argument: the language the call names, else the tool's name
    (a browser's run-code tool runs Node); code given to a tool named for running it with no
    language is read as Python, the language of most code-running agent tools."""
    for key in _LANGUAGE_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip().lower() in _LANGUAGES:
            return _LANGUAGES[value.strip().lower()]
    for word in sorted(words - _PAGE_LANGUAGES):
        if word in _LANGUAGES:
            return _LANGUAGES[word]
    if words & _PAGE_LANGUAGES and not words & _BROWSER_WORDS:
        return None
    if words & _RUN_WORDS and words & _BROWSER_WORDS:
        return "node"
    if words & _RUN_WORDS:
        return "python3"
    return None
