"""The project's own checks skipped, read as the ``checks-off`` effect: what AI coding agents do
when a pre-commit hook (a linter, a type check, a secret scanner such as gitleaks) fails and the
task says "commit" - the block-no-verify reports on the agents' trackers, a fourteenth blind probe
(tests/corpus/probe14).

- git's own switch past the hooks: ``--no-verify`` on commit, push, merge, rebase, am, pull,
  cherry-pick and revert, and commit's short ``-n`` (alone or in a cluster such as ``-anm``,
  read letter by letter, so ``-m`` takes the rest as its message and the message is never read
  as switches; ``push -n`` is a dry run, not this);
- the hook managers' own off switches set on a line that commits or pushes: husky's ``HUSKY=0``
  and ``HUSKY_SKIP_HOOKS``, pre-commit's ``SKIP=ids``, lefthook's ``LEFTHOOK=0`` and
  ``LEFTHOOK_EXCLUDE``, overcommit's ``OVERCOMMIT_DISABLE`` (``HUSKY=0 npm ci`` in a Dockerfile
  skips installing hooks and commits nothing: not this);
- the hooks uninstalled: ``pre-commit uninstall``, ``lefthook uninstall``, ``husky uninstall``,
  ``overcommit --uninstall``, also through a package runner (``npx husky uninstall``).

And ``secret-commit``: a secret file staged for a commit by name (``git add``/``git stage``, with
or without ``-f``, which overrides .gitignore): an environment file (``.env``, ``.env.local``,
``.env.production``; ``.env.example``/``.sample``/``.template``/``.dist``/``.defaults`` are the
files meant to be committed), a private SSH key (``id_ed25519``, not ``.pub``), the package
managers' and netrc token files, a cloud service-account key file. Staging everything (``git add
-A``) is not read: what it takes depends on .gitignore, which the line does not show.

And ``protection-off``: a cloud resource's deletion protection removed, the step before it can be
deleted (the DataTalks.Club post-mortem: the database and its snapshots went because nothing
protected them): ``--no-deletion-protection`` (RDS, DocumentDB, Neptune, Cloud SQL, Compute
Engine), DynamoDB's ``--no-deletion-protection-enabled``, CloudFormation's
``--no-enable-termination-protection``, EC2's ``--no-disable-api-termination``, a load balancer's
``deletion_protection.enabled`` set to false, and Azure resource locks deleted (``az lock
delete``, ``az group lock delete``, ``az resource lock delete``). Turning protection on stays allowed.

``core.hooksPath`` pointed elsewhere is a ``runs-later-config`` of the trust reader, and hooks
files written or deleted are judged by the write rules.
"""

from __future__ import annotations

from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.programs import git_subcommand_and_rest

__all__ = ["COMMAND_READERS", "check_skip_acts", "protection_off_acts", "secret_commit_acts"]

_VERIFYING = frozenset({"commit", "push", "merge", "rebase", "am", "pull", "cherry-pick", "revert"})
_VALUE_OPTIONS = frozenset(
    {
        "--message",
        "--file",
        "--template",
        "--reuse-message",
        "--reedit-message",
        "--author",
        "--date",
        "--fixup",
        "--squash",
        "--cleanup",
        "--trailer",
        "--pathspec-from-file",
        "--strategy",
        "--strategy-option",
        "--onto",
        "--exec",
        "--push-option",
        "--receive-pack",
        "--repo",
    }
)
_VALUE_LETTERS = "mFCctsXox"
"""Short options whose value follows (commit -m/-F/-C/-c/-t, merge -s/-X, push -o, rebase -x): the
rest of a cluster after one of them is its value, not more switches (``-S`` takes an attached key
id only)."""
_SWITCHED_OFF = lazy_compile(
    r"(?:^|[\s;&|(\"'])(?:export\s+)?(?:HUSKY=[\"']?0\b|HUSKY_SKIP_HOOKS=[\"']?(?:1|true)\b|SKIP=\S"
    r"|LEFTHOOK=[\"']?(?:0|false)\b|LEFTHOOK_EXCLUDE=\S|OVERCOMMIT_DISABLE=[\"']?1\b)"
)
_HOOK_MANAGERS = frozenset({"pre-commit", "prek", "lefthook", "husky", "overcommit"})
_RUNNERS = frozenset({"npx", "pnpx", "bunx", "pnpm", "yarn", "bun", "uvx", "pipx", "dlx", "exec", "run"})


def _skips_hooks(verb: str, words: list[str]) -> bool:
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
            continue
        if word == "--":
            return False
        if word == "--no-verify":
            return True
        if word in _VALUE_OPTIONS:
            skip_next = True
        elif word.startswith("-") and not word.startswith("--") and len(word) > 1:
            for k, letter in enumerate(word[1:], 1):
                if letter == "n" and verb == "commit":
                    return True
                if letter in _VALUE_LETTERS:
                    skip_next = k == len(word) - 1
                    break
                if letter == "S":
                    break
    return False


def _uninstalls_hooks(argv: list[str]) -> bool:
    words = [w for w in argv if w not in _RUNNERS]
    for i, word in enumerate(words):
        if word.rsplit("/", 1)[-1] in _HOOK_MANAGERS:
            rest = words[i + 1 :]
            return bool(rest) and rest[0] in ("uninstall", "--uninstall")
    return False


def check_skip_acts(script: str, commands: list[list[str]]) -> Iterator[Effect]:
    """``checks-off`` for the line's commands (``script`` is the line's text, read for the hook
    managers' switches set in front of a commit or push, also inside ``bash -c '...'``)."""
    committing = False
    for argv in commands:
        if not argv:
            continue
        if argv[0] == "git":
            verb, words = git_subcommand_and_rest(argv)
            if verb in _VERIFYING:
                committing = committing or verb in ("commit", "push", "merge", "am", "cherry-pick", "revert")
                if _skips_hooks(verb, words):
                    yield _fx("checks-off", f"git {verb} --no-verify skips the project's hooks", verb)
        elif _uninstalls_hooks(argv):
            yield _fx("checks-off", "uninstalls the project's git hooks", " ".join(argv[:3]))
    if committing and _SWITCHED_OFF.search(script):
        yield _fx("checks-off", "switches the project's git hooks off for a commit or push", "")


_SECRET_FILE = lazy_compile(
    r"(?i)(?:^|/)(?:\.env(?:\.(?!(?:example|sample|template|dist|defaults?|schema)$)[\w.-]+)?"
    r"|id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?|\.npmrc|\.pypirc|\.netrc|\.git-credentials"
    r"|credentials\.json|[\w.-]*service[-_]?account[\w.-]*\.json)$"
)


def secret_commit_acts(commands: list[list[str]]) -> Iterator[Effect]:
    """``secret-commit`` for ``git add``/``git stage`` naming a secret file (see the module)."""
    for argv in commands:
        if not argv or argv[0] != "git":
            continue
        verb, words = git_subcommand_and_rest(argv)
        if verb not in ("add", "stage"):
            continue
        named = [w for w in words if not w.startswith("-")]
        hit = next((w for w in named if _SECRET_FILE.search(w.rstrip("/"))), None)
        if hit:
            yield _fx("secret-commit", "stages a secret file for a commit", hit)


_CLOUD_CLIS = frozenset(
    {"aws", "awslocal", "gcloud", "az", "doctl", "oci", "ibmcloud", "linode-cli", "hcloud", "scw"}
)
_PROTECTION_OFF = lazy_compile(
    r"(?i)^(?:--no-(?:deletion-protection(?:-enabled)?|enable-termination-protection|disable-api-termination)"
    r"|--(?:deletion-protection(?:-enabled)?|enable-termination-protection|disable-api-termination)=(?:false|0|no)"
    r"|.*deletion_protection\.enabled\W+(?:Value=)?false.*)$"
)


def protection_off_acts(argv: list[str]) -> Iterator[Effect]:
    """``protection-off`` for one cloud CLI command (see the module)."""
    if not argv or argv[0] not in _CLOUD_CLIS:
        return
    hit = next((a for a in argv[1:] if _PROTECTION_OFF.match(a)), None)
    words = [a for a in argv[1:] if not a.startswith("-")]
    if hit is None and argv[0] == "az" and "lock" in words[:3] and "delete" in words[:4]:
        hit = "lock delete"
    if hit is not None:
        yield _fx("protection-off", f"{argv[0]} removes a resource's deletion protection", hit)


COMMAND_READERS: tuple[CommandReader, ...] = ((_CLOUD_CLIS, protection_off_acts),)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
