"""A cluster's nodes and workloads taken beyond kubectl's common verbs (found by the blind probe
tests/corpus/probe10 in Kubernetes offensive tooling - kubeletctl, Peirates, CDK - read as classes):

- ``remote-exec``: a command run in a pod through the kubelet's own API (``kubeletctl run|exec``,
  ``kubeletctl scan rce``): no API server, no audit log, no RBAC on the way;
- ``secret-hunt``: every pod's service-account token collected from the kubelets of a network
  (``kubeletctl scan token``);
- ``miner``: a workload pointed at a known miner's image (``kubectl set image ... =xmrig/xmrig``,
  ``kubectl run|create deployment --image=...``, ``docker|podman|nerdctl run IMAGE``);
- ``cloud-identity``: the cluster's superuser group handed out by text fed to ``kubectl apply``,
  ``replace``, ``patch`` or ``edit`` (the ``aws-auth`` map given ``system:masters``), the same
  grant ``kubectl create clusterrolebinding ... cluster-admin`` makes.

Listing pods through the kubelet (``kubeletctl pods``) and images named after anything else stay
allowed.
"""

from __future__ import annotations

from collections.abc import Iterator

from dsh_policy.cmdline.cli_grammars import parse_invocation
from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS", "workload_command_acts", "workload_line_acts"]

_MINER_IMAGE = lazy_compile(
    r"(?i)(?:^|[/=])(?:xmrig[\w-]*|xmr-stak[\w-]*|cpuminer[\w-]*|srbminer[\w-]*|lolminer|t-rex|nbminer|nanominer"
    r"|phoenixminer|ethminer|teamredminer|gminer|ccminer|minerd|dero-miner|monero-miner)(?::[\w.-]+|@sha256:\w+)?$"
)
_CONTAINER_RUNNERS = frozenset({"docker", "podman", "nerdctl"})
_SUPERUSER_GROUP = lazy_compile(r"\bsystem:masters\b")
_APPLYING = frozenset({"apply", "replace", "patch", "edit", "create"})


def _kubeletctl(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:1] in (["run"], ["exec"]) or words[:2] == ["scan", "rce"]:
        yield _fx("remote-exec", "runs a command in pods through the kubelet's API", " ".join(words[:2]))
    elif words[:2] == ["scan", "token"]:
        yield _fx("secret-hunt", "collects every pod's service-account token from the kubelets", "")


def _images(argv: list[str]) -> list[str]:
    tool, words = argv[0], _words(argv)
    if tool in ("kubectl", "oc"):
        found = [_value(argv, "--image") or ""]
        if words[:2] == ["set", "image"]:
            found += [w.split("=", 1)[1] for w in words[2:] if "=" in w]
        return found
    # the image is the first operand, but option values are words too: any operand may be it
    return words[1:] if words[:1] in (["run"], ["create"]) else []


def workload_command_acts(argv: list[str]) -> list[Effect]:
    """The per-command effects above (argv[0] is a basename)."""
    if argv[0] == "kubeletctl":
        return list(_kubeletctl(argv))
    if argv[0] in ("kubectl", "oc") or argv[0] in _CONTAINER_RUNNERS:
        miners = [image for image in _images(argv) if _MINER_IMAGE.search(image)]
        if miners:
            return [_fx("miner", "runs a cryptocurrency miner's image", miners[0])]
    return []


def _sub_command(argv: list[str]) -> str | None:
    """kubectl's sub-command, read with its grammar (``-n ns`` before it is no sub-command)."""
    read = parse_invocation(argv)
    return read["words"][0] if read is not None and read["words"] else None


def workload_line_acts(line: str, commands: list[list[str]]) -> Iterator[Effect]:
    """``... | kubectl apply -f -`` whose text grants ``system:masters``."""
    if "system:masters" not in line or not _SUPERUSER_GROUP.search(line):
        return
    if any(argv[0] in ("kubectl", "oc") and _sub_command(argv) in _APPLYING for argv in commands):
        yield _fx("cloud-identity", "grants the cluster's superuser group (system:masters)", "")


COMMAND_READERS: tuple[CommandReader, ...] = (
    (_CONTAINER_RUNNERS | {"kubeletctl", "kubectl", "oc"}, workload_command_acts),
)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
