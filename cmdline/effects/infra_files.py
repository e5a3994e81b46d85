"""What in infrastructure code (Kubernetes manifests and Helm templates, Compose files, Terraform
and OpenTofu, CloudFormation and SAM, ECS task definitions) opens the host, an identity or data
to others: the file-tool counterpart of the shell's ``cloud-identity``/``cloud-exposure`` effects.

An agent that may not run ``kubectl run --privileged`` or ``aws iam attach-role-policy
... AdministratorAccess`` can write the manifest or the module that does the same on the next
``apply``. The signals are read from the text whatever the file's format, because the same
setting is spelled alike in YAML, JSON and HCL (``privileged: true``, ``"privileged": true``,
``privileged = true``); a file's name says only that something applies it later.

- ``host-escape``: a container given the host (privileged, the host's pid/ipc/network namespace,
  the root, a system folder or the container engine's socket mounted, SYS_ADMIN/ALL capabilities,
  seccomp or AppArmor off);
- ``open-trust``: a trust or resource policy whose principal is anyone (``Principal: "*"``,
  ``AWS = "*"``, ``allUsers``/``allAuthenticatedUsers`` members);
- ``admin-grant``: administrator rights granted (AdministratorAccess/IAMFullAccess, ``Action "*"``
  on ``Resource "*"``, GCP owner/editor, Azure Owner, Kubernetes cluster-admin or ``*`` verbs on
  ``*`` resources);
- ``public-access``: a bucket's public-access block switched off or a public ACL.
"""

from __future__ import annotations

import re

__all__ = ["INFRA_SIGNALS", "infra_signals"]

_SEP = r"[\"']?\s*[:=]\s*[\"']?"
_SENSITIVE_HOST_PATH = (
    r"/(?:var/+)?run/+(?:docker|containerd|crio|podman)[\w./-]*\.sock|/+(?:etc|root|boot|dev|home"
    r"|var/+lib/+(?:kubelet|docker|containerd))/*|/"
)
"""Host paths that hand a container the host: the engine's socket, the root, whole system folders
(a single file such as /etc/localtime, or /proc read by a monitoring agent, is not this)."""

INFRA_SIGNALS: dict[str, re.Pattern[str]] = {
    "host-escape": re.compile(
        r"(?im)[\"']?\b(?:privileged|hostPID|hostIPC|hostNetwork|host_pid|host_ipc|host_network)"
        + _SEP
        + r"true\b"
        r"|^\s*[\"']?(?:pid|ipc)" + _SEP + r"host\b"
        r"|hostPath[\"']?\s*:\s*\{?\s*(?:\n\s*)?[\"']?path"
        + _SEP
        + r"(?:"
        + _SENSITIVE_HOST_PATH
        + r")[\"']?\s*(?:[,}\n]|$)"
        r"|(?:^|[\s\"'\[,-])(?:" + _SENSITIVE_HOST_PATH + r"):/[\w./-]*"
        r"|(?:source|host_path|sourcePath)" + _SEP + r"(?:" + _SENSITIVE_HOST_PATH + r")[\"']?\s*(?:[,}\n]|$)"
        r"|\b(?:cap_add|add)[\"']?\s*[:=]\s*\[?[^\]\n]*\b(?:SYS_ADMIN|SYS_PTRACE|SYS_MODULE|ALL)\b"
        r"|(?:^|\n)\s*-\s*[\"']?(?:SYS_ADMIN|SYS_MODULE)[\"']?\s*$"
        r"|(?:seccomp|apparmor)[:=]\s*[\"']?unconfined|seccompProfile[^\n]*\n?[^\n]*Unconfined"
    ),
    "open-trust": re.compile(
        r"(?im)[\"']?Principals?[\"']?\s*[:=]\s*(?:\{\s*[\"']?(?:AWS|Federated|Service)[\"']?\s*[:=]\s*)?\[?\s*[\"']\*[\"']"
        r"|\bidentifiers\s*=\s*\[\s*\"\*\"\s*\][^}]*\btype\s*=\s*\"AWS\"|\btype\s*=\s*\"AWS\"[^}]*\bidentifiers\s*=\s*\[\s*\"\*\"\s*\]"
        r"|\bmembers?[\"']?\s*[:=]\s*\[?[^\]\n]{0,200}\b(?:allUsers|allAuthenticatedUsers)\b"
        r"|^\s*-\s*[\"']?(?:allUsers|allAuthenticatedUsers)[\"']?\s*$"
    ),
    "admin-grant": re.compile(
        r"(?i)arn:aws:iam::aws:policy/(?:AdministratorAccess|IAMFullAccess|PowerUserAccess)\b"
        r"|[\"']?Action[\"']?\s*[:=]\s*\[?\s*[\"']\*[\"']\s*\]?\s*,?\s*(?:\n\s*)?[\"']?Resource[\"']?\s*[:=]\s*\[?\s*[\"']\*[\"']"
        r"|[\"']?actions?[\"']?\s*=\s*\[\s*\"\*\"\s*\]"
        r"|\broles/(?:owner|editor|iam\.securityAdmin|resourcemanager\.organizationAdmin)\b"
        r"|role_definition_name\s*=\s*\"(?:Owner|User Access Administrator)\""
        r"|roleRef[^}]{0,200}\bcluster-admin\b"
        r"|verbs\s*:\s*\[\s*[\"']\*[\"']\s*\][^\n]*\n?\s*(?:-\s*)?resources\s*:\s*\[\s*[\"']\*[\"']"
        r"|resources\s*:\s*\[\s*[\"']\*[\"']\s*\][^\n]*\n?\s*(?:-\s*)?verbs\s*:\s*\[\s*[\"']\*[\"']"
    ),
    "public-access": re.compile(
        r"(?i)\b(?:block_public_acls|block_public_policy|ignore_public_acls|restrict_public_buckets|BlockPublicAcls"
        r"|BlockPublicPolicy|IgnorePublicAcls|RestrictPublicBuckets)[\"']?\s*[:=]\s*[\"']?false\b"
        r"|\bacl[\"']?\s*[:=]\s*[\"']?public-read(?:-write)?\b|AccessControl[\"']?\s*:\s*[\"']?PublicRead"
        r"|container_access_type\s*=\s*\"(?:blob|container)\"|[\"']?publicAccess[\"']?\s*:\s*[\"']?(?:Blob|Container)\b"
    ),
}
"""Each infrastructure signal with the pattern that finds it in a file's new text."""


def infra_signals(text: str) -> list[str]:
    """The :data:`INFRA_SIGNALS` found in ``text`` (the first 200,000 characters)."""
    sample = text[:200_000]
    return [name for name, pattern in INFRA_SIGNALS.items() if pattern.search(sample)]
