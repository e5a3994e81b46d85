"""``shell.commands``: the argv of every simple command a shell line would run.

Rules such as "never ``rm -rf /``" must hold however the agent spells the command, so this module
reads a line the way a POSIX shell (bash flavoured) would, lexically and without executing
anything:

- quoting: ``'...'``, ``"..."``, ``$'...'`` (ANSI-C escapes such as ``\\x72``), ``$"..."``,
  backslash escapes and line continuations, so ``\\rm``, ``r''m`` and ``$'\\x72m'`` are all ``rm``;
- command lists: ``;``, ``&&``, ``||``, ``|``, ``|&``, ``&``, newlines, ``( ... )`` subshells,
  ``{ ...; }`` groups and the keywords of compound commands (``if``/``then``/``do``/...);
- substitutions: ``$(...)``, backticks, ``<(...)``/``>(...)`` and those inside ``${...}``,
  ``$((...))``, double quotes and unquoted here-documents; their commands are listed before the
  command that contains them (they run first). The containing word keeps its raw text;
- word expansions that hide a command name: brace expansion (``{rm,-rf,/}``), ``$IFS``
  splitting (``rm${IFS}-rf``) and variables assigned earlier on the same line (``a=rm; $a``);
- redirections (``> f``, ``2>&1``, ``<<EOF`` with its body) are removed from argv and listed by
  :func:`shell_redirects` instead;
- leading ``NAME=value`` assignments are removed; argv[0] becomes its basename (``/bin/rm`` and
  ``./rm`` are ``rm``: a rule names programs, not where they live), except that a slash inside a
  substitution is no directory: ``$(curl https://x/i.sh)`` stays whole, visibly unresolvable;
- wrappers are unwrapped: the wrapper is listed with only its own options (``["sudo", "-u",
  "root"]``) and the wrapped command follows as its own argv. Wrappers that run their operands
  as a command: ``sudo``, ``doas``, ``env`` (incl. ``-S``), ``nohup``, ``time``, ``nice``,
  ``timeout``, ``exec``, ``command``, ``builtin``, ``stdbuf``, ``ionice``, ``chroot``,
  ``setsid``, ``taskset``, ``busybox``, ``xargs``, ``strace``, ``ltrace``, ``unbuffer``,
  ``fakeroot``, ``systemd-run``, ``firejail``, ``proot``, ``unshare``, ``nsenter``, ``pkexec``,
  ``chrt``, ``flock``, ``screen``, ``entr``, ``runuser -u USER --`` and more (see
  :data:`.wrappers.WRAPPERS`); package runners run a package's bin (``npx rimraf`` is ``rimraf``; also
  ``npm exec``, ``pnpm dlx|exec``, ``yarn dlx|exec``, ``bunx``, ``uvx``, ``uv run``, ``pipx
  run``, ``poetry run``, ``bundle exec``, ``conda run``). Wrappers whose command is one string
  parse it as a shell line: ``bash|sh|zsh|... -c``, ``su|runuser -c`` (anywhere: they permute
  options), ``eval``, ``watch`` (its words joined, as it runs them through ``sh -c``),
  ``script -c``, ``flock FILE -c``, ``sg GROUP [-c]``, ``npx -c``, ``pnpm --shell-mode``,
  ``hyperfine`` operands, ``entr -s``, tmux's shell commands (``new``, ``neww``, ``splitw``,
  ``run-shell``, ``if-shell``, ``popup``, ``pipe-pane``, ``respawn-*``) and the text ``tmux
  send-keys`` or ``screen -X stuff`` types; ``parallel CMD ::: ARGS`` runs one job per argument
  (without ``CMD`` each argument is a command line); ``find -exec|-execdir|-ok|-okdir ... ;``
  lists the command it runs;
- programs that run a string (issue 13): interpreter code (``python -c``, ``node -e``, ``perl
  -e``, awk programs, sed ``e``, here-documents and pipes fed to ``python3 -``; see
  :mod:`~dsh_policy.cmdline.interpreters`) lists the commands it shells out to; commands run
  in a container (``docker|podman exec|run``, ``docker compose exec|run``, ``kubectl exec|run|
  debug ... --``) are listed like local ones; option values that are command lines are parsed
  (``tar --checkpoint-action=exec=``/``--to-command``/``-I``, ``zip -TT``, ``make --eval``,
  ``vim -c '!...'``/``+'!...'``, ``man -P``, ``gdb -ex '!...'``, ``rsync -e``, ``ssh -o
  ProxyCommand=``, ``socat EXEC:``, ``nc -e``, ``git -c core.pager=...``, ``git rebase --exec``,
  ``git submodule foreach``, ``apt-get -o ...::Pre-Invoke=``, ``go test -exec``/``-toolexec``,
  ``rg --pre``, ``fd -x|-X CMD...``), as are variables whose value a
  program runs (``PAGER=``, ``EDITOR=``, ``GIT_SSH_COMMAND=``, ...), database clients' shell
  escapes (``\\! cmd``, ``.shell cmd``) and framework consoles (``rails runner``, ``manage.py shell
  -c``);
- definitions on the line: an alias is expanded where it is used, a function's body is listed
  again where it is called with ``$1``... bound to the call's words, ``sh -c LINE ARGS`` binds
  ``$0``, ``$1``... to ARGS, a ``for`` loop's body is listed once per value, and ``{}`` of
  ``find START -exec`` is a path under START (``/srv/{}``; under ``.`` it stays ``{}``);
- operands (never the program name, which stays visibly unresolvable) whose value the line
  itself determines are resolved: substitutions that only print (``$(echo ~)``, ``$(printf '%s'
  /x)``, ``$(dirname "$HOME")``, and ``$(pwd)``, ``$(git rev-parse --show-toplevel)`` and
  ``$PWD`` as ``.``), variables assigned from them (``d=$(pwd); rm -rf "$d"``), and the default
  of ``${NAME:-default}`` for a variable the line never sets;
- a shell given neither ``-c`` nor a script file reads its script from stdin: its here-strings,
  here-document bodies and ``echo``/``printf`` text piped into it are parsed as shell lines. A
  wrapper that feeds stdin to a shell is listed the same way, followed by ``["sh"]``: ``at`` and
  ``batch`` (``at -f FILE`` is ``["sh", FILE]``), ``parallel`` without command or arguments,
  ``script`` without ``-c``, ``su``/``sg``/``newgrp`` without a command, ``sudo -s|-i`` and
  ``fakeroot``, ``chroot``, ``unshare``, ``nsenter``, ``firejail``, ``proot`` without one.
  ``ssh HOST CMD`` is not unwrapped: CMD runs on another machine.

Listing the wrapper as well as the wrapped command means a rule can forbid ``sudo`` itself, and an
allow-list rule (``all(c, c[0] in [...])``) must name the wrappers it accepts.

Bounded work: the input is limited to :data:`MAX_INPUT_CHARS`, nesting (substitutions inside
``bash -c`` inside ...) to :data:`MAX_NESTING` and the text read in all, counting re-reads of
nested strings, to :data:`MAX_LEXED_CHARS`; beyond any of them, :class:`ShellLineTooComplexError`
is raised so a policy fails closed instead of guessing. Everything else, including unbalanced
quotes or parentheses, is split best-effort and never raises.

The reading, module by module: :mod:`.lexer` turns text into words, separators and redirections
(quoting, ``$'..'``, substitutions, here-documents); :mod:`.expansion` turns words into argv
(``$IFS``, braces, what the line itself determines); :mod:`.unwrap` finds the commands behind
wrappers and in the strings programs run, with the option grammars of :mod:`.wrappers`,
:mod:`.databases` and :mod:`.embedded`; :mod:`.reading` ties them together, caches parses and
offers the functions below. :mod:`.budget` holds the limits every part shares.
"""

from __future__ import annotations

from dsh_policy.cmdline.shell.budget import (
    MAX_BRACE_WORDS,
    MAX_COMMANDS,
    MAX_INPUT_CHARS,
    MAX_LEXED_CHARS,
    MAX_NESTING,
    MAX_PARALLEL_JOBS,
    MAX_TOKENS,
    MAX_WORDS,
    DatabaseClient,
    DatabaseText,
    ShellLineTooComplexError,
)
from dsh_policy.cmdline.shell.expansion import MAX_LOOP_VALUES
from dsh_policy.cmdline.shell.lexer import READING_REDIRECTIONS, WRITING_REDIRECTIONS
from dsh_policy.cmdline.shell.reading import (
    shell_argv0s,
    shell_commands,
    shell_effects,
    shell_programs,
    shell_redirects,
    shell_scripts,
    shell_sql,
)

__all__ = [
    "MAX_BRACE_WORDS",
    "MAX_COMMANDS",
    "MAX_INPUT_CHARS",
    "MAX_LEXED_CHARS",
    "MAX_LOOP_VALUES",
    "MAX_NESTING",
    "MAX_PARALLEL_JOBS",
    "MAX_TOKENS",
    "MAX_WORDS",
    "READING_REDIRECTIONS",
    "WRITING_REDIRECTIONS",
    "DatabaseClient",
    "DatabaseText",
    "ShellLineTooComplexError",
    "shell_argv0s",
    "shell_commands",
    "shell_effects",
    "shell_programs",
    "shell_redirects",
    "shell_scripts",
    "shell_sql",
]
