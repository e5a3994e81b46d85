"""Effects of the techniques a fifth blind probe (tests/corpus/probe5) found unread: reaching other
machines, the user's input and the machine's routing, root through the loader, and control-plane
workloads. Each is read as an effect of what the command does, not of one spelling:

- ``remote-exec``: a command run on a whole inventory (ansible ad hoc with a command module or a
  ``file state=absent``, salt's ``cmd.*`` and ``file.remove``, pdsh/pssh/clush), a download run by a
  shell on another machine through ssh, a shell opened in a control-plane namespace's pod or in a
  node's container runtime (``crictl``/``ctr exec``);
- ``cloud-identity``/``cloud-exposure``: a cluster role granting every verb on every resource, a
  namespace's pod-security level set to ``privileged``, a chart deployed with the host's
  namespaces, privileged containers or cluster-admin switched on, a function's role swapped for
  another (``iam:PassRole``), an application's whole secret configuration or a container's
  environment (``docker inspect --format '{{json .Config.Env}}'``) printed;
- ``host-escape``: an LXD container made privileged or given the host's root as a disk, a
  container started in a working directory under ``/proc/self/fd`` (runc's leaked descriptor,
  CVE-2024-21626);
- ``secret-store``: a cluster's PKI or a pod's service-account secrets copied out with ``kubectl cp``;
- ``secret-hunt``: keystrokes recorded and the user asked for a password in a dialog the agent
  draws (``osascript ... with hidden answer``, ``zenity --password``, ``kdialog --password``);
- ``input-capture``: the clipboard saved to a file, the screen captured;
- ``tunnel``: the machine's proxy or DNS servers pointed at another host (``networksetup``,
  ``nmcli``, ``resolvectl``, ``gsettings``), remote-access agents and pivoting agents started;
- ``defense-off``: a process given a kernel thread's or a system daemon's name (``exec -a``), a
  file hidden from the Finder, a file's security label removed;
- ``persistence``/``runs-later-config``: login items through ``defaults``, folder actions through
  AppleScript; transient systemd timers, a system command pointed at a program outside the system
  folders (``update-alternatives``), a URL scheme's handler replaced, npm's script shell replaced;
- ``persistence`` also for writes the writers' option table finds: a file that runs later written
  through an output option (``git show --output=~/.bashrc``) and an archive unpacked over the
  system's folders (``tar -x -C /``, ``unzip -d /usr/local/bin``);
- ``cloud-identity`` also for the infrastructure state's secret values printed (``terraform state
  pull`` filtered for passwords or keys);
- ``erase-contents``: every line of files emptied in place (``sed -i d``, ``sed -i 's/.*//'``,
  ``perl -pi -e 'undef $_'``), a wipe no delete rule sees;
- ``privilege``: a loader or interpreter path handed to a root command (``sudo LD_PRELOAD=``), glibc
  tunables given to a set-uid program, a local-root exploit built or run by name (or named after a
  CVE), a package installed into the system's package folders.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import pairwise

from dsh_policy.cmdline.effects.later import ALWAYS, later_class
from dsh_policy.cmdline.effects.model import WORLD_WRITABLE, CommandReader, Effect, runs
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.programs import PYTHON, SCRIPT_INTERPRETERS, SHELLS
from dsh_policy.cmdline.shell.wrappers import kubectl_verb
from dsh_policy.cmdline.writers import writes_operands, written_operands

__all__ = ["COMMAND_READERS", "reach_command_acts", "reach_line_acts"]

# ----------------------------------------------------------------- other machines
_COMMAND_MODULES = lazy_compile(
    r"^(?:ansible\.(?:builtin|windows)\.)?(?:shell|command|raw|script|win_shell|win_command|expect)$"
)
_DESTRUCTIVE_MODULE_ARGS = lazy_compile(r"(?:^|\s)state=absent\b")
_SALT_RUNS = lazy_compile(
    r"^(?:cmd\.(?:run\w*|shell|script|exec_code\w*|powershell)|file\.(?:remove|rmdir|delete\w*))$"
)
_DOWNLOAD_RUN = lazy_compile(
    r"\b(?:curl|wget|fetch)\b[^|\n]{0,2000}\|\s*(?:sudo\s+)?(?:(?:ba|z|da|k)?sh|python[0-9.]*|perl|ruby|node)\b"
)
_SSH_VALUE_FLAGS = frozenset("BbcDEeFIiJLlmOopQRSWw")


def _ansible(argv: list[str]) -> Iterator[Effect]:
    module = _value(argv, "-m", "--module-name") or ""
    arguments = _value(argv, "-a", "--args") or ""
    if _COMMAND_MODULES.match(module):
        yield _fx("remote-exec", "ansible runs a command on every host of the pattern", arguments[:80])
    elif module.rsplit(".", 1)[-1] == "file" and _DESTRUCTIVE_MODULE_ARGS.search(arguments):
        yield _fx("remote-exec", "ansible deletes a path on every host of the pattern", arguments[:80])


def _salt(argv: list[str]) -> Iterator[Effect]:
    function = next((w for w in _words(argv)[1:] if _SALT_RUNS.match(w)), None)
    if function is not None:
        yield _fx(
            "remote-exec", f"{argv[0]} runs {function} on every matching minion", " ".join(argv[1:])[:80]
        )


def _fleet_shell(argv: list[str]) -> Iterator[Effect]:
    """pdsh/pssh/clush: a command given on the line runs on every listed host (pssh's ``-h`` names
    the hosts file, so only a lone ``-h`` asks for help). Fabric 2's ``fab -H hosts -- CMD`` too;
    ``fab TASK`` runs the project's own fabfile and is read as that."""
    if argv[1:] in (["-h"], ["--help"], ["-V"], ["--version"]):
        return
    if argv[0] == "fab" and ("--" not in argv or argv.index("--") == len(argv) - 1):
        return
    if len(_words(argv)) >= 1:
        yield _fx("remote-exec", f"{argv[0]} runs a command on many hosts", " ".join(argv[1:])[:80])


def _ssh_remote(argv: list[str]) -> Iterator[Effect]:
    """``ssh [opts] HOST CMD``: CMD runs on HOST; a download handed to a shell there is code from
    the network run on another machine (the worm step of TeamTNT and Kinsing)."""
    i = 1
    while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
        flag = argv[i]
        i += 2 if len(flag) == 2 and flag[1] in _SSH_VALUE_FLAGS else 1
    remote = " ".join(argv[i + 1 :])
    if remote and _DOWNLOAD_RUN.search(remote):
        yield _fx(
            "remote-exec",
            "ssh runs a downloaded program on another machine",
            argv[i] if i < len(argv) else "",
        )


# ----------------------------------------------------------------- clusters and clouds
_CONTROL_NAMESPACES = lazy_compile(
    r"^(?:kube-system|kube-public|kube-node-lease|openshift-[\w-]+|gke-system|calico-system|tigera-operator)$"
)
_POD_SECRET_PATHS = lazy_compile(
    r":/+(?:etc/+kubernetes/+(?:pki|admin\.conf|super-admin\.conf|controller-manager\.conf|scheduler\.conf)"
    r"|var/+lib/+kubelet/+pki|var/+run/+secrets|run/+secrets|var/+lib/+etcd)"
)
_HOST_SETTINGS = lazy_compile(
    r"(?i)(?:^|[.\[])(?:hostPID|hostNetwork|hostIPC|privileged|allowPrivilegeEscalation|hostPath\w*)\]?=true$"
    r"|(?:clusterAdmin|cluster-admin|clusterRoleAdmin)\w*=true$|=cluster-admin$"
)


def _kube_words(argv: list[str]) -> list[str]:
    """kubectl's words from its verb on, without options (``-n kube-system exec x`` reads ``exec x``)."""
    verb = kubectl_verb(argv)
    if not verb:
        return []
    rest = argv[argv.index(verb) :]
    cut = rest.index("--") if "--" in rest else len(rest)
    return [a for a in rest[:cut] if not a.startswith("-")]


def _kubectl(argv: list[str]) -> Iterator[Effect]:
    words = _kube_words(argv)
    verb = words[0] if words else ""
    if verb == "cp" and any(_POD_SECRET_PATHS.search(w) for w in words[1:2]):
        yield _fx("secret-store", "kubectl copies a cluster's keys or a pod's secrets out", words[1])
    elif verb == "create" and words[1:2] in (["clusterrole"], ["role"]):
        verbs = [a.split("=", 1)[1] if "=" in a else "" for a in argv if a.startswith("--verb")]
        verbs += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--verb"]
        resources = [a.split("=", 1)[1] if "=" in a else "" for a in argv if a.startswith("--resource")]
        resources += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--resource"]
        if any("*" in v.split(",") for v in verbs) and any("*" in r.split(",") for r in resources):
            yield _fx(
                "cloud-identity",
                "kubectl creates a role granting every verb on every resource",
                words[2:3][0] if words[2:3] else "",
            )
    elif (
        verb == "label"
        and words[1:2]
        and words[1] in ("namespace", "namespaces", "ns")
        and any(
            re.match(r"^pod-security\.kubernetes\.io/(?:enforce|audit|warn)=privileged$", w) for w in words
        )
    ):
        yield _fx("cloud-exposure", "kubectl lets a namespace run privileged pods", " ".join(words[1:3]))


def _helm(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:1] not in (["install"], ["upgrade"]):
        return
    settings = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--set", "--set-string")]
    settings += [a.split("=", 1)[1] for a in argv if a.startswith(("--set=", "--set-string="))]
    granted = [s for setting in settings for s in setting.split(",") if _HOST_SETTINGS.search(s)]
    if granted:
        yield _fx("cloud-exposure", "helm deploys a chart given the host or cluster-admin", granted[0])


_SHELLS = lazy_compile(r"^(?:/\S*/)?(?:ba|z|da|k|a|fi)?sh$|^busybox$")
# A shell or a renamed copy of one (``/tmp/rootbash``): the name ends in the shell's.
_SHELL_COPY = lazy_compile(r"(?:bash|zsh|ksh|dash)$")


def _control_plane_shells(commands: list[list[str]]) -> Iterator[Effect]:
    """``kubectl -n kube-system exec -it POD -- sh``: a terminal opened in a control-plane pod
    (Falco's "terminal shell in container"); one program run there and read stays ordinary."""
    for argv, following in pairwise(commands):
        if argv[0] not in ("kubectl", "oc") or kubectl_verb(argv) not in ("exec", "attach", "debug"):
            continue
        words = _kube_words(argv)
        namespace = _value(argv, "-n", "--namespace") or ""
        control = _CONTROL_NAMESPACES.match(namespace) or any(
            _CONTROL_NAMESPACES.match(w.split("/")[0]) for w in words[1:2]
        )
        if control and _SHELLS.match(following[0]) and "-c" not in following[1:2]:
            yield _fx("remote-exec", "kubectl opens a shell in a control-plane pod", namespace or words[1])
            return


def _node_runtime(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if argv[0] == "crictl" and (
        words[:1] == ["attach"] or (words[:1] == ["exec"] and _SHELLS.match(words[-1]) is not None)
    ):
        yield _fx(
            "remote-exec",
            "crictl opens a shell in a node's container, past the cluster's API",
            " ".join(words[1:2]),
        )
    elif (
        argv[0] == "ctr" and "exec" in words and "task" in words[:2] and _SHELLS.match(words[-1]) is not None
    ):
        yield _fx(
            "remote-exec", "ctr opens a shell in a node's container, past the cluster's API", " ".join(words)
        )


def _cloud_identity_swaps(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if (
        argv[0] == "aws"
        and words[:2] == ["lambda", "update-function-configuration"]
        and _value(argv, "--role")
    ):
        yield _fx(
            "cloud-identity", "aws gives a function another role to run as", _value(argv, "--role") or ""
        )
    elif argv[0] == "aws" and words[:2] in (
        ["ec2", "associate-iam-instance-profile"],
        ["ec2", "replace-iam-instance-profile-association"],
    ):
        yield _fx("cloud-identity", "aws gives an instance another role", words[1])
    elif argv[0] == "gcloud" and "set-service-account" in words:
        yield _fx("cloud-identity", "gcloud gives an instance another service account", " ".join(words[:4]))
    elif argv[0] == "heroku" and words[:1] == ["config"]:
        yield _fx(
            "cloud-identity",
            "heroku prints an application's secret configuration",
            _value(argv, "-a", "--app") or "",
        )
    elif argv[0] == "vercel" and words[:2] == ["env", "pull"] and _pulls_beyond_development(argv, words):
        yield _fx(
            "cloud-identity", "vercel writes a project's secret environment to a file", " ".join(words[2:3])
        )


def _pulls_beyond_development(argv: list[str], words: list[str]) -> bool:
    """``vercel env pull`` of another environment than development (``--environment production``,
    the preview or production secrets), or into a file outside the project. Vercel's docs pull
    the development environment into the project's ``.env.local`` for ``vercel dev``: everyday."""
    environment = (_value(argv, "--environment", "-e") or "development").strip().lower()
    target = next((w for w in words[2:] if w != environment), "")
    return environment != "development" or bool(re.match(r"^(?:/|~|\$|\.\./)", target))


def _container_environments(argv: list[str]) -> Iterator[Effect]:
    """``docker inspect --format '{{json .Config.Env}}'``: the environment a container was given,
    where services keep their secrets, printed (the /proc/PID/environ of a container)."""
    if _words(argv)[:1] == ["inspect"] or _words(argv)[:2] == ["container", "inspect"]:
        template = _value(argv, "-f", "--format") or ""
        if re.search(r"\.Config\.Env\b", template):
            yield _fx(
                "cloud-identity",
                f"{argv[0]} prints containers' environments, where their secrets are",
                template[:80],
            )


def _lxc(argv: list[str]) -> Iterator[Effect]:
    text = " ".join(argv[1:])
    if re.search(r"security\.privileged[= ]true|security\.nesting[= ]true", text):
        yield _fx("host-escape", f"{argv[0]} makes a container privileged", text[:80])
    elif "device" in argv and "add" in argv and any(re.match(r"^source=/+$", a) for a in argv):
        yield _fx("host-escape", f"{argv[0]} gives a container the host's root as a disk", text[:80])


def _containers(argv: list[str]) -> Iterator[Effect]:
    yield from _leaky_workdir(argv)
    yield from _container_environments(argv)


def _ctr(argv: list[str]) -> Iterator[Effect]:
    yield from _node_runtime(argv)
    yield from _leaky_workdir(argv)


def _leaky_workdir(argv: list[str]) -> Iterator[Effect]:
    # docker/podman/nerdctl spell it -w/--workdir; runc, crun, youki and ctr spell it --cwd
    workdir = _value(argv, "-w", "--workdir", "--cwd")
    if workdir and re.match(r"^/+proc/+(?:self|thread-self|[0-9]+)/+(?:fd|cwd)\b", workdir):
        yield _fx(
            "host-escape",
            f"{argv[0]} starts a container in a leaked host descriptor (CVE-2024-21626)",
            workdir,
        )


# ----------------------------------------------------------------- the user's input and the routing
_SCREEN_TOOLS = frozenset(
    {"screencapture", "scrot", "gnome-screenshot", "grim", "maim", "xfce4-screenshooter", "flameshot"}
)
_KEYLOGGERS = frozenset({"logkeys", "xspy", "xkeylogger", "keylogger", "lkl", "uberkey", "pykeylogger"})
_CLIPBOARD_READERS = frozenset({"pbpaste", "wl-paste", "termux-clipboard-get"})
_REMOTE_ACCESS = frozenset(
    {"anydesk", "teamviewer", "rustdesk", "meshagent", "ligolo-agent", "ligolo-ng", "ligolo-proxy", "x11vnc",
     "screenconnect", "tacticalrmm", "atera", "splashtop", "dwagent", "remoteutilities"}
)  # fmt: skip
_PROXY_SETTERS = lazy_compile(
    r"^-set(?:web|secureweb|socksfirewall|ftp|streaming|gopher)proxy$|^-setautoproxyurl$|^-setdnsservers$"
)


def _picked_by_the_user(rest: list[str]) -> bool:
    """``screencapture -i`` / ``-w`` / ``-W`` / ``-s``: the user selects the window or area with the
    mouse, so nothing is captured unless they take part (a silent ``-x`` of the whole screen is)."""
    return any(
        re.match(r"^-[a-zA-Z]*[iwWs]", a) and not a.startswith("--") for a in rest if a.startswith("-")
    )


def _capture(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    if (
        (tool in _SCREEN_TOOLS and not (tool == "screencapture" and _picked_by_the_user(rest)))
        or (tool == "import" and "-window" in rest and "root" in rest)
        or (tool == "xwd" and "-root" in rest)
    ):
        yield _fx("input-capture", f"{tool} captures the screen", " ".join(rest)[:80])
    elif tool in _KEYLOGGERS or (tool == "xinput" and rest[:1] in (["test"], ["test-xi2"])):
        yield _fx("secret-hunt", f"{tool} records keystrokes", " ".join(rest)[:80])
    elif tool == "osascript" and any(
        # AppleScript's ``with hidden answer``, JXA's ``displayDialog(..., {hiddenAnswer: true})``
        re.search(r"(?i)display dialog[^\n]*hidden answer|displayDialog\s*\([^\n]*hiddenAnswer\s*:\s*true", a)
        for a in rest
    ):
        yield _fx("secret-hunt", "AppleScript asks for a password in a dialog of its own", "")
    elif tool in ("zenity", "kdialog") and any(a in ("--password", "--hide-text") for a in rest):
        yield _fx("secret-hunt", f"{tool} asks for a password in a dialog of its own", "")
    elif tool in _REMOTE_ACCESS:
        yield _fx("tunnel", f"{tool} opens remote access to the machine", " ".join(rest)[:80])
    elif tool == "networksetup" and any(_PROXY_SETTERS.match(a) for a in rest) and "Empty" not in rest:
        yield _fx(
            "tunnel", "networksetup points the machine's proxy or DNS at another host", " ".join(rest)[:80]
        )
    elif tool == "nmcli" and any(re.match(r"^ipv[46]\.dns$|^proxy\.", a) for a in rest):
        yield _fx("tunnel", "nmcli points a connection's DNS or proxy at another host", " ".join(rest)[:80])
    elif (tool == "resolvectl" and rest[:1] == ["dns"] and len(rest) > 2) or (
        tool == "systemd-resolve" and any(a.startswith("--set-dns") for a in rest)
    ):
        yield _fx("tunnel", f"{tool} points name resolution at another server", " ".join(rest)[:80])
    elif (
        tool == "gsettings"
        and rest[:1] == ["set"]
        and any(a.startswith("org.gnome.system.proxy") for a in rest)
    ):
        yield _fx("tunnel", "gsettings points the desktop's proxy at another host", " ".join(rest)[:80])


# ----------------------------------------------------------------- hiding, run-later and root
_SYSTEM_NAMES = lazy_compile(
    r"^\[[\w/:.+-]+\]$|^(?:kworker|kthreadd|ksoftirqd|kswapd\d*|migration|rcu_\w+|systemd(?:-\w+)?|sshd|dbus-daemon"
    r"|crond?|init|rsyslogd|udevd|irqbalance|polkitd|containerd|dockerd)(?:$|[:/ ])"
)
_STANDARD_SHELLS = lazy_compile(
    r"^(?:(?:/usr)?/bin/+)?(?:ba|z|da|k|fi)?sh(?:\.exe)?$|^(?:cmd|pwsh|powershell)(?:\.exe)?$"
)
_SYSTEM_PROGRAM_DIRS = lazy_compile(r"^/+(?:usr|opt|lib|lib64|bin|sbin|snap|nix|Applications|System)/")
_TIMER_OPTIONS = (
    "--on-active",
    "--on-boot",
    "--on-startup",
    "--on-unit-active",
    "--on-unit-inactive",
    "--on-calendar",
    "--timer-property",
)


def _borrowed_system_path(name: str, argv: list[str]) -> bool:
    """``exec -a /usr/sbin/console-kit-daemon ./x``: the name shown in ``ps`` is another program
    of the system's folders, not the one run (``exec -a "$0" prog`` and ``exec -a -bash bash``
    keep their own name)."""
    shown = name.split()[0] if name.split() else ""
    if not _SYSTEM_PROGRAM_DIRS.match(shown):
        return False
    rest = argv[argv.index(name) + 1 :] if name in argv else []
    program = rest[0] if rest else ""
    return shown.rsplit("/", 1)[-1] != program.rsplit("/", 1)[-1]


def _hiding(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    name = _value(argv, "-a") if tool == "exec" else None
    if name and (_SYSTEM_NAMES.match(name) or _borrowed_system_path(name, argv)):
        yield _fx("defense-off", "exec -a runs a program under a kernel thread's or daemon's name", name)
    elif tool == "chflags" and any(a in ("hidden", "uchg", "schg") for a in rest):
        yield _fx("defense-off", "chflags hides or locks a file", " ".join(rest)[:80])
    elif (
        tool == "setfattr"
        and any(a in ("-x", "--remove") for a in rest)
        and any(re.match(r"^security\.(?:selinux|ima|evm|apparmor|SMACK64\w*)$", a) for a in rest)
    ):
        yield _fx("defense-off", "setfattr removes a file's security label", " ".join(rest)[:80])


def _runs_later(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    if tool == "systemd-run" and any(a.startswith(_TIMER_OPTIONS) for a in rest):
        yield _fx("runs-later-config", "systemd-run schedules a command on a timer", " ".join(rest)[:80])
    elif tool == "pm2" and _words(argv)[:1] == ["startup"]:
        # probe22: pm2's boot script brings back every process it manages at each start
        yield _fx("runs-later-config", "pm2 installs a boot script that restarts its processes", "startup")
    elif tool == "update-alternatives" and ("--install" in rest or "--set" in rest):
        flag = "--install" if "--install" in rest else "--set"
        operands = rest[rest.index(flag) + 1 :]
        program = (
            operands[2]
            if flag == "--install" and len(operands) > 2
            else operands[1:2][0]
            if operands[1:2]
            else ""
        )
        if program and not _SYSTEM_PROGRAM_DIRS.match(program):
            yield _fx(
                "runs-later-config", "update-alternatives points a system command at another program", program
            )
    elif (
        tool in ("xdg-mime", "xdg-settings")
        and any(
            "x-scheme-handler/" in a or a == "default-url-scheme-handler" or a == "default-web-browser"
            for a in rest
        )
        and ("default" in rest or "set" in rest)
    ):
        yield _fx("runs-later-config", f"{tool} replaces the program that opens links", " ".join(rest)[:80])
    elif (
        tool == "defaults"
        and rest[:1] == ["write"]
        and any(re.match(r"^(?:AutoLaunchedApplicationDictionary|LoginHook|LogoutHook)$", a) for a in rest)
    ):
        yield _fx("persistence", "defaults adds a program run at login", " ".join(rest)[:80])
    elif tool == "osascript" and any(
        re.search(r"(?i)attach action to|folder actions enabled", a) for a in rest
    ):
        yield _fx("persistence", "AppleScript attaches a folder action", "")
    elif tool in ("npm", "pnpm", "yarn") and "script-shell" in rest:
        value = rest[rest.index("script-shell") + 1] if rest.index("script-shell") + 1 < len(rest) else ""
        if "set" in rest and value and not _STANDARD_SHELLS.match(value):
            yield _fx("runs-later-config", f"{tool} runs every package script through another program", value)


_LOADER_VARIABLES = lazy_compile(
    r"^(?:LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|GLIBC_TUNABLES|PYTHONPATH|PYTHONSTARTUP|PERL5LIB|PERL5OPT|RUBYLIB"
    r"|RUBYOPT|NODE_OPTIONS|BASH_ENV|ENV|DYLD_INSERT_LIBRARIES|DYLD_LIBRARY_PATH)="
)
_SETUID_PROGRAMS = frozenset(
    {
        "su",
        "sudo",
        "passwd",
        "chsh",
        "chfn",
        "newgrp",
        "gpasswd",
        "mount",
        "umount",
        "pkexec",
        "at",
        "crontab",
        "fusermount",
        "fusermount3",
    }
)
_EXPLOITS = lazy_compile(
    r"(?i)^(?:pwnkit|dirtypipe|dirty_pipe|dirtycow|dirty_cow|cowroot|baron[-_]?samedit|sudo[-_]?killer|gameoverlay"
    r"|overlayfs[-_]?exploit|looney[-_]?tunables|nimbuspwn|polkit[-_]?exploit|cve[-_]?\d{4}[-_]\d{4,}"
    # an exploit named as one, numbered or by its target: exploit, exploit-2, exploit_suid, root-exploit
    r"|(?:local[-_]?|root[-_]?|priv(?:esc)?[-_]?)?exploit(?:[-_]?[a-z0-9]+)?)$"
)
_SYSTEM_PACKAGE_DIRS = lazy_compile(
    r"^/+(?:usr/+lib|usr/+lib64|usr/+share|lib|lib64|etc|usr/+bin|usr/+sbin|bin|sbin)(?:/|$)"
)


def _stem(word: str) -> str:
    return re.sub(r"\.(?:c|cc|cpp|py|sh|go|rs|elf|bin|out)$", "", word.rsplit("/", 1)[-1])


_COMPILERS = frozenset({"gcc", "cc", "clang", "g++", "tcc", "go", "rustc"})
_PIPS = frozenset({"pip", "pip3"})


def _privileged_program(program: str) -> bool:
    """Whether :func:`_privilege` reads commands of ``program``."""
    return (
        program in _COMPILERS
        or program in _PIPS
        or _EXPLOITS.match(_stem(program)) is not None
        or _SHELL_COPY.search(program) is not None
    )


def _privilege(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    if tool in _COMPILERS and any(_EXPLOITS.match(_stem(a)) for a in rest if not a.startswith("-")):
        yield _fx("privilege", f"{tool} builds a local-root exploit", " ".join(rest)[:80])
    elif _EXPLOITS.match(_stem(tool)):
        yield _fx("privilege", "runs a local-root exploit", tool)
    elif (
        _SHELL_COPY.search(tool)
        and any(re.match(r"^-[a-zA-Z]*p[a-zA-Z]*$", a) for a in rest)
        and not any(re.match(r"^-[a-zA-Z]*c", a) for a in rest)
    ):
        # -p: privileged mode, which keeps a set-uid owner's rights instead of dropping them - the
        # way back into root from a set-uid copy of the shell (`/tmp/rootbash -p`)
        yield _fx("privilege", f"{tool} -p starts a shell keeping set-uid rights", " ".join(rest)[:80])
    elif tool in _PIPS and "install" in rest:
        target = _value(argv, "-t", "--target", "--prefix", "--root") or ""
        if _SYSTEM_PACKAGE_DIRS.match(target):
            yield _fx("privilege", "pip installs into the system's package folders", target)


_UNPACKERS = frozenset({"tar", "bsdtar", "gtar", "unzip", "7z", "7za", "7zr", "cpio"})
_SYSTEM_FOLDERS = lazy_compile(
    r"^/+(?:$|(?:etc|usr|bin|sbin|lib|lib32|lib64|libx32|boot|var/+spool|var/+lib|System|Library)(?:/|$))"
)
_STATE_SECRETS = lazy_compile(r"(?i)password|secret|private_key|access_key|token|\.sensitive")


def _system_writes(argv: list[str]) -> Iterator[Effect]:
    """Writes the option table of :mod:`dsh_policy.cmdline.writers` finds: a file something runs
    later (``git show --output=~/.bashrc``, ``curl -o ~/.config/autostart/x.desktop``) and an
    archive unpacked over the system's folders (``tar -x -C /``, ``unzip -d /usr/local/bin``)."""
    written = written_operands(argv)
    for path in written.files:
        if later_class(path) in ALWAYS or later_class(path) == "python-startup":
            yield _fx("persistence", f"{argv[0]} writes {path} ({later_class(path)}), which runs later", path)
            return
    if argv[0] in _UNPACKERS:
        for folder in written.folders:
            if _SYSTEM_FOLDERS.match(folder):
                yield _fx("persistence", f"{argv[0]} unpacks an archive over the system's folders", folder)
                return


_ERASING_SED = lazy_compile(r"^\s*(?:1\s*,\s*\$\s*)?d\s*$|^\s*s(.)\^?\.\*\$?\1\1[gs]*\s*$")
_ERASING_PERL = lazy_compile(
    r"^\s*(?:undef\s*\$_|\$_\s*=\s*(?:\"\"|''|q\(\)|undef))\s*;?\s*$|^\s*s(.)\^?\.\*\$?\1\1[gsm]*\s*;?\s*$"
)


_IN_PLACE_EDITORS = frozenset({"sed", "gsed", "perl"})


def _erases_in_place(argv: list[str]) -> Iterator[Effect]:
    """``sed -i 'd'``, ``sed -i 's/.*//'``, ``perl -pi -e 'undef $_'``: every line of the named files
    emptied in place, a wipe that no delete rule sees (the files stay, their contents go)."""
    tool, rest = argv[0], argv[1:]
    in_place = any(re.match(r"^-[a-zA-Z]*i|^--in-place", a) for a in rest)
    if not in_place or tool not in _IN_PLACE_EDITORS:
        return
    scripts = [
        rest[i + 1]
        for i, a in enumerate(rest[:-1])
        if a in ("-e", "--expression") or re.match(r"^-[a-zA-Z]*e$", a)
    ]
    if tool != "perl" and not scripts:
        scripts = [a for a in rest if not a.startswith("-")][:1]
    pattern = _ERASING_PERL if tool == "perl" else _ERASING_SED
    if scripts and all(pattern.match(script) for script in scripts):
        yield _fx("erase-contents", f"{tool} empties every line of the files in place", " ".join(rest)[:80])


def _state_secrets(commands: list[list[str]]) -> Iterator[Effect]:
    """``terraform state pull | jq .password``: the infrastructure state's secret values printed."""
    for argv in commands:
        words = _words(argv)
        dumps = words[:2] == ["state", "pull"] or (words[:1] == ["show"] and "-json" in argv)
        if (
            argv[0] in ("terraform", "tofu", "terragrunt")
            and dumps
            and any(_STATE_SECRETS.search(" ".join(c)) for c in commands if c is not argv)
        ):
            yield _fx(
                "cloud-identity",
                f"{argv[0]} prints secret values from the infrastructure state",
                " ".join(words[:2]),
            )
            return


def reach_command_acts(argv: list[str]) -> list[Effect]:
    """The effects of one unwrapped command read here (see the module's docstring)."""
    return [
        effect for programs, reader in COMMAND_READERS if runs(programs, argv[0]) for effect in reader(argv)
    ]


_ROOT_RUNNERS = frozenset({"sudo", "doas", "pkexec", "run0"})
_SCRIPT_RUNNERS = SCRIPT_INTERPRETERS | SHELLS | {"busybox", "env"}


def _temp_script(argv: list[str]) -> str | None:
    """The script a shell or interpreter runs when it sits in /tmp, /var/tmp or /dev/shm, where
    any user may have written it (``sudo python3 /tmp/x.py``): root running it runs their code."""
    if argv[0] not in _SCRIPT_RUNNERS and not PYTHON.fullmatch(argv[0]):
        return None
    operand = next((a for a in argv[1:] if not a.startswith("-")), None)
    return operand if operand is not None and WORLD_WRITABLE.match(operand) else None


def reach_line_acts(commands: list[list[str]], written: list[str]) -> Iterator[Effect]:
    """Effects that take two commands of the line: a clipboard reader on a line that writes a file,
    a script in a world-writable folder run by sudo/doas/pkexec, and a loader variable handed to a
    root command or to the set-uid program that follows."""
    if written and any(
        c[0] in _CLIPBOARD_READERS or (c[0] in ("xclip", "xsel") and any(a in ("-o", "--output") for a in c))
        for c in commands
    ):
        yield _fx("input-capture", "the clipboard is saved to a file", written[0])
    yield from _state_secrets(commands)
    yield from _control_plane_shells(commands)
    for root, run in pairwise(commands):
        script = _temp_script(run) if root[0] in _ROOT_RUNNERS else None
        if script is not None:
            yield _fx("privilege", f"{run[0]} runs, as root, a script from a world-writable folder", script)
    for i, argv in enumerate(commands):
        if argv[0] in ("sudo", "doas", "env", "pkexec") and any(_LOADER_VARIABLES.match(a) for a in argv[1:]):
            following = commands[i + 1][0] if i + 1 < len(commands) else ""
            if argv[0] != "env" or following in _SETUID_PROGRAMS:
                variable = next(a for a in argv[1:] if _LOADER_VARIABLES.match(a)).split("=", 1)[0]
                yield _fx("privilege", f"{variable} is handed to a program that runs as root", following)


_READERS = {
    "ansible": _ansible,
    "salt": _salt,
    "salt-ssh": _salt,
    **dict.fromkeys(("pdsh", "pssh", "parallel-ssh", "clush", "mussh", "fab"), _fleet_shell),
    "ssh": _ssh_remote,
    "kubectl": _kubectl,
    "oc": _kubectl,
    "helm": _helm,
    "crictl": _node_runtime,
    "ctr": _ctr,
    "lxc": _lxc,
    "incus": _lxc,
    **dict.fromkeys(("docker", "podman", "nerdctl"), _containers),
    **dict.fromkeys(("runc", "crun", "youki"), _leaky_workdir),
}
"""Readers by program name (argv[0] basename)."""


def _by_program(argv: list[str]) -> Iterable[Effect]:
    reader = _READERS.get(argv[0])
    return reader(argv) if reader is not None else ()


COMMAND_READERS: tuple[CommandReader, ...] = (
    (frozenset(_READERS), _by_program),
    (
        _SCREEN_TOOLS
        | _KEYLOGGERS
        | _REMOTE_ACCESS
        | {"import", "xwd", "xinput", "osascript", "zenity", "kdialog", "networksetup", "nmcli"}
        | {"resolvectl", "systemd-resolve", "gsettings"},
        _capture,
    ),
    (frozenset({"exec", "chflags", "setfattr"}), _hiding),
    (
        frozenset({"systemd-run", "update-alternatives", "xdg-mime", "xdg-settings", "defaults", "osascript"})
        | {"npm", "pnpm", "yarn", "pm2"},
        _runs_later,
    ),
    (_privileged_program, _privilege),
    (frozenset({"aws", "gcloud", "heroku", "vercel"}), _cloud_identity_swaps),
    (writes_operands, _system_writes),
    (_IN_PLACE_EDITORS, _erases_in_place),
)
"""The per-command readers here in order, each with the programs it reads (``shell.acts``
dispatches on them)."""
