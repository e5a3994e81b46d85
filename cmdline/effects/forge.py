"""What a command does to the software factory's control planes: the code forge (GitHub, GitLab)
and the package registries, read as effects rather than spellings.

A stolen or borrowed token turns the forge's API into the attacker's console: Gato-X and Nord
Stream register runners and push workflows, the 2025 worms (Shai-Hulud, GhostAction) made
repositories public, added collaborators, deleted runs and published packages with the victim's
token. The same effects come through ``gh api``, ``gh``'s own verbs, ``glab`` and the registries'
CLIs, so this reader maps each to the kinds the rules already judge:

- ``cloud-identity``: who may act on the repository or organization and what its automation may
  do (collaborators, deploy keys, webhooks, Actions permissions, secrets and variables, runners
  and their registration tokens, environments and their reviewers, rulesets and protections,
  security scanning, a workflow switched off), and registry tokens and owners;
- ``cloud-exposure``: a repository made public;
- ``erase-contents``: forge objects deleted (any DELETE through the API, runs, caches, issues,
  artifacts, packages) and published things overwritten (a release asset replaced, a tag
  force-pushed, a package unpublished);
- ``publish``: a package or editor extension published to a registry (npm, PyPI, crates.io,
  RubyGems, NuGet, Maven, Hex, pub, Open VSX, the VS Code Marketplace, JSR), a file written into a
  repository through the contents API. Dry runs and registries on this machine publish nothing.

Reads (``GET``, ``gh run list``, ``gh secret list``) and the everyday mutations of issues, pull
requests and workflow runs (comments, labels, reruns, dispatches) are not effects here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["ADMIN_ENDPOINT", "COMMAND_READERS", "forge_acts", "runner_guard_off"]

ADMIN_ENDPOINT = (
    r"(?:repos/[^/?#\s]+/[^/?#\s]+|orgs/[^/?#\s]+|enterprises/[^/?#\s]+|projects/[^/?#\s]+|groups/[^/?#\s]+)/"
    r"(?:collaborators|invitations|keys|deploy_keys|hooks|members|memberships|outside_collaborators|teams"
    r"|actions/(?:permissions|secrets|variables|runners|runner-groups|oidc|workflows/[^/?#\s]+/(?:disable|enable))"
    r"|environments|branches/[^/?#\s]+/protection|protected_branches|protected_tags|rulesets"
    r"|code-scanning|secret-scanning|dependabot/secrets|vulnerability-alerts|automated-security-fixes"
    r"|private-vulnerability-reporting|security-managers|codespaces/secrets|installations|variables"
    r"|runners|access_tokens|deploy_tokens|personal_access_tokens|credentials|git/refs|transfer)"
)
"""The forge API paths that change who may act or what automation may do (GitHub's REST paths and
GitLab's v4 equivalents), relative to the API root."""

_ADMIN = lazy_compile(r"(?i)^/*(?:api/v[34]/+)?" + ADMIN_ENDPOINT)
_REPOSITORY = lazy_compile(
    r"(?i)^/*(?:api/v[34]/+)?(?:repos/[^/?#\s]+/[^/?#\s]+|projects/[^/?#\s]+)/*(?:\?.*)?$"
)
_CONTENTS = lazy_compile(r"(?i)^/*repos/[^/?#\s]+/[^/?#\s]+/contents/")
_EXPOSING_FIELD = lazy_compile(r"(?i)^(?:private=false|visibility=(?:public|internal))$")
_SECURITY_FIELD = lazy_compile(r"(?i)^security_and_analysis\[[^\]]+\](?:\[status\])?=disabled$")
_FIELD_FLAGS = ("-f", "-F", "--field", "--raw-field", "--input")


def _api_method(argv: list[str]) -> str:
    """The HTTP method a ``gh api``/``glab api`` call sends: -X/--method, else POST when it is given
    fields or an input body (the CLIs' own default), else GET."""
    method = _value(argv, "-X", "--method")
    if method:
        return method.upper()
    return "POST" if any(a in _FIELD_FLAGS or a.startswith("--field=") for a in argv) else "GET"


def _api_endpoint(argv: list[str]) -> str:
    words = _words(argv)
    if words[:1] != ["api"] or len(words) < 2:
        return ""
    taken = {
        argv[i + 1]
        for i, a in enumerate(argv[:-1])
        if a in ("-X", "--method", "-H", "--header", "-q", "--jq")
    }
    taken |= {argv[i + 1] for i, a in enumerate(argv[:-1]) if a in _FIELD_FLAGS}
    return next((w for w in words[1:] if w not in taken), "")


def _fields(argv: list[str]) -> list[str]:
    found = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in _FIELD_FLAGS]
    return found + [a.split("=", 1)[1] for a in argv if a.startswith("--field=")]


def _forge_api(argv: list[str]) -> Iterator[Effect]:
    endpoint = _api_endpoint(argv)
    method = _api_method(argv)
    if not endpoint or method in ("GET", "HEAD", "OPTIONS"):
        return
    if method == "DELETE":
        yield _fx("erase-contents", f"{argv[0]} api deletes {endpoint}", endpoint)
    elif _REPOSITORY.match(endpoint) and any(_EXPOSING_FIELD.match(f) for f in _fields(argv)):
        yield _fx("cloud-exposure", f"{argv[0]} api makes a repository public", endpoint)
    elif _REPOSITORY.match(endpoint) and any(_SECURITY_FIELD.match(f) for f in _fields(argv)):
        yield _fx("cloud-identity", f"{argv[0]} api switches a repository's security scanning off", endpoint)
    elif _CONTENTS.match(endpoint) and method == "PUT":
        yield _fx("publish", f"{argv[0]} api writes a file into a repository", endpoint)
    elif _ADMIN.match(endpoint):
        yield _fx("cloud-identity", f"{argv[0]} api changes {endpoint.split('?')[0]}", endpoint)


_DELETING_VERBS = {
    ("run", "delete"),
    ("cache", "delete"),
    ("issue", "delete"),
    ("release", "delete-asset"),
    ("variable", "delete"),
    ("secret", "delete"),
    ("label", "delete"),
}
_ADMIN_VERBS = {
    ("secret", "set"),
    ("variable", "set"),
    ("workflow", "disable"),
    ("ruleset", "create"),
    ("ssh-key", "add"),
    ("gpg-key", "add"),
    ("deploy-key", "add"),  # glab's spelling of gh's `repo deploy-key add`
    ("token", "create"),  # glab: a personal, project or group access token minted
    ("token", "rotate"),
}
_WIDE_SCOPES = lazy_compile(
    r"(?i)(?:^|,)\s*(?:delete_repo|admin:[\w:]+|site_admin|delete:packages)\s*(?:,|$)"
)


def _forge_cli(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:1] == ["api"]:
        yield from _forge_api(argv)
        return
    pair = tuple(words[:2])
    if pair in _DELETING_VERBS:
        yield _fx("erase-contents", f"{argv[0]} {' '.join(pair)} removes forge data", " ".join(words[2:4]))
    elif pair in _ADMIN_VERBS or (pair == ("repo", "deploy-key") and "add" in words):
        yield _fx(
            "cloud-identity",
            f"{argv[0]} {' '.join(pair)} changes the repository's trust",
            " ".join(words[2:4]),
        )
    elif pair == ("auth", "refresh") and _WIDE_SCOPES.search(_value(argv, "-s", "--scopes") or ""):
        yield _fx(
            "cloud-identity",
            f"{argv[0]} auth refresh widens its token to administer or delete",
            _value(argv, "-s", "--scopes") or "",
        )
    elif pair == ("pr", "merge") and "--admin" in argv:
        yield _fx(
            "checks-off",
            f"{argv[0]} pr merge --admin merges past the branch's required reviews and checks",
            " ".join(words[2:3]),
        )
    elif pair == ("repo", "archive"):
        yield _fx(
            "outage",
            f"{argv[0]} repo archive makes a repository read-only for everyone",
            " ".join(words[2:3]),
        )
    elif argv[0] == "gh" and pair == ("release", "edit") and "--latest" in argv:
        yield _fx(
            "publish", "gh release edit --latest changes the release installers get", " ".join(words[2:3])
        )
    elif pair == ("release", "upload") and "--clobber" in argv:
        yield _fx(
            "erase-contents",
            f"{argv[0]} release upload --clobber replaces a published asset",
            " ".join(words[2:3]),
        )
    elif argv[0] == "gh" and pair == ("repo", "fork") and _value(argv, "--org"):
        # a copy of the repository, history and all, made under another organisation (probe24);
        # a fork into the user's own account (no --org) is the everyday contribution flow
        yield _fx(
            "publish",
            "gh repo fork --org copies the repository into another organisation",
            _value(argv, "--org") or "",
        )


_PUBLISHERS: dict[str, tuple[str, ...]] = {
    "npm": ("publish",),
    "pnpm": ("publish",),
    "yarn": ("publish", "npm publish"),
    "bun": ("publish",),
    "gem": ("push",),
    "cargo": ("publish",),
    "poetry": ("publish",),
    "uv": ("publish",),
    "twine": ("upload",),
    "flit": ("publish",),
    "hatch": ("publish",),
    "pdm": ("publish",),
    "dotnet": ("nuget push",),
    "nuget": ("push",),
    "mvn": ("deploy",),
    "lein": ("deploy",),
    "mix": ("hex.publish",),
    "dart": ("pub publish",),
    "swift": ("package-registry publish",),
    "vsce": ("publish",),
    "ovsx": ("publish",),
    "jsr": ("publish",),
    "deno": ("publish",),
}
_DRY = lazy_compile(r"^--(?:dry-run|dryrun|dry)$|^-n$")
_LOOPBACK = lazy_compile(
    r"(?i)^(?:--[\w-]+=)?[a-z][a-z0-9+.-]*://(?:[^/@]*@)?(?:localhost|127\.[0-9.]+|\[::1\])(?::\d+)?(?:/|$)"
)
"""A registry on this machine (a test Verdaccio or devpi): publishing there leaves nothing."""


_TEST_INDEX = lazy_compile(r"(?i)^(?:testpypi|https?://test\.pypi\.org(?:/.*)?)$")


def _test_index(argv: list[str]) -> bool:
    """PyPI's test index, the sandbox the packaging tutorial publishes to (``--repository
    testpypi``, ``--publish-url https://test.pypi.org/legacy/``): nobody installs from it by
    default."""
    named = _value(argv, "-r", "--repository", "--repository-url", "--publish-url", "--index-url") or ""
    return bool(named) and bool(_TEST_INDEX.match(named))


def _on_this_machine(argv: list[str]) -> bool:
    """Whether the command names a registry on this machine, attached (``--registry=URL``), as a
    bare URL or as the value of a registry option."""
    if any(_LOOPBACK.match(a) for a in argv[1:]):
        return True
    named = _value(argv, "--registry", "--repository-url", "--index-url", "--publish-url", "--source") or ""
    return bool(named) and bool(_LOOPBACK.match(named if "://" in named else "http://" + named))


def _registry(argv: list[str]) -> Iterator[Effect]:
    """Publishing, unpublishing and who may publish, for every package manager and editor
    extension registry (the worms of 2025 spread by publishing what they stole the tokens for:
    Shai-Hulud to npm, GlassWorm to Open VSX). A dry run, or a registry on this machine, is not."""
    words = _words(argv)
    if (
        any(_DRY.match(a) for a in argv[1:])
        or "--help" in argv
        or "-h" in argv
        or _on_this_machine(argv)
        or _test_index(argv)
    ):
        return
    said = " ".join(words[:2])
    for verb in _PUBLISHERS.get(argv[0], ()):
        if said == verb or words[:1] == [verb]:
            yield _fx("publish", f"{argv[0]} {verb} publishes a package others install", " ".join(words[1:3]))
            return
    if argv[0] in ("npm", "pnpm", "yarn"):
        if words[:1] == ["unpublish"]:
            yield _fx(
                "erase-contents", f"{argv[0]} unpublish removes a published package", " ".join(words[1:2])
            )
        elif words[:2] in (["dist-tag", "add"], ["dist-tag", "rm"], ["npm", "tag"]) or words[:1] == [
            "deprecate"
        ]:
            # a dist-tag decides which version every `install pkg` (`@latest`) fetches; a
            # deprecation message is shown to every installer ("moved to pkg-x"): both change a
            # published package for everyone without a new version
            yield _fx(
                "publish",
                f"{argv[0]} {' '.join(words[:2])} changes what installers of a published package get",
                " ".join(words[2:4] if words[0] != "deprecate" else words[1:2]),
            )
        elif (
            words[:2] == ["token", "create"]
            or (words[:1] == ["owner"] and words[1:2] in (["add"], ["rm"]))
            or (words[:1] == ["access"] and words[1:2] in (["grant"], ["set"], ["revoke"]))
            or (words[:1] == ["team"] and words[1:2] in (["add"], ["rm"], ["create"]))
            or (words[:1] == ["org"] and words[1:2] in (["set"], ["rm"]))
            or (words[:1] == ["profile"] and words[1:2] in (["disable-2fa"], ["set"]))
        ):
            yield _fx(
                "cloud-identity",
                f"{argv[0]} {' '.join(words[:2])} changes who may publish",
                " ".join(words[2:4]),
            )
    elif (
        argv[0] == "gem"
        and words[:1] == ["owner"]
        and any(a in ("-a", "--add", "-r", "--remove") for a in argv)
    ):
        yield _fx("cloud-identity", "gem owner changes who may publish", " ".join(words[1:2]))
    elif (
        argv[0] == "cargo"
        and words[:1] == ["owner"]
        and any(a in ("--add", "-a", "--remove", "-r") for a in argv)
    ):
        yield _fx("cloud-identity", "cargo owner changes who may publish", " ".join(words[1:2]))
    elif argv[0] in ("cargo", "gem") and words[:1] == ["yank"] and "--undo" not in argv:
        # a yanked version stops resolving for every new lockfile: a published package withdrawn
        yield _fx("erase-contents", f"{argv[0]} yank withdraws a published version", " ".join(words[1:2]))


_TAG_REF = lazy_compile(r"^\+?(?:[^:]*:)?refs/tags/\S+$|^\+v?[0-9]+(?:\.[0-9]+)+\S*$")


def _git(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:1] != ["push"]:
        return
    forced = any(a in ("-f", "--force") or re.match(r"^-[a-zA-Z]*f[a-zA-Z]*$", a) for a in argv[1:])
    tags = [w for w in words[1:] if _TAG_REF.match(w)]
    if tags and (forced or any(t.startswith("+") for t in tags)):
        yield _fx("erase-contents", "git force-pushes over a published tag", tags[0])
    deleting = any(a in ("-d", "--delete") for a in argv[1:])
    if deleting and len(words) <= 2:
        # `... | xargs git push --delete origin`: the refs arrive at run time, whatever they are
        yield _fx("erase-contents", "git deletes remote refs fed to it at run time", " ".join(words[1:2]))


_CI_TOOLKITS = lazy_compile(r"^(?:gato|gato-x|nord-stream|nordstream)$")


def _ci_toolkit(argv: list[str]) -> Iterator[Effect]:
    """The CI/CD attack toolkits (Gato-X, Nord Stream): runner enumeration, pipeline secrets
    extraction, runner-on-runner implants, whatever the subcommand."""
    if argv[1:] and not any(a in ("-h", "--help", "--version") for a in argv[1:]):
        yield _fx("cloud-identity", f"runs a CI/CD attack toolkit ({argv[0]})", " ".join(argv[1:4]))


def _runner(argv: list[str]) -> Iterator[Effect]:
    """This machine registered as a CI runner: from then on it runs whatever jobs the forge sends
    (the rogue runners of Shai-Hulud 2.0 and Gato-X's runner-on-runner), a remote-execution
    channel that looks like ordinary CI traffic."""
    tool, words = argv[0], _words(argv)
    registers = (
        tool in ("config.sh", "config.cmd", "Runner.Listener")
        and _value(argv, "--url") is not None
        and _value(argv, "--token", "--pat") is not None
    ) or (tool == "gitlab-runner" and words[:1] in (["register"], ["install"]))
    # the Actions runner's own service installer (svc.sh install [user]): the runner kept running
    registers = registers or (tool == "svc.sh" and words[:1] == ["install"])
    if registers:
        yield _fx(
            "remote-exec", f"{tool} registers this machine as a CI runner", _value(argv, "--url", "-u") or ""
        )


_HANDLERS = {
    "gh": (_forge_cli,),
    "glab": (_forge_cli,),
    "git": (_git,),
    **{name: (_registry,) for name in _PUBLISHERS},
    **dict.fromkeys(("gato", "gato-x", "nord-stream", "nordstream"), (_ci_toolkit,)),
    **dict.fromkeys(("config.sh", "config.cmd", "Runner.Listener", "gitlab-runner", "svc.sh"), (_runner,)),
}


_SHARED_TAG = lazy_compile(r"^(?:latest|stable)$")
_PYTHON = lazy_compile(r"^python(?:[0-9.]+)?$")


def _shared_tag(name: str) -> bool:
    """Whether an image reference names the tag every pull without a tag fetches (none, ``latest``,
    ``stable``): pushing it moves every default pull at once. A new version tag is release work
    that consumers opt into."""
    if "@" in name:
        return False  # a digest pins one image; nothing moves
    last = name.rsplit("/", 1)[-1]
    return bool(_SHARED_TAG.match(last.split(":", 1)[1] if ":" in last else "latest"))


def _image_push(argv: list[str]) -> Iterator[Effect]:
    """An image pushed over the tag others pull by default: ``docker push NAME`` of the tag every
    ``pull`` fetches (none, ``latest``, ``stable``), ``docker buildx build --push -t NAME:latest``;
    and a chart pushed to a registry (``helm push CHART oci://...``). A version, branch,
    pull-request or commit tag is one consumers choose."""
    tool, words = argv[0], _words(argv)
    if tool == "helm" and words[:1] == ["push"] and len(words) > 2:
        yield _fx("publish", "helm push publishes a chart to a registry", words[2])
        return
    if tool not in ("docker", "podman", "nerdctl"):
        return
    if words[:1] == ["push"] or words[:2] == ["image", "push"]:
        names = words[1:2] if words[:1] == ["push"] else words[2:3]
    elif words[:2] == ["buildx", "build"] and ("--push" in argv or "--output=type=registry" in argv):
        names = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-t", "--tag")]
        names += [a.split("=", 1)[1] for a in argv if a.startswith("--tag=")]
    else:
        return
    shared = [n for n in names if _shared_tag(n) and not n.startswith(("localhost", "127.0.0.1"))]
    if shared:
        yield _fx("publish", f"{tool} pushes an image tag others pull by default", shared[0])


def forge_acts(argv: list[str]) -> list[Effect]:
    """The forge and registry effects of one unwrapped command (see the module doc)."""
    if len(argv) > 2 and _PYTHON.match(argv[0]) and argv[1] == "-m" and argv[2] in _PUBLISHERS:
        argv = argv[2:]  # `python -m twine upload`: the module is the program
    handlers = _HANDLERS.get(argv[0], ()) if argv else ()
    found = [effect for handler in handlers for effect in handler(argv)]
    return found + list(_image_push(argv)) if argv else found


_RUNAS_ROOT = lazy_compile(r"(?:^|[\s;&|(])(?:export\s+)?RUNNER_ALLOW_RUNASROOT=[\"']?(?:1|true)\b")


def runner_guard_off(line: str) -> list[Effect]:
    """``RUNNER_ALLOW_RUNASROOT=1``: the Actions runner's refusal to run jobs as root switched off,
    so every job the forge sends runs as root (Sysdig's rogue-runner write-up, Shai-Hulud 2.0)."""
    if _RUNAS_ROOT.search(line):
        return [_fx("remote-exec", "a CI runner allowed to run jobs as root", "RUNNER_ALLOW_RUNASROOT")]
    return []


def _forge_program(program: str) -> bool:
    """The programs :func:`forge_acts` reads: the forge and registry tables', the image and chart
    pushers, and Python running a publisher module (``python -m twine``)."""
    pushes = program in ("docker", "podman", "nerdctl", "helm")
    return program in _HANDLERS or pushes or _PYTHON.match(program) is not None


COMMAND_READERS: tuple[CommandReader, ...] = ((_forge_program, forge_acts),)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
