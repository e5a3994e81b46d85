"""The software factory's own code paths: build, lint, test, docs and release tools that execute
code named in a file of the repository ("Living off the Pipeline", boostsecurityio/lotp), and the
environment variables that make every later program load code.

:mod:`later` classes a path by what runs it; this module holds the tables for the classes these
tools add and the signals that read their text:

- ``tool-config``: files a linter, formatter, bundler, type checker, docs builder, release or
  template tool loads at its next run, several of them code in their own right (eslint, prettier,
  vite, webpack and other ``*.config.js``, dangerfile, pnpm's hook file) and the others able to
  name code to run (pylint's init-hook, mypy and flake8 plugins, mkdocs hooks, checkov's external
  checks, golangci-lint's custom plugins, phpstan's bootstrap files, rubocop's ERB, gomplate's
  postExec, goreleaser and bazel hooks);
- ``go-source``: Go files, which run later only through ``//go:generate`` directives and mage
  targets.

The signals are lexical like the rest of :mod:`later`: what the text itself shows.
"""

from __future__ import annotations

import re

from dsh_policy.cmdline.effects.model import Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = [
    "BUILD_FILES",
    "CODE_ENV",
    "GO_SOURCE",
    "TOOL_CONFIGS",
    "config_code",
    "env_file_acts",
    "env_loads_code",
    "exported_code_acts",
    "generate_lines",
    "loads_local_code",
]

_JS = r"\.(?:[cm]?[jt]s|[jt]sx)$"
TOOL_CONFIGS = (
    r"(?:^|/)(?:eslint\.config|\.eslintrc|prettier\.config|\.prettierrc|vite\.config|vitest\.workspace"
    r"|webpack(?:\.[\w-]+)?\.config|rollup\.config|babel\.config|\.babelrc|next\.config|nuxt\.config"
    r"|svelte\.config|astro\.config|tailwind\.config|postcss\.config|tsup\.config|esbuild\.config"
    r"|commitlint\.config|lint-staged\.config|\.lintstagedrc|stylelint\.config|\.stylelintrc"
    r"|release\.config|\.releaserc|dangerfile|\.pnpmfile|metro\.config|rspack\.config|turbo\.config)"
    + _JS
    + r"|(?:^|/)(?:Dangerfile|\.?pylintrc|\.pylintrc\.toml|\.?mypy\.ini|\.flake8|setup\.cfg|mkdocs\.ya?ml"
    r"|\.checkov\.ya?ml|\.golangci\.(?:ya?ml|toml|json)|\.gomplate\.ya?ml|\.goreleaser\.ya?ml"
    r"|phpstan\.(?:neon|neon\.dist|dist\.neon)|\.rubocop(?:_todo)?\.ya?ml|\.bazelrc|[\w.-]+\.bazelrc"
    r"|\.semgrep\.ya?ml|\.sqlfluff|\.yamllint(?:\.ya?ml)?)$"
)
"""Paths of the files a project's tools load as configuration and that can run code."""

BUILD_FILES = (
    r"(?:^|/)[\w.-]+\.gradle(?:\.kts)?$|(?:^|/)pom\.xml$|(?:^|/)build\.xml$|(?:^|/)[\w.-]+\.(?:cs|fs|vb)proj$"
    r"|(?:^|/)Directory\.Build\.(?:props|targets)$|(?:^|/)lib/+tasks/+[\w.-]+\.rake$|(?:^|/)[\w.-]+\.rake$"
    r"|(?:^|/)Earthfile$|(?:^|/)magefile\.go$|(?:^|/)magefiles/+[\w.-]+\.go$"
)
"""Build files of the JVM, .NET, Ruby and Go task runners (gradle scripts and init scripts, maven
and ant builds, MSBuild projects and their Directory.Build imports, rake tasks, Earthly, mage)."""

GO_SOURCE = r"\.go$"

_CONFIG_CODE = lazy_compile(
    # pylint's init-hook and evaluation are Python run at every lint
    r"(?im)^[ \t]*(?:init-hook|evaluation)\s*=[^\n]*"
    r"(?:\bos\.|\bsystem\b|popen|subprocess|\bexec\b|\beval\b|spawn"
    r"|__import__\(\s*[\"'](?:os|subprocess|socket|urllib|pty|ctypes))"
    # ERB in a YAML config (rubocop renders it) that starts a process
    r"|<%[^%]{0,400}?(?:\bsystem\s*\(|`|%x[({\[]|\bexec\s*\(|\bspawn\s*\(|IO\.popen|Open3)"
    # gomplate runs a command after rendering or pipes its output into one
    r"|^[ \t]*(?:postExec|execPipe)\s*:"
    # bazel hands a command to a shell for every build or test
    r"|(?:workspace_status_command|run_under|script_path)[= ][\"']?(?:/bin/)?(?:ba|z|da)?sh\s+-c\b"
)
_LOCAL_CODE = lazy_compile(
    # mypy plugins given as a file (a module name such as pydantic.mypy is an installed package)
    r"(?im)^[ \t]*plugins[ \t]*=[^\n]*(?:\.py\b|(?:^|[\s,=\[\"'])\.{1,2}/)"
    r"|^[ \t]*\[flake8:local-plugins\]"
    r"|^hooks\s*:"  # mkdocs hooks: Python files imported at every build
    r"|^[ \t]*external-checks-(?:dir|git)\s*:"
    r"|^[ \t]*path\s*:\s*[\"']?[^\s\"'#]+\.so\b"  # golangci-lint custom linter plugins
    r"|^[ \t]*bootstrapFiles\s*:|^[ \t]*bootstrap\s*:\s*\S"
)
_GENERATE = lazy_compile(r"(?m)^[ \t]*//go:generate[ \t]+(.+)$")
_MAGE = lazy_compile(r"(?m)^[ \t]*//[ \t]*(?:go:build|\+build)[ \t]+[^\n]*\bmage\b")

CODE_ENV = (
    r"(?:LD_PRELOAD|LD_AUDIT|DYLD_INSERT_LIBRARIES|BASH_ENV|PERL5OPT|RUBYOPT|PYTHONSTARTUP|GIT_SSH_COMMAND"
    r"|GIT_SSH|GIT_ASKPASS|SSH_ASKPASS|GIT_EXEC_PATH|GIT_CONFIG_GLOBAL|GIT_CONFIG_PARAMETERS|CODEX_HOME"
    r"|CLAUDE_CONFIG_DIR|GEMINI_CLI_HOME|NODE_OPTIONS|_JAVA_OPTIONS|JAVA_TOOL_OPTIONS|JDK_JAVA_OPTIONS"
    r"|MAVEN_OPTS|MAVEN_ARGS|GRADLE_OPTS|PYTHONWARNINGS|npm_config_script_shell|NPM_CONFIG_SCRIPT_SHELL"
    r"|npm_config_node_options|EDITOR|VISUAL|PAGER|GIT_PAGER|BROWSER)"
)
"""Variables through which a later program loads code or starts another program."""

# (a patch's added line starts with "+")
_CODE_ASSIGNMENT = lazy_compile(r"(?m)(?:^\+?|[\s;'\"])(?:export\s+)?(" + CODE_ENV + r")\s*=\s*([^\n]*)")
_NODE_PLAIN = r"^(?!.*(?:--require|(?:^|[\s\"'])-r\s|--import|--(?:experimental-)?loader))"
_JVM_PLAIN = r"^(?!.*(?:-javaagent|-agentpath|-agentlib|OnOutOfMemoryError|OnError))"
_EDITORS = r"^[\"']?(?:code|vim|nvim|vi|nano|emacs|subl|micro|hx|cursor|zed)(?:\s+--?\w[\w-]*)*[\"']?\s*$"
_PAGERS = r"^[\"']?(?:less|more|cat|bat|delta)(?:\s+-[\w-]+)*[\"']?\s*$"
_BROWSERS = r"^[\"']?(?:none|false|echo|true|firefox|chromium|google-chrome|open|xdg-open|w3m|lynx)[\"']?\s*$"
_HARMLESS_VALUE: dict[str, re.Pattern[str]] = {
    # only the options that load code count; heap sizes and memory flags are everyday CI settings
    **dict.fromkeys(("NODE_OPTIONS", "npm_config_node_options"), lazy_compile(_NODE_PLAIN)),
    **dict.fromkeys(
        ("_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "MAVEN_OPTS", "GRADLE_OPTS"),
        lazy_compile(_JVM_PLAIN),
    ),
    "MAVEN_ARGS": lazy_compile(r"^(?!.*(?:-Dexec\.|exec:exec|-D[\w.]*(?:agent|plugin)))"),
    # a warning filter whose category is a module path ending in a dot imports that module
    "PYTHONWARNINGS": lazy_compile(r"^(?![^\n]*::[\w.]*\.(?::|[\s\"']|$))"),
    # the everyday editors, pagers and browsers, by name (with their own flags)
    **dict.fromkeys(("EDITOR", "VISUAL"), lazy_compile(_EDITORS)),
    **dict.fromkeys(("PAGER", "GIT_PAGER"), lazy_compile(_PAGERS)),
    "BROWSER": lazy_compile(_BROWSERS),
}


def config_code(text: str) -> bool:
    """Settings whose value is code that starts a process (pylint's init-hook, ERB in rubocop's
    config, gomplate's postExec, bazel's status command handed to ``sh -c``)."""
    return _CONFIG_CODE.search(text) is not None


def loads_local_code(text: str) -> bool:
    """Settings that make a tool import a project file unseen: mypy and flake8 plugins given as
    files, mkdocs hooks, checkov's external checks, golangci-lint's ``.so`` plugins, phpstan's
    bootstrap files. The referenced file's text is not part of the write, so it asks."""
    return _LOCAL_CODE.search(text) is not None


def generate_lines(text: str) -> str:
    """What a Go file runs later: its ``//go:generate`` command lines, or all of it for a mage
    file (``//go:build mage``: ``mage`` compiles and runs its targets and ``init``)."""
    if _MAGE.search(text):
        return text
    return "\n".join(found.group(1) for found in _GENERATE.finditer(text))


def env_loads_code(text: str) -> bool:
    """An environment file (``$GITHUB_ENV``, ``.env``, ``/etc/environment``) assigning a variable
    that makes later programs load code or start a program: a preloaded library, a shell's start
    file, an interpreter's start-up options, git's ssh or askpass program, an agent's home moved
    into the project; for the variables with everyday values (NODE_OPTIONS heap sizes, JVM memory
    flags, warning filters, a named editor or pager) only the values that load code count."""
    for found in _CODE_ASSIGNMENT.finditer(text):
        name, value = found.group(1), found.group(2).strip()
        harmless = _HARMLESS_VALUE.get(name)
        if value and not (harmless is not None and harmless.search(value)):
            return True
    return False


_ENV_FILE = lazy_compile(
    r"(?i)^(?:\$\{?(?:GITHUB_ENV|BASH_ENV)\}?|\$env:GITHUB_ENV|%GITHUB_ENV%|(?:.*/)?\.env(?:\.[\w-]+)?"
    r"|/+etc/+environment|.*/environment\.d/+[^/]+\.conf|(?:.*/)?\.pam_environment)$"
)
"""Files whose assignments every later step, shell or session of the machine or job loads:
GitHub Actions' ``$GITHUB_ENV``, dotenv files, ``/etc/environment`` and ``environment.d``."""


def env_file_acts(line: str, written: list[str]) -> list[Effect]:
    """A line appending to an environment file (``echo 'BASH_ENV=...' >> $GITHUB_ENV``) an
    assignment that makes later programs load code: every later step of the job runs it
    (the LOTP environment-poisoning technique), judged like the same file written with the
    file tools (:func:`env_loads_code`)."""
    target = next((t for t in written if _ENV_FILE.match(t.strip("\"'"))), None)
    if target is None or not env_loads_code(line):
        return []
    return [
        _fx("runs-later-config", f"sets a variable that loads code for every later step ({target})", target)
    ]


# The loader variables among CODE_ENV whose value is not itself a command line: the command ones
# (EDITOR, PAGER, GIT_SSH_COMMAND, ...) are parsed as commands by the shell reader, and a library
# preloaded from a scratch folder is hijack.py's.
_EXPORTED = lazy_compile(
    r"(?:^|[\s;&|(])(?:export|declare|typeset|readonly|local)(?:\s+-[A-Za-z]+)*\s+"
    r"((?:[A-Za-z_]\w*(?:=(?:\"[^\"]*\"|'[^']*'|[^\s;&|)]*))?\s*)+)"
)
_LOADER_ASSIGNMENT = lazy_compile(
    r"(?:^|\s)(BASH_ENV|ENV|PERL5OPT|RUBYOPT|PYTHONSTARTUP|GIT_EXEC_PATH|GIT_CONFIG_GLOBAL"
    r"|GIT_CONFIG_PARAMETERS|CODEX_HOME|CLAUDE_CONFIG_DIR|GEMINI_CLI_HOME|NODE_OPTIONS|_JAVA_OPTIONS"
    r"|JAVA_TOOL_OPTIONS|JDK_JAVA_OPTIONS|MAVEN_OPTS|MAVEN_ARGS|GRADLE_OPTS|PYTHONWARNINGS"
    r"|npm_config_script_shell|NPM_CONFIG_SCRIPT_SHELL|npm_config_node_options)"
    r"=(\"[^\"]*\"|'[^']*'|\S*)"
)


def exported_code_acts(line: str) -> list[Effect]:
    """A shell line exporting (``export``, ``declare -x``, ``typeset -x``, ...) a variable through
    which every later program of the session loads code: a shell's start file (BASH_ENV), an
    interpreter's start-up options (NODE_OPTIONS --require, PERL5OPT, RUBYOPT, JVM agents), git's
    program folder or config, an agent's home moved. The value outlives the command (Cursor's
    allow-list trusted the built-ins, CVE-2026-22708), so it is judged like the same assignment
    written into an environment file (:func:`env_loads_code`): everyday values (a heap size, a
    named editor) pass. A one-command prefix (``NODE_OPTIONS=... node app.js``) is not this: its
    program runs now, in view."""
    found: list[Effect] = []
    for statement in _EXPORTED.finditer(line):
        for assignment in _LOADER_ASSIGNMENT.finditer(statement.group(1)):
            name, raw = assignment.group(1), assignment.group(2)
            value = raw[1:-1] if raw[:1] in ("'", '"') else raw
            harmless = _HARMLESS_VALUE.get(name)
            if value.strip() and not (harmless is not None and harmless.search(value)):
                what = f"exports {name}, which makes later programs load code"
                found.append(_fx("runs-later-config", what, value))
    return found
