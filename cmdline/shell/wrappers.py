"""How wrappers spell their own options, so the command they run can be found after them
(``sudo -u root rm``, ``timeout 5 rm``, ``npx rimraf``, ``uv run``, ``docker exec``, ...).

Tables only, plus the small option readers the unwrapper uses on them; what a wrapper does with
the command it finds is in :mod:`.unwrap`.
"""

from __future__ import annotations

from dataclasses import dataclass

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.shell.lexer import ASSIGNMENT

# -- wrappers -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WrapperOptions:
    """How a wrapper's own options are spelled, so the wrapped command can be found after them."""

    short_with_value: str = ""
    long_with_value: frozenset[str] = frozenset()
    operands: int = 0  # operands before the command: ``timeout DURATION``, ``chroot NEWROOT``
    assignments: bool = False  # ``env NAME=value``
    numeric_flags: bool = False  # ``nice -10``
    shell_when_bare: bool = False  # without a command it runs a shell, which reads stdin
    shell_flags: str = ""  # short options that make a bare call run a shell (``sudo -s``)
    shell_long_flags: frozenset[str] = frozenset()


def longs(*names: str) -> frozenset[str]:
    return frozenset(names)


WRAPPERS: dict[str, WrapperOptions] = {
    "sudo": WrapperOptions(
        "CDghpRrtTUu",
        longs("close-from", "chdir", "group", "host", "prompt", "chroot", "role", "type",
               "command-timeout", "other-user", "user"),
        assignments=True, shell_flags="si", shell_long_flags=longs("shell", "login"),
    ),
    "doas": WrapperOptions("uC", shell_flags="s"),
    "env": WrapperOptions("uCS", longs("unset", "chdir", "split-string"), assignments=True),
    "nohup": WrapperOptions(),
    "time": WrapperOptions("fo", longs("format", "output")),
    "nice": WrapperOptions("n", longs("adjustment"), numeric_flags=True),
    "timeout": WrapperOptions("sk", longs("signal", "kill-after"), operands=1),
    "exec": WrapperOptions("a"),
    "command": WrapperOptions(),
    "builtin": WrapperOptions(),
    "stdbuf": WrapperOptions("ioe", longs("input", "output", "error")),
    "ionice": WrapperOptions("cnpPu", longs("class", "classdata", "pid", "pgid", "uid")),
    "chroot": WrapperOptions("", longs("userspec", "groups"), operands=1, shell_when_bare=True),
    "setsid": WrapperOptions(),
    "taskset": WrapperOptions("", operands=1),
    "busybox": WrapperOptions(),
    "xargs": WrapperOptions(
        "adEILnPs",
        longs("arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs",
               "max-chars", "process-slot-var"),
    ),
    "strace": WrapperOptions(
        "abeEIoOpPSsuUX",
        longs("attach", "columns", "detach-on", "env", "expr", "trace", "signal", "status",
               "output", "string-limit", "user", "summary-columns", "summary-sort-by", "trace-path",
               "const-print-style", "decode-fds", "quiet", "silence", "absolute-timestamps"),
    ),
    "ltrace": WrapperOptions("aADeFlnopsuwx", longs("align", "indent", "library", "output")),
    "unbuffer": WrapperOptions(),
    "fakeroot": WrapperOptions("lisb", longs("lib", "faked", "timeout"), shell_when_bare=True),
    "systemd-run": WrapperOptions(
        "uEpHMC",
        longs("unit", "property", "description", "slice", "uid", "gid", "nice", "setenv", "host",
               "machine", "working-directory", "service-type", "on-active", "on-boot", "on-startup",
               "on-unit-active", "on-unit-inactive", "on-calendar", "timer-property",
               "path-property", "socket-property", "capsule", "json", "background"),
        shell_flags="S", shell_long_flags=longs("shell"),
    ),
    "firejail": WrapperOptions(shell_when_bare=True),  # its options are all --name[=value]
    "proot": WrapperOptions(
        "rbmqwkivRS",
        longs("rootfs", "bind", "mount", "qemu", "pwd", "cwd", "kernel-release", "verbose"),
        shell_when_bare=True,
    ),
    "unshare": WrapperOptions(
        "SGRw", longs("setuid", "setgid", "root", "wd", "propagation", "setgroups"),
        shell_when_bare=True,
    ),
    "nsenter": WrapperOptions(
        "tSG", longs("target", "setuid", "setgid", "env"), shell_when_bare=True
    ),
    "pkexec": WrapperOptions("", longs("user"), shell_when_bare=True),
    "prlimit": WrapperOptions("p", longs("pid")),
    "setpriv": WrapperOptions(
        "",
        longs("reuid", "regid", "ruid", "euid", "rgid", "egid", "groups", "inh-caps",
               "ambient-caps", "bounding-set", "securebits", "pdeathsig", "selinux-label",
               "apparmor-profile", "landlock-access", "landlock-rule"),
    ),
    "numactl": WrapperOptions(
        "CNmipP",
        longs("physcpubind", "cpunodebind", "membind", "interleave", "preferred", "preferred-many"),
    ),
    "caffeinate": WrapperOptions("tw"),
    "torsocks": WrapperOptions("uapP", longs("user", "pass", "address", "port")),
    "proxychains": WrapperOptions("f"),
    "proxychains4": WrapperOptions("f"),
    "trickle": WrapperOptions("udwtLn"),
    "xvfb-run": WrapperOptions(
        "nsfpe", longs("server-num", "server-args", "auth-file", "xauth-protocol", "error-file")
    ),
    "dbus-run-session": WrapperOptions("", longs("config-file", "dbus-daemon")),
    "eatmydata": WrapperOptions(),
    "nocache": WrapperOptions(),
    "chronic": WrapperOptions(),
    "ifne": WrapperOptions(),
    "catchsegv": WrapperOptions(),
    "valgrind": WrapperOptions(),  # its options are all --name=value
    "setarch": WrapperOptions("", operands=1),
    "linux32": WrapperOptions(),
    "linux64": WrapperOptions(),
    "faketime": WrapperOptions("", operands=1),
    "ssh-agent": WrapperOptions("aEPt"),
    "tsp": WrapperOptions("LDNE"),
    "setuidgid": WrapperOptions("", operands=1),
    "envdir": WrapperOptions("", operands=1),
    "daemonize": WrapperOptions("ceEoplu"),
    "run-one": WrapperOptions(),
    "sshpass": WrapperOptions("pfdP"),
    "rlwrap": WrapperOptions("bfgHlOPqsStwz", longs("break-chars", "file", "history-filename", "logfile",
                                                   "substitute-prompt", "prompt-colour", "filter")),
}  # fmt: skip
KUBECTL_VALUE_OPTIONS = frozenset(
    {"-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server", "--token",
     "--as", "--as-group", "--as-uid", "--request-timeout", "--certificate-authority", "--client-certificate",
     "--client-key", "--cache-dir", "--tls-server-name", "-v", "--v"}
)  # fmt: skip
"""kubectl's global options that take a value as the next word (``-n kube-system exec``)."""


def kubectl_verb(argv: list[str]) -> str:
    """kubectl's (or oc's) verb: its first word that is neither an option nor a global option's
    value, so ``kubectl -n kube-system exec -- sh`` is an ``exec``."""
    skip = False
    for arg in argv[1:]:
        if skip:
            skip = False
        elif arg == "--":
            return ""
        elif arg.startswith("-"):
            skip = arg in KUBECTL_VALUE_OPTIONS
        else:
            return arg
    return ""


SHELL_OPTIONS = WrapperOptions("oO", longs("rcfile", "init-file"))
SU_OPTIONS = WrapperOptions("cgGsuw", longs("command", "session-command", "group", "supp-group",
                                               "shell", "user", "whitelist-environment"))  # fmt: skip
INFO_OPTIONS = frozenset({"-h", "--help", "-V", "--version", "--list"})
WATCH_OPTIONS = WrapperOptions("nq", longs("interval", "equexit"))
PARALLEL_OPTIONS = WrapperOptions(
    "adEIjPLlnNSsCJ",
    longs("arg-file", "delimiter", "eof", "replace", "jobs", "max-procs", "max-lines", "max-args",
           "sshlogin", "sshloginfile", "slf", "max-chars", "colsep", "profile", "tmpdir", "joblog",
           "results", "res", "basefile", "bf", "return", "transferfile", "tf", "workdir", "wd",
           "env", "timeout", "delay", "retries", "load", "memfree", "nice", "tagstring",
           "tag-string", "termseq", "halt", "halt-on-error", "header", "limit", "block",
           "block-size", "recend", "recstart", "ssh", "rpl", "semaphorename", "id",
           "semaphoretimeout", "st", "arg-sep", "arg-file-sep", "shebang-wrap"),
)  # fmt: skip
PARALLEL_INPUTS = frozenset({":::", "::::", ":::+", "::::+"})
PARALLEL_REPLACEMENT = lazy_compile(r"\{[0-9]*(?:\.|/|//|/\.|#|%|\+/|\+\.|\+\.\.)?\}")
FLOCK_OPTIONS = WrapperOptions("wE", longs("timeout", "wait", "conflict-exit-code"), operands=1)
CHRT_OPTIONS = WrapperOptions("TPD", longs("sched-runtime", "sched-period", "sched-deadline"))
AT_OPTIONS = WrapperOptions("qft")
# script(1): util-linux's -c/-E/-I/-O/-B/-T/-m/-o and BSD's -F/-t take a value.
SCRIPT_OPTIONS = WrapperOptions(
    "cEIOBTmoFt",
    longs("command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format", "output-limit"),
)
SCREEN_VALUE_LETTERS = "cehpsStT"
TMUX_OPTIONS = WrapperOptions("cfLST")
TMUX_COMMANDS: dict[str, tuple[str, str]] = {  # command: (its options taking a value, what follows)
    "new-session": ("cefFnstxy", "command"), "new": ("cefFnstxy", "command"),
    "new-window": ("ceFnt", "command"), "neww": ("ceFnt", "command"),
    "split-window": ("celtFp", "command"), "splitw": ("celtFp", "command"),
    "respawn-pane": ("cet", "command"), "respawnp": ("cet", "command"),
    "respawn-window": ("cet", "command"), "respawnw": ("cet", "command"),
    "run-shell": ("cdt", "command"), "run": ("cdt", "command"),
    "display-popup": ("bcdehsStTwxy", "command"), "popup": ("bcdehsStTwxy", "command"),
    "pipe-pane": ("t", "command"), "pipep": ("t", "command"),
    "if-shell": ("t", "condition"), "if": ("t", "condition"),
    "send-keys": ("cNt", "keys"), "send": ("cNt", "keys"),
}  # fmt: skip
TMUX_NEWLINE_KEYS = frozenset({"Enter", "C-m", "C-j", "KPEnter", "^M", "^J"})
HYPERFINE_VALUES = {"w": 1, "m": 1, "M": 1, "r": 1, "S": 1, "u": 1, "n": 1, "P": 3, "L": 2,
                     "D": 1, "N": 0, "i": 0}  # fmt: skip
HYPERFINE_SHELL = frozenset("pcs")
HYPERFINE_LONG_SHELL = longs("prepare", "conclude", "cleanup", "setup")
HYPERFINE_LONG_VALUES = {
    "warmup": 1, "min-runs": 1, "max-runs": 1, "runs": 1, "shell": 1, "time-unit": 1,
    "command-name": 1, "parameter-scan": 3, "parameter-list": 2, "parameter-step-size": 1,
    "style": 1, "export-asciidoc": 1, "export-csv": 1, "export-json": 1, "export-markdown": 1,
    "export-orgmode": 1, "output": 1, "input": 1, "sort": 1, "reference": 1,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Runner:
    """A package runner's run subcommand: ``npx PKG``, ``pnpm dlx PKG``, ``uv run CMD``."""

    options: WrapperOptions
    package: bool = False  # the first operand names a package, whose bin runs (``npx rimraf``)
    package_option: str = ""  # long option naming the package instead (``npx -p typescript tsc``)
    package_short: str = ""
    shell_string: str = ""  # short option whose value is a shell line (``npx -c 'cmd'``)
    shell_string_long: str = ""
    shell_mode: str = ""  # long flag that runs the command words as one shell line


_NPM_EXEC = _Runner(
    WrapperOptions("pcw", longs("package", "call", "registry", "cache", "prefix", "userconfig",
                                  "workspace")),
    package=True, package_option="package", package_short="p", shell_string="c",
    shell_string_long="call",
)  # fmt: skip
_PNPM_EXEC = _Runner(WrapperOptions("F", longs("filter", "package")), shell_mode="shell-mode")
_PNPM_DLX = _Runner(
    WrapperOptions("", longs("package", "allow-build")),
    package=True,
    package_option="package",
    shell_mode="shell-mode",
)
_UV_RUN = _Runner(
    WrapperOptions(
        "wp",
        longs("with", "with-editable", "with-requirements", "python", "directory", "project",
               "package", "env-file", "group", "only-group", "extra", "index", "index-url",
               "extra-index-url", "default-index", "find-links", "from", "script", "config-file",
               "cache-dir", "python-platform"),
    )
)  # fmt: skip
_UV_TOOL_RUN = _Runner(_UV_RUN.options, package=True, package_option="from")
RUNNERS: dict[str, dict[tuple[str, ...], _Runner]] = {
    "npx": {(): _NPM_EXEC},
    "pnpx": {(): _PNPM_DLX},
    "bunx": {(): _Runner(WrapperOptions("p", longs("package")), package=True,
                         package_option="package", package_short="p")},
    "uvx": {(): _UV_TOOL_RUN},
    "npm": {("exec",): _NPM_EXEC, ("x",): _NPM_EXEC},
    "pnpm": {("exec",): _PNPM_EXEC, ("dlx",): _PNPM_DLX},
    "yarn": {("exec",): _Runner(WrapperOptions()),
             ("dlx",): _Runner(WrapperOptions("p", longs("package")), package=True,
                               package_option="package", package_short="p")},
    "bun": {("x",): _Runner(WrapperOptions("p", longs("package")), package=True,
                            package_option="package", package_short="p")},
    "uv": {("run",): _UV_RUN, ("tool", "run"): _UV_TOOL_RUN},
    "pipx": {("run",): _Runner(WrapperOptions("", longs("spec", "python", "pip-args", "index-url")),
                               package=True, package_option="spec")},
    "poetry": {("run",): _Runner(WrapperOptions("CP", longs("directory", "project")))},
    "pipenv": {("run",): _Runner(WrapperOptions())},
    "pdm": {("run",): _Runner(WrapperOptions("gp", longs("project", "venv")))},
    "bundle": {("exec",): _Runner(WrapperOptions("", longs("gemfile")))},
    "conda": {("run",): _Runner(WrapperOptions("np", longs("name", "prefix", "cwd")))},
    "mamba": {("run",): _Runner(WrapperOptions("np", longs("name", "prefix", "cwd")))},
    "micromamba": {("run",): _Runner(WrapperOptions("np", longs("name", "prefix", "cwd")))},
    # Runners that hand the command a deployment's secrets (and so its production database): the
    # command they run is the one that acts (probe14: `railway run npx prisma db push ...`).
    "railway": {("run",): _Runner(WrapperOptions("se", longs("service", "environment")))},
    "doppler": {("run",): _Runner(
        WrapperOptions("pc", longs("project", "config", "token", "name-transformer", "fallback", "mount",
                                   "mount-format", "mount-template", "mount-max-reads", "scope",
                                   "api-host", "configuration")))},
    "infisical": {("run",): _Runner(
        WrapperOptions("", longs("env", "projectId", "path", "token", "domain", "tags", "watch-interval")),
        shell_string_long="command")},
    "op": {("run",): _Runner(WrapperOptions("", longs("env-file", "account", "session", "config", "cache",
                                                       "encoding", "iso-timestamps")))},
    "dotenvx": {("run",): _Runner(WrapperOptions("f", longs("env-file", "env", "env-keys-file", "convention",
                                                             "log-level")))},
    "dotenv": {(): _Runner(WrapperOptions("ecv", longs("e", "c", "v")))},
    "heroku": {("run",): _Runner(WrapperOptions("aser", longs("app", "size", "env", "remote", "type")))},
}  # fmt: skip
RUNNER_GLOBAL_OPTIONS = WrapperOptions(
    "CFPpw", longs("dir", "filter", "directory", "project", "cache-dir", "config-file", "prefix")
)
_PACKAGE_VERSION = lazy_compile(r"[@=<>!~\[;, ]")


def split_options(argv: list[str], options: WrapperOptions, start: int = 1) -> int:
    """Index of the first argv element after the wrapper's options and operands."""
    i = start
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            i += 1
            break
        if arg.startswith("--") and len(arg) > 2:
            name = arg[2:]
            i += 2 if "=" not in name and name in options.long_with_value else 1
        elif arg[:1] in "-+" and len(arg) > 1:
            if options.numeric_flags and arg[1:].isdigit():
                i += 1
                continue
            takes_next = False
            for j, letter in enumerate(arg[1:], start=1):
                if letter in options.short_with_value:
                    takes_next = j == len(arg) - 1
                    break
            i += 2 if takes_next else 1
        elif options.assignments and ASSIGNMENT.match(arg):
            i += 1
        else:
            break
    return min(i + options.operands, len(argv))


def option_at(argv: list[str], stop: int, short: str, long: str) -> tuple[str, int] | None:
    """The value of ``-X VALUE`` / ``-XVALUE`` / ``--long=VALUE`` / ``--long VALUE`` before
    ``stop``, with the index of the element holding it; an empty ``short`` or ``long`` is not
    looked for."""
    for i in range(1, min(stop, len(argv))):
        arg = argv[i]
        if arg == "--":
            break
        if arg.startswith("--"):
            if not long:
                continue
            if arg.startswith(f"--{long}="):
                return arg.partition("=")[2], i
            if arg == "--" + long:
                return (argv[i + 1], i + 1) if i + 1 < len(argv) else ("", i)
        elif short and arg.startswith("-") and short in arg[1:]:
            rest = arg[arg.index(short, 1) + 1 :]
            if rest:
                return rest, i
            return (argv[i + 1], i + 1) if i + 1 < len(argv) else ("", i)
    return None


def option_value(argv: list[str], stop: int, short: str, long: str) -> str | None:
    found = option_at(argv, stop, short, long)
    return None if found is None else found[0]


def has_flag(
    argv: list[str], stop: int, letters: str, longs: frozenset[str], options: WrapperOptions
) -> bool:
    """Whether a flag among ``letters``/``longs`` is set before ``stop`` (a short option taking a
    value ends its cluster, so ``-uS`` is ``-u S``, not ``-S``)."""
    for arg in argv[1 : min(stop, len(argv))]:
        if arg == "--":
            break
        if arg.startswith("--"):
            if arg[2:].partition("=")[0] in longs:
                return True
        elif arg.startswith("-"):
            for letter in arg[1:]:
                if letter in letters:
                    return True
                if letter in options.short_with_value:
                    break
    return False


def without(argv: list[str], found: tuple[str, int]) -> list[str]:
    """argv without the shell line an option carried (``script -c LINE`` lists as ``script -c``)."""
    value, index = found
    arg = argv[index]
    if value and arg.endswith(value) and arg != value:
        return [*argv[:index], arg[: len(arg) - len(value)].rstrip("="), *argv[index + 1 :]]
    return argv[:index] + argv[index + 1 :]


def package_bin(spec: str) -> str:
    """The program a package runner starts for a package spec: ``rimraf@5`` and ``@scope/rimraf``
    are ``rimraf``, ``black[jupyter]==24.1`` is ``black`` (the package's usual bin name)."""
    name = spec.split("/", 1)[1] if spec.startswith("@") and "/" in spec else spec
    return _PACKAGE_VERSION.split(name, maxsplit=1)[0] or spec
COMMAND_VARIABLES = frozenset({
    "PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "LESSOPEN", "LESSCLOSE", "EDITOR", "VISUAL",
    "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "SUDO_EDITOR", "SVN_EDITOR", "BROWSER", "PROMPT_COMMAND",
    "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_SSH_COMMAND", "GIT_SSH", "RSYNC_RSH",
    "GIT_EXTERNAL_DIFF",
})  # fmt: skip
DOCKER_GLOBAL_VALUES = frozenset({"-c", "--context", "-H", "--host", "-l", "--log-level", "--config",
                                   "--tlscacert", "--tlscert", "--tlskey"})  # fmt: skip
COMPOSE_GLOBAL_VALUES = frozenset({"-f", "--file", "-p", "--project-name", "--profile", "--env-file",
                                    "--project-directory", "--ansi", "--parallel"})  # fmt: skip
CRICTL_GLOBAL_VALUES = frozenset({"-r", "--runtime-endpoint", "-i", "--image-endpoint", "-t", "--timeout",
                                   "-c", "--config"})  # fmt: skip
CRICTL_EXEC_VALUES = frozenset({"--timeout", "--transport", "--name", "--label", "--namespace", "--pod",
                                 "--image", "--state"})  # fmt: skip
CTR_GLOBAL_VALUES = frozenset({"-a", "--address", "-n", "--namespace", "--timeout", "--connect-timeout"})
CTR_RUN_VALUES = frozenset({
    "--cwd", "--env", "--env-file", "--label", "--mount", "--runtime", "--runtime-config-path",
    "--snapshotter", "--snapshotter-label", "-u", "--user", "--platform", "--cgroup", "--gpus", "--cpus",
    "--cpu-shares", "--cpu-quota", "--cpu-period", "--memory-limit", "--device", "--annotation",
    "--seccomp-profile", "--apparmor-profile", "--uidmap", "--gidmap", "--with-ns", "--pid-file",
    "--fifo-dir", "--log-uri", "--hostname", "--rootfs-propagation", "--cap-add", "--cap-drop",
    "--rlimit-nofile", "--exec-id",
})  # fmt: skip
DOCKER_RUN_VALUES = frozenset({
    "-a", "--attach", "-c", "--cpu-shares", "--cidfile", "--cpus", "--cpuset-cpus", "--device", "--dns",
    "-e", "--env", "--env-file", "--entrypoint", "--expose", "--gpus", "-h", "--hostname", "--ip", "-l",
    "--label", "--label-file", "--link", "--log-driver", "--log-opt", "-m", "--memory", "--mount",
    "--name", "--network", "--net", "--network-alias", "-p", "--publish", "--platform", "--pull",
    "--restart", "--runtime", "--security-opt", "--shm-size", "--stop-signal", "--stop-timeout",
    "--tmpfs", "--ulimit", "-u", "--user", "--userns", "-v", "--volume", "--volumes-from", "-w",
    "--workdir", "--detach-keys", "--cap-add", "--cap-drop", "--group-add", "--health-cmd", "--pid",
    "--ipc", "--uts", "--cgroupns", "--add-host", "--annotation", "--index", "-T", "--service-ports",
})  # fmt: skip


def skip_options(argv: list[str], i: int, with_values: frozenset[str]) -> int:
    """Index of the first operand at or after ``i``, skipping options (``with_values`` take the
    next word unless given as ``--name=value``)."""
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        if argv[i] == "--":
            return i + 1
        i += 2 if argv[i] in with_values else 1
    return i
