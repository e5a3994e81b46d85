"""Programs whose output is shell set-up code meant for ``eval "$(...)"``: the agent's variables
(``ssh-agent -s``), a version manager's shims (``pyenv init -``), a package manager's paths (``brew
shellenv``), a directory hook (``direnv hook bash``). Their own documentation tells users to run
them that way (GitHub's SSH guide, Homebrew's installer, pyenv's README), so ``eval`` of one of them
runs that tool's text, not text the line leaves open; ``eval`` of anything else stays unresolved.
"""

from __future__ import annotations

import shlex
from typing import Final

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.shell.expansion import basename

__all__ = ["setup_printer"]

#: program -> the words (after options) that make it print set-up code; () = any invocation.
_PRINTERS: Final[dict[str, tuple[tuple[str, ...], ...]]] = {
    "ssh-agent": ((),),
    "brew": (("shellenv",),),
    "pyenv": (("init",), ("virtualenv-init",)),
    "rbenv": (("init",),),
    "nodenv": (("init",),),
    "goenv": (("init",),),
    "jenv": (("init",),),
    "plenv": (("init",),),
    "direnv": (("hook",),),
    "fnm": (("env",),),
    "zoxide": (("init",),),
    "starship": (("init",),),
    "mise": (("activate",), ("env",)),
    "rtx": (("activate",),),
    "conda": (("shell.bash", "hook"), ("shell.zsh", "hook"), ("shell.posix", "hook")),
    "micromamba": (("shell", "hook"),),
    "opam": (("env",),),
    "keychain": ((),),
    "dircolors": ((),),
    "luarocks": (("path",),),
    "minikube": (("docker-env",),),
    "gpg-agent": ((),),
}
_SUBSTITUTION = lazy_compile(r"^\s*(?:\$\((?P<a>[^()`;&|<>$]*)\)|`(?P<b>[^`;&|<>$]*)`)\s*$")


def setup_printer(text: str) -> str | None:
    """The printer's own command line when ``text`` (what ``eval`` is given) is one command
    substitution of a set-up printer from the table, else None."""
    found = _SUBSTITUTION.match(text)
    if found is None:
        return None
    inner = found.group("a") if found.group("a") is not None else found.group("b")
    try:
        argv = shlex.split(inner)
    except ValueError:
        return None
    if not argv:
        return None
    forms = _PRINTERS.get(basename(argv[0]))
    words = [a for a in argv[1:] if not a.startswith("-")]
    if forms is None or not any(words[: len(form)] == list(form) for form in forms):
        return None
    return inner
