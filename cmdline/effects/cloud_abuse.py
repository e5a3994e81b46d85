"""Cloud accounts turned to someone else's use rather than destroyed or opened: classes a sixth blind
probe (tests/corpus/probe6) found unread, from the 2025 LLMjacking, leaked-key and cryptojacking
reports (Sysdig, Datadog Security Labs, Wiz).

- ``cloud-identity``: access to hosted models requested or agreed to for the account (Bedrock's
  use-case form and model agreements, the first step of LLMjacking), and new SSH key pairs
  registered for the account's instances (a way back in that outlives a rotated key);
- ``cloud-exposure``: the account's mail sending switched on or taken out of the sandbox (leaked
  keys turned into a spam relay), and a cluster's system workloads given another image
  (``kubectl set image`` or ``patch`` of a kube-system DaemonSet: every node runs it);
- ``cloud-spend`` (ATT&CK T1496 resource hijacking): accelerator instances, or instances by the
  ten, launched (``aws ec2 run-instances --instance-type p4d.24xlarge``, ``--count 20``, ``gcloud
  compute instances create --accelerator``, ``az vm create --size Standard_ND*``), notebooks and
  training jobs on accelerator types (``aws sagemaker create-* --instance-type ml.p3.*``), batch
  jobs fanned out by the ten (``--array-properties size=``), and service quotas raised (the
  ceiling stolen keys hit first: LLMjacking's quota requests).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.shell.wrappers import KUBECTL_VALUE_OPTIONS

__all__ = ["COMMAND_READERS", "cloud_abuse_acts"]

_MODEL_ACCESS = frozenset(
    {"put-use-case-for-model-access", "create-foundation-model-agreement", "create-model-access-request"}
)
_MAIL_ON = frozenset(
    {"put-account-sending-attributes", "update-account-sending-enabled", "put-account-details"}
)
_KEY_PAIRS = frozenset({"create-key-pair", "import-key-pair"})
_ACCELERATED_TYPES = lazy_compile(r"^(?:p[2-6]|g[3-6]\w*|gr6|trn\d|inf\d|dl\d|vt\d)[a-z0-9-]*\.\w+$")
_ACCELERATED_SIZES = lazy_compile(
    r"(?i)^(?:Standard_N[CDVG]\w*|gpu-\S+|g\d-\S+|a\d-highgpu-\S+|a\d-ultragpu-\S+)$"
)
_SYSTEM_NAMESPACES = frozenset(
    {"kube-system", "kube-public", "kube-node-lease", "gatekeeper-system", "falco"}
)
_BULK = 10


def _count(argv: list[str], *names: str) -> int:
    value = _value(argv, *names)
    if value is None:
        return 1
    head = value.split(":", 1)[-1]
    return int(head) if head.isdigit() else 1


def _aws(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    service, verb = [*words, "", ""][:2]
    if service == "bedrock" and verb in _MODEL_ACCESS:
        yield _fx("cloud-identity", "requests access to hosted models for the account", verb)
    elif service in ("ses", "sesv2") and (
        verb in _MAIL_ON
        and (
            "--sending-enabled" in argv
            or "--production-access-enabled" in argv
            or verb != "put-account-details"
        )
    ):
        yield _fx("cloud-exposure", "switches the account's mail sending on", verb)
    elif service == "ec2" and verb in _KEY_PAIRS:
        yield _fx(
            "cloud-identity",
            "registers a new key pair for the account's instances",
            _value(argv, "--key-name") or "",
        )
    elif service == "ec2" and verb == "run-instances":
        kind = _value(argv, "--instance-type") or ""
        count = max(_count(argv, "--count"), _count(argv, "--max-count"), _count(argv, "--min-count"))
        if _ACCELERATED_TYPES.match(kind) or count >= _BULK:
            yield _fx("cloud-spend", f"launches {count} {kind or 'instances'}", kind)
    elif service == "sagemaker" and verb.startswith("create-"):
        kind = _value(argv, "--instance-type") or ""
        if _ACCELERATED_TYPES.match(kind.removeprefix("ml.")):
            yield _fx("cloud-spend", f"starts {verb.removeprefix('create-')} on {kind}", kind)
    elif service == "batch" and verb == "submit-job":
        size = _value(argv, "--array-properties") or ""
        found = re.search(r"size\s*=\s*(\d+)", size)
        if found and int(found.group(1)) >= _BULK:
            yield _fx(
                "cloud-spend",
                f"submits a job {found.group(1)} times over",
                _value(argv, "--job-definition") or "",
            )
    elif service == "service-quotas" and verb == "request-service-quota-increase":
        yield _fx("cloud-spend", "raises a service quota", _value(argv, "--service-code") or "")


def _leading_words(argv: list[str]) -> list[str]:
    """The words before the first option (gcloud's and doctl's verbs and the names they create)."""
    found: list[str] = []
    for arg in argv[1:]:
        if arg.startswith("-"):
            break
        found.append(arg)
    return found


def _gcloud(argv: list[str]) -> Iterator[Effect]:
    words = _leading_words(argv)
    if words[:3] == ["compute", "instances", "create"]:
        names = words[3:]
        machine = _value(argv, "--machine-type") or ""
        if (
            _value(argv, "--accelerator") is not None
            or _ACCELERATED_SIZES.match(machine)
            or len(names) >= _BULK
        ):
            yield _fx("cloud-spend", "launches accelerator or bulk instances", machine or " ".join(names[:2]))


def _az(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if words[:2] in (["vm", "create"], ["vmss", "create"]):
        size = _value(argv, "--size") or ""
        if _ACCELERATED_SIZES.match(size) or _count(argv, "--count", "--instance-count") >= _BULK:
            yield _fx("cloud-spend", "launches accelerator or bulk virtual machines", size)


def _doctl(argv: list[str]) -> Iterator[Effect]:
    words = _leading_words(argv)
    if words[:3] == ["compute", "droplet", "create"]:
        size = _value(argv, "--size") or ""
        if _ACCELERATED_SIZES.match(size) or len(words[3:]) >= _BULK:
            yield _fx("cloud-spend", "launches accelerator or bulk droplets", size)


def _kubectl(argv: list[str]) -> Iterator[Effect]:
    words: list[str] = []
    skip = False
    for arg in argv[1:]:
        if skip:
            skip = False
        elif arg.startswith("-"):
            skip = arg in KUBECTL_VALUE_OPTIONS
        else:
            words.append(arg)
    namespace = _value(argv, "-n", "--namespace") or ""
    if namespace in _SYSTEM_NAMESPACES and (
        words[:2] == ["set", "image"]
        or (words[:1] == ["patch"] and any(w.startswith(("daemonset", "ds")) for w in words[1:2]))
    ):
        yield _fx("cloud-exposure", f"gives a workload in {namespace} another image", " ".join(words[1:3]))


_TABLE = {"aws": _aws, "gcloud": _gcloud, "az": _az, "doctl": _doctl, "kubectl": _kubectl}


def cloud_abuse_acts(argv: list[str]) -> list[Effect]:
    """The effects above for one unwrapped command (argv[0] is a basename)."""
    handler = _TABLE.get(argv[0])
    return list(handler(argv)) if handler is not None else []


COMMAND_READERS: tuple[CommandReader, ...] = ((frozenset(_TABLE), cloud_abuse_acts),)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
