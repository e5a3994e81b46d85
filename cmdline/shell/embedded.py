"""Shell lines and code carried inside other programs' options: ``tar --to-command``, ``vim -c
'!...'``, ``git -c core.pager=...``, ``ssh -o ProxyCommand=``, ``go test -exec``/``-toolexec``,
``rg --pre``, ``fd -x``/``-X`` (the argument injections into allow-listed search and test commands
Trail of Bits described in 2025), makefile recipes, framework consoles (``rails runner``,
``manage.py shell -c``), ``find -exec``'s ``{}``.
"""

from __future__ import annotations

import re
import shlex

from dsh_policy.cmdline import interpreters
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.shell.wrappers import option_value

# (an autocommand's command too: `autocmd VimEnter * silent !cmd` runs it when the event fires)
_VIM_SHELL = lazy_compile(r"^[:\s]*(?:au(?:tocmd)?!?\s+[\w,]+\s+\S+\s+(?:(?:\+\+once|\+\+nested)\s+)*)?"
    r"(?:(?:silent!?\s*)?!|(?:r(?:ead)?|w(?:rite)?)\s*!"
    r"|(?:call\s+)?system(?:list)?\s*\(\s*(['\"]))(.*)$", re.DOTALL)
_VIM_CODE = lazy_compile(r"^[:\s]*(py(?:thon)?3?|pyx|lua|perl|ruby|rub)\s+(.*)$", re.DOTALL)
_VIM_LANGS = {"py": "python", "python": "python", "py3": "python", "python3": "python", "pyx": "python",
              "lua": "lua", "perl": "perl", "ruby": "ruby", "rub": "ruby"}  # fmt: skip
_MAKE_RULE = lazy_compile(r"^[^:=#\t]+::?(?!=)[^;]*;(.*)$")
_MAKE_SHELL = lazy_compile(r"\$[({]shell\s+([^)}]*)[)}]")
GIT_COMMAND_KEYS = lazy_compile(
    r"(?i)^(?:core\.(?:pager|editor|sshcommand|fsmonitor|askpass)|diff\.external|credential\.helper|"
    r"gpg\.program|sequence\.editor|alias\.[^=]+"
        r"|(?:filter|merge|diff)\.[^=]+\.(?:clean|smudge"
        r"|process|driver|command|textconv))=(.*)$"
)


_GIT_PROGRAM_OPTION = lazy_compile(r"^(?:--upload-pack|--receive-pack|--exec|-u)(?:=|$)")
_GIT_TRANSPORTS = ("fetch", "clone", "ls-remote", "pull", "push", "archive", "send-pack", "fetch-pack")


def _git_transport(before: list[str]) -> str:
    """The git sub-command among the words before an option, when it talks to a remote ("" else)."""
    return next((word for word in before[1:] if word in _GIT_TRANSPORTS), "")


def embedded_lines(argv: list[str]) -> list[str]:
    """Shell lines carried in option values of the programs :meth:`Unwrapper._strings_run`
    knows."""
    program = argv[0]
    lines: list[str] = []

    def value_of(i: int, name: str) -> str:
        arg = argv[i]
        if arg.startswith(name + "="):
            return arg[len(name) + 1 :]
        if arg == name:
            return argv[i + 1] if i + 1 < len(argv) else ""
        return arg[len(name) :]  # an attached short option: -ICMD

    for i, arg in enumerate(argv[1:], start=1):
        if program in ("tar", "bsdtar", "gtar"):
            if arg.startswith("--checkpoint-action"):
                action = value_of(i, "--checkpoint-action")
                if action.startswith("exec="):
                    lines.append(action[5:])
            for name in ("--to-command", "--use-compress-program", "--rsh-command", "--info-script",
                         "--new-volume-script"):  # fmt: skip
                if arg == name or arg.startswith(name + "="):
                    lines.append(value_of(i, name))
            if arg == "-I" or arg == "-F" or (arg.startswith("-I") and len(arg) > 2):
                lines.append(value_of(i, arg[:2]))
        elif program == "zip" and arg in ("-TT", "--unzip-command"):
            lines.append(value_of(i, arg))
        elif program in ("make", "gmake") and (arg in ("--eval", "-E") or arg.startswith("--eval=")):
            lines.extend(_makefile_recipes(value_of(i, "--eval" if arg.startswith("--eval") else "-E")))
        elif program in ("vim", "vi", "nvim", "ex", "view", "gvim", "rvim") and (
            arg in ("-c", "--cmd") or (arg.startswith("+") and len(arg) > 1)
        ):
            lines.extend(_vim_lines(arg[1:] if arg.startswith("+") else value_of(i, arg)))
        elif program == "man" and (arg == "-P" or arg.startswith("--pager=") or arg == "--pager"):
            lines.append(value_of(i, "--pager" if arg.startswith("--") else "-P"))
        elif program == "man" and (arg.startswith("--html=") or (arg.startswith("-H") and len(arg) > 2)):
            # man's HTML output opened in a "browser": the option's attached value is run as one
            lines.append(arg[7:] if arg.startswith("--html=") else arg[2:])
        elif program == "sort" and (arg == "--compress-program" or arg.startswith("--compress-program=")):
            lines.append(value_of(i, "--compress-program"))  # run to compress sort's temporary files
        elif program == "gdb" and arg in ("-ex", "--ex", "-eval-command", "--eval-command", "-iex"):
            command = value_of(i, arg).lstrip()
            for prefix in ("!", "shell ", "pipe "):
                if command.startswith(prefix):
                    lines.append(command[len(prefix) :])
        elif program == "rsync" and (arg == "-e" or arg.startswith("--rsh")):
            command = value_of(i, "--rsh" if arg.startswith("--rsh") else "-e")
            if command.split()[:1] != ["ssh"]:
                lines.append(command)
        elif program == "ssh" and arg.startswith("-o") and i + (arg == "-o") < len(argv):
            option = argv[i + 1] if arg == "-o" else arg[2:]
            key, _, value = option.partition("=")
            if key.strip().lower() in ("proxycommand", "localcommand", "knownhostscommand"):
                lines.append(value.strip())
        elif program == "socat":
            for address in arg.split("!!"):
                kind, colon, command = address.partition(":")
                if colon and kind.lower() in ("exec", "system"):
                    lines.append(command.split(",", 1)[0] if kind.lower() == "exec" else command)
        elif program in ("nc", "ncat", "netcat") and arg in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec"):
            lines.append(value_of(i, arg))
        elif program == "git":
            if arg in ("--exec", "-x") and "rebase" in argv:
                lines.append(value_of(i, arg))
            elif arg.startswith("--exec=") and "rebase" in argv:
                lines.append(arg[7:])
            elif _GIT_PROGRAM_OPTION.match(arg) and _git_transport(argv[:i]):
                # the program git starts on the other side of a transport, started here for a
                # local or ssh remote as a shell command (fetch/pull/clone/ls-remote --upload-pack,
                # push --receive-pack, archive --exec); `-u` only where it means --upload-pack
                name = arg.split("=", 1)[0]
                if name != "-u" or _git_transport(argv[:i]) in ("clone", "ls-remote"):
                    lines.append(value_of(i, name))
            elif arg.startswith(("-O", "--open-files-in-pager")) and "grep" in argv[1:i]:
                # git grep -O[CMD]: opens the matching files in CMD (attached value only)
                value = arg[2:] if arg.startswith("-O") else arg.partition("=")[2]
                if value:
                    lines.append(value)
            elif argv[i - 1] == "-c":
                match = GIT_COMMAND_KEYS.match(arg)
                if match is not None and match.group(1).strip():
                    lines.append(match.group(1).strip().lstrip("!"))
            elif arg == "foreach" and "submodule" in argv[:i]:
                rest = [a for a in argv[i + 1 :] if a not in ("--recursive", "-q", "--quiet")]
                if rest:  # $toplevel is the superproject's root: the current directory, read as "."
                    lines.append(" ".join(rest).replace("${toplevel}", ".").replace("$toplevel", "."))
                break
        elif program in ("apt", "apt-get", "aptitude") and arg == "-o" and i + 1 < len(argv):
            key, eq, value = argv[i + 1].partition("=")
            if eq and re.search(r"(?i)(?:Pre|Post)-Invoke|::Post-Invoke-Success|DPkg::Pre-Install-Pkgs", key):
                lines.append(value)
        elif program == "go" and (arg in ("-exec", "-toolexec") or arg.startswith(("-exec=", "-toolexec="))):
            lines.append(value_of(i, arg.split("=", 1)[0]))
        elif program in ("rg", "ripgrep") and (arg == "--pre" or arg.startswith("--pre=")):
            lines.append(value_of(i, "--pre"))
        elif program in ("fd", "fdfind") and arg in ("-x", "--exec", "-X", "--exec-batch"):
            carried = argv[i + 1 :]
            carried = carried[: carried.index(";")] if ";" in carried else carried
            lines.append(" ".join(shlex.quote(a) for a in carried))
            break
        elif program in ("less", "more") and arg.startswith("+!"):
            lines.append(arg[2:])
        elif program == "nmap" and arg.startswith("--script") and argv[i:i + 1]:
            continue
    return [line for line in lines if line.strip()]


def framework_code(argv: list[str]) -> tuple[str, str] | None:
    """Code a framework console runs from its command line: ``rails runner CODE`` (Ruby),
    ``python manage.py shell -c CODE`` and ``django-admin shell -c CODE`` (Python), ``php artisan
    tinker --execute=CODE`` (PHP)."""
    words = [w for w in argv if not w.startswith("-")]
    if argv[0] == "rails" and len(words) > 2 and words[1] in ("runner", "r"):
        return "ruby", words[2]
    django = any(w == "manage.py" or w.endswith("/manage.py") for w in argv[:3]) or argv[0] == "django-admin"
    if django and "shell" in argv:
        found = option_value(argv, len(argv), "c", "command")
        return ("python", found) if found else None
    if "artisan" in argv[:2] and "tinker" in argv:
        found = option_value(argv, len(argv), "", "execute")
        return ("php", found) if found else None
    return None


def found_paths(find: list[str], command: list[str]) -> list[str]:
    """``-exec`` words with ``{}`` read as a path under find's first starting point
    (``find /srv -exec sh -c '...' _ {} ;`` hands the shell ``/srv/{}``); under ``.`` it stays
    ``{}``, a relative name."""
    root = next((a for a in find[1:] if not a.startswith(("-", "(", "!"))), ".")
    if root in (".", "./") or "{}" not in command:
        return command
    return [root.rstrip("/") + "/{}" if word == "{}" else word for word in command]


def _makefile_recipes(text: str) -> list[str]:
    """Recipe lines of a makefile fragment (``x:;CMD``, tab-indented lines) and ``$(shell CMD)``."""
    lines: list[str] = [m.group(1) for m in _MAKE_SHELL.finditer(text)]
    for line in text.replace("\\n", "\n").splitlines():
        rule = _MAKE_RULE.match(line)
        if rule is not None:
            lines.append(rule.group(1))
        elif line.startswith("\t"):
            lines.append(line[1:])
    return [line.lstrip("@-+") for line in lines]


def _vim_lines(command: str) -> list[str]:
    """The shell line of a vim command (``:!CMD``, ``:r !CMD``, ``:call system('CMD')``) or the
    shell-outs of its embedded Python/Lua/Perl/Ruby."""
    shell = _VIM_SHELL.match(command)
    if shell is not None:
        text = shell.group(2)
        if shell.group(1):  # system('CMD'): cut the closing quote and parenthesis
            text = text.split(shell.group(1), 1)[0]
        return [text]
    code = _VIM_CODE.match(command)
    if code is not None:
        analysis = interpreters.analyze(code.group(2), _VIM_LANGS.get(code.group(1), "python"))
        return analysis.shell_lines + [" ".join(map(shlex.quote, argv)) for argv in analysis.argvs]
    return []
