"""``dsh-policy hook ... --project DIR|auto``: one machine-wide deployment, scoped per project.

A user-level or managed hook serves every project on the machine, so what is per project cannot
live in its deployment file. ``--project`` names the project an event comes from and turns it,
before anything else reads the command line, into ordinary options:

- ``--param workspace=<project>``: the packs' ``params.workspace`` is the project folder;
- ``--pack`` for each rule pack in ``<project>/.dsh/rules/*.yaml`` (cases files left out): a
  project *adds* rules to the machine's. It can never remove one: every stage combines by the most
  restrictive decision (deny > ask > allow, a block or a redaction stands), and a project pack
  that does not load fails the hook closed like any other.

``auto`` is the project of the running hook: ``$CLAUDE_PROJECT_DIR`` (Claude Code sets it for every
hook), else the nearest folder at or above the working directory holding ``.git`` or ``.dsh``
(Codex starts hooks in the session's folder), else the working directory itself. The home folder
and ``/`` are never taken as a project (a dotfiles repository would make all of ``$HOME`` the
workspace).

The expanded options are part of the deployment's identity (:mod:`.gateway.runtime_paths`), so
each project gets its own resident gateway, and the audit log of the machine's deployment file is
shared (several processes share one chain). Standard library only, no costly imports: the fast
hook client runs this on every event.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: importing typing would cost every hook event
if TYPE_CHECKING:
    from collections.abc import Mapping

OPTION = "--project"
AUTO = "auto"
PROJECT_VARIABLE = "CLAUDE_PROJECT_DIR"
MARKERS = (".git", ".dsh")
RULES_FOLDER = os.path.join(".dsh", "rules")


def find_project(value: str, environ: Mapping[str, str], cwd: str) -> str:
    """The project folder ``value`` names (``auto``: see the module docstring), absolute."""
    if value != AUTO:
        return os.path.normpath(os.path.join(cwd, os.path.expanduser(value)))
    named = environ.get(PROJECT_VARIABLE)
    if named:
        return os.path.normpath(os.path.join(cwd, named))
    start = os.path.normpath(cwd)
    home = os.path.normpath(environ.get("HOME") or os.path.expanduser("~"))
    folder = start
    while True:
        if folder not in (home, os.sep) and any(os.path.exists(os.path.join(folder, m)) for m in MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return start
        folder = parent


def project_packs(project: str) -> list[str]:
    """The project's own packs, sorted by name (``*.cases.yaml`` are cases files, not packs)."""
    folder = os.path.join(project, RULES_FOLDER)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [
        os.path.join(folder, name)
        for name in sorted(names)
        if name.endswith((".yaml", ".yml")) and not name.endswith((".cases.yaml", ".cases.yml"))
    ]


def yaml_string(text: str) -> str:
    """``text`` as a double-quoted YAML scalar (``--param`` values are read as YAML)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def expand(argv: list[str], environ: Mapping[str, str] | None = None, cwd: str | None = None) -> list[str]:
    """``argv`` with every ``--project VALUE`` replaced by the options it stands for. A
    ``--project`` without a value is left for the parser to refuse (the hook then fails closed)."""
    if not any(word == OPTION or word.startswith(OPTION + "=") for word in argv):
        return argv
    env = os.environ if environ is None else environ
    here = os.getcwd() if cwd is None else cwd
    out: list[str] = []
    index = 0
    while index < len(argv):
        word = argv[index]
        name, has_value, inline = word.partition("=")
        if name != OPTION or (not has_value and index + 1 >= len(argv)):
            out.append(word)
            index += 1
            continue
        value = inline if has_value else argv[index + 1]
        index += 1 if has_value else 2
        project = find_project(value, env, here)
        out += ["--param", "workspace=" + yaml_string(project)]
        for pack in project_packs(project):
            out += ["--pack", pack]
    return out
