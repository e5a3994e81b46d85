"""Cloud control-plane effects outside the common verbs ``acts`` reads (found by the blind probe
tests/corpus/probe4, read as classes):

- ``log-off``: a lifecycle rule that expires the objects of a logging or audit bucket (the trail
  is destroyed a day later without a delete call; aws s3api, gcloud storage, gsutil);
- ``cloud-identity``: new trust in an outside identity source (IAM Roles Anywhere trust anchors
  and profiles, OIDC and SAML providers, workload-identity pools, federated credentials);
- ``cloud-exposure``: a disk or image exported out of the account (a SAS grant on a managed disk
  or snapshot, image and instance exports), a layer made public;
- ``remote-exec``: code added to a function from a layer or a deployed function's code replaced,
  commands run through the kubelet
  (``kubectl get --raw .../nodes/N/proxy/run/...``, port 10250's ``/run`` and ``/exec``), and a
  cluster workload created to download and run code (``kubectl create cronjob ... -- sh -c
  'curl ... | sh'``);
- ``publish``: a home directory or a folder outside the project copied to a bucket;
- ``encrypt-hostage``: objects rewritten under a customer-provided key (S3 SSE-C), which nobody
  but the holder of that key can read back (the cloud form of ransomware encryption).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.effects.model import words as _words
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS", "cloud_command_acts"]

_LOG_BUCKET = lazy_compile(r"(?i)log|trail|audit|siem|flow|guardduty|security|forensic|archive")
_KUBELET = lazy_compile(
    r"/nodes/+[^/\s]+/+proxy/+(?:run|exec|attach|portForward)\b|:10250/+(?:run|exec|attach|portForward)\b"
)
_FETCH_RUN = lazy_compile(
    r"\b(?:curl|wget|fetch)\b[^|;&]{0,400}\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b"
    r"|\b(?:curl|wget)\b[^|;&]{0,400}\|\s*(?:python[0-9.]*|perl|ruby|node)\b"
    r"|\b(?:nc|ncat|socat|telnet)\s+\S+\s+\d+|/dev/tcp/|base64\s+(?:-d|--decode)"
)
_OUTSIDE = lazy_compile(
    r"^(?:~[A-Za-z0-9._-]*(?:/.*)?|\$HOME(?:/.*)?|\$\{HOME\}(?:/.*)?|/+(?:root|home/+[^/]+|Users/+[^/]+)(?:/.*)?"
    r"|/+etc(?:/.*)?|/+)$"
)
_BUCKET_URL = lazy_compile(
    r"^(?:s3|gs|az|azure|r2|b2|oss|cos)://|^https://[\w.-]+\.blob\.core\.windows\.net/|^[\w-]+:[\w./-]*$"
)
"""A bucket or a remote (rclone's ``name:path``)."""


def _aws(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    service, op = [*words, "", ""][:2]
    if service == "s3api" and op in ("put-bucket-lifecycle-configuration", "put-bucket-lifecycle"):
        bucket = _value(argv, "--bucket") or ""
        rules = _value(argv, "--lifecycle-configuration") or ""
        if _LOG_BUCKET.search(bucket) and ("Expiration" in rules or rules.startswith("file://") or not rules):
            yield _fx("log-off", "expires the objects of a log bucket", bucket)
    elif service == "lambda" and (_value(argv, "--layers") or any(a == "--layers" for a in argv)):
        yield _fx(
            "remote-exec", f"aws lambda {op} adds code layers to a function", _value(argv, "--layers") or ""
        )
    elif service == "lambda" and op == "update-function-code":
        yield _fx(
            "remote-exec",
            "aws lambda replaces a deployed function's code",
            _value(argv, "--function-name") or "",
        )
    elif service == "lambda" and op == "add-layer-version-permission" and _value(argv, "--principal") == "*":
        yield _fx("cloud-exposure", "makes a function layer public", op)
    elif (
        service == "rolesanywhere"
        and re.match(r"^(?:create|update)-(?:trust-anchor|profile)$|^enable-trust-anchor$", op)
    ) or (
        service == "iam"
        and re.match(
            r"^(?:create|update)-(?:open-id-connect-provider|saml-provider)|^add-client-id-to-open-id-connect-provider$"
            r"|^update-open-id-connect-provider-thumbprint$",
            op,
        )
    ):
        yield _fx("cloud-identity", f"aws {service} {op} trusts an outside identity source", op)
    elif service == "ec2" and op in (
        "create-instance-export-task",
        "export-image",
        "create-store-image-task",
    ):
        yield _fx("cloud-exposure", f"aws ec2 {op} exports a disk image out of the account", op)
    elif service == "s3" and op in ("cp", "sync", "mv"):
        if any(
            a.startswith(("--sse-c-key", "--sse-c")) and not a.startswith("--sse-c-copy-source") for a in argv
        ):
            yield _fx("encrypt-hostage", "rewrites objects under a key only the caller holds (SSE-C)", op)
        yield from _home_upload(argv, words[2:])
    elif (
        service == "s3api"
        and op in ("copy-object", "put-object")
        and any(a.startswith("--sse-customer-key") for a in argv)
    ):
        yield _fx("encrypt-hostage", "writes objects under a key only the caller holds (SSE-C)", op)


def _home_upload(argv: list[str], operands: list[str]) -> Iterator[Effect]:
    """A home, system or root folder as the source (an operand before a bucket URL)."""
    sources = [i for i, o in enumerate(operands) if _OUTSIDE.match(o)]
    buckets = [i for i, o in enumerate(operands) if _BUCKET_URL.match(o)]
    if sources and buckets and sources[0] < buckets[-1]:
        yield _fx("publish", f"{argv[0]} copies a home or system folder to a bucket", operands[buckets[-1]])


def _az(argv: list[str]) -> Iterator[Effect]:
    text = " ".join(_words(argv))
    if re.search(r"\b(?:disk|snapshot) grant-access\b", text):
        yield _fx("cloud-exposure", "az grants a download link (SAS) to a disk", text)
    elif re.search(r"\b(?:identity|ad app) federated-credential create\b", text):
        yield _fx("cloud-identity", "az trusts an outside identity source", text)


def _gcloud(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    text = " ".join(words)
    if re.search(r"\bcompute images export\b|\bcompute machine-images export\b", text):
        yield _fx("cloud-exposure", "gcloud exports a disk image", text)
    elif re.search(r"\biam workload-identity-pools providers (?:create|update)", text):
        yield _fx("cloud-identity", "gcloud trusts an outside identity source", text)
    elif words[:2] == ["storage", "cp"] or words[:2] == ["storage", "rsync"]:
        yield from _home_upload(argv, words[2:])
    elif words[:3] == ["storage", "buckets", "update"] and any(
        a.startswith("--lifecycle-file") for a in argv
    ):
        buckets = [w for w in words[3:] if w.startswith("gs://")]
        if any(_LOG_BUCKET.search(b) for b in buckets):
            yield _fx("log-off", "sets a lifecycle that can expire a log bucket", buckets[0])


def _kubectl(argv: list[str]) -> Iterator[Effect]:
    raw = _value(argv, "--raw") or ""
    if _KUBELET.search(raw):
        yield _fx("remote-exec", "runs a command in a pod through the kubelet", raw)
        return
    words = _words(argv)
    if words[:1] in (["create"], ["run"]) and "--" in argv:
        payload = " ".join(argv[argv.index("--") + 1 :])
        if _FETCH_RUN.search(payload):
            kind = words[1] if words[:1] == ["create"] and len(words) > 1 else "pod"
            yield _fx("remote-exec", f"a cluster {kind} that downloads and runs code", payload[:80])


def _fetchers(argv: list[str]) -> Iterator[Effect]:
    for arg in argv[1:]:
        if _KUBELET.search(arg):
            yield _fx("remote-exec", f"{argv[0]} runs a command in a pod through the kubelet", arg)
            return


def _copiers(argv: list[str]) -> Iterator[Effect]:
    words = _words(argv)
    if argv[0] == "gsutil" and words[:2] == ["lifecycle", "set"]:
        buckets = [w for w in words[2:] if w.startswith("gs://")]
        if any(_LOG_BUCKET.search(b) for b in buckets):
            yield _fx("log-off", "sets a lifecycle that can expire a log bucket", buckets[0])
        return
    if argv[0] == "gsutil":
        operands = words[1:] if words[:1] in (["cp"], ["rsync"], ["mv"]) else []
    elif argv[0] == "rclone":
        operands = words[1:] if words[:1] in (["copy"], ["sync"], ["move"]) else []
    elif argv[0] == "azcopy":
        operands = words[1:] if words[:1] in (["copy"], ["cp"], ["sync"]) else []
    else:
        operands = []
    yield from _home_upload(argv, operands)


_TABLE = {
    "aws": _aws,
    "az": _az,
    "gcloud": _gcloud,
    "kubectl": _kubectl,
    "oc": _kubectl,
    "curl": _fetchers,
    "wget": _fetchers,
    "gsutil": _copiers,
    "rclone": _copiers,
    "azcopy": _copiers,
}


def cloud_command_acts(argv: list[str]) -> list[Effect]:
    """The effects above for one unwrapped command (argv[0] is a basename)."""
    handler = _TABLE.get(argv[0]) if argv else None
    return list(handler(argv)) if handler else []


COMMAND_READERS: tuple[CommandReader, ...] = ((frozenset(_TABLE), cloud_command_acts),)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
