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
  ``AWS = "*"``, ``allUsers``/``allAuthenticatedUsers`` members, a Kubernetes binding to
  ``system:anonymous``, ``system:unauthenticated`` or ``system:authenticated``);
- ``admin-grant``: administrator rights granted (AdministratorAccess/IAMFullAccess, ``Action "*"``
  on ``Resource "*"``, GCP owner/editor, Azure Owner, Kubernetes cluster-admin or ``*`` verbs on
  ``*`` resources);
- ``public-access``: a bucket's public-access block switched off, a public ACL, a storage
  account allowing public blob access;
- ``logging-off``: an audit trail's logging, log-file validation or global-event recording
  switched off (CloudTrail ``enable_logging = false``, ``IsLogging: false``);
- ``system-daemonset``: a DaemonSet in ``kube-system`` (every node runs it among the cluster's own
  agents);
- ``open-datastore``: a data store opened to whoever reaches it (redis ``protected-mode no``,
  ``pg_hba.conf`` trusting every address, Elasticsearch security or MongoDB authorization off);
- ``relay-publish``: a relay client's config publishing a local port on a server elsewhere (frp's
  ``serverAddr`` with a ``remotePort``);
- ``miner``: a workload or configuration that mines (a known miner's image, a stratum URL, a
  mining pool's host:port as a pool URL: the compose override or xmrig ``config.json`` a
  cryptojacking campaign drops);
- ``open-rules``: a backend's security rules open to anyone (Firebase Firestore/Storage rules
  allowing writes, or reads of everything, without a condition; the Realtime Database's
  ``".write": true``);
- ``open-ingress``: a firewall or security-group rule open to the whole internet (0.0.0.0/0, ::/0,
  ``*``/``Internet`` in Azure) on an administration or database port, or on every port; a web
  port open to the world is what a public load balancer is for, and stays ordinary; a Kubernetes
  LoadBalancer or NodePort Service in front of such a port with no source ranges is the same.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["INFRA_SIGNALS", "INFRA_SIGNAL_NAMES", "infra_signals"]

_SEP = r"[\"']?\s*[:=]\s*[\"']?"
_SENSITIVE_HOST_PATH = (
    r"/(?:var/+)?run/+(?:docker|containerd|crio|podman)[\w./-]*\.sock|/+(?:etc|root|boot|dev|home"
    r"|var/+lib/+(?:kubelet|docker|containerd))/*|/"
)
"""Host paths that hand a container the host: the engine's socket, the root, whole system folders
(a single file such as /etc/localtime, or /proc read by a monitoring agent, is not this)."""

INFRA_SIGNALS: dict[str, re.Pattern[str]] = {
    "host-escape": lazy_compile(
        r"(?im)[\"']?\b(?:privileged|hostPID|hostIPC|hostNetwork|host_pid|host_ipc|host_network)"
        + _SEP
        + r"true\b"
        r"|^[ \t]*[\"']?(?:pid|ipc)" + _SEP + r"host\b"
        r"|hostPath[\"']?\s*:\s*\{?\s*(?:\n\s*)?[\"']?path"
        + _SEP
        + r"(?:"
        + _SENSITIVE_HOST_PATH
        + r")[\"']?\s*(?:[,}\n]|$)"
        r"|(?:^|[\s\"'\[,-])(?:" + _SENSITIVE_HOST_PATH + r"):/[\w./-]*"
        r"|(?:source|host_path|sourcePath)" + _SEP + r"(?:" + _SENSITIVE_HOST_PATH + r")[\"']?\s*(?:[,}\n]|$)"
        r"|(?:\bcap_add|capabilities[\"']?\s*:\s*\{?\s*[\"']?add)[\"']?\s*[:=]\s*\[?[^\]\[\n:]{0,120}\b(?:SYS_ADMIN|SYS_PTRACE|SYS_MODULE|ALL)\b"
        r"|^[ \t]*-[ \t]*[\"']?(?:SYS_ADMIN|SYS_MODULE)[\"']?[ \t]*$"
        r"|(?:seccomp|apparmor)[:=]\s*[\"']?unconfined|seccompProfile[\"']?\s*:\s*\{?\s*[\"']?type[\"']?\s*:\s*[\"']?Unconfined"
    ),
    "open-trust": lazy_compile(
        r"(?im)[\"']?Principals?[\"']?\s*[:=]\s*(?:\{\s*[\"']?(?:AWS|Federated|Service)[\"']?\s*[:=]\s*)?\[?\s*[\"']\*[\"']"
        r"|\bidentifiers\s*=\s*\[\s*\"\*\"\s*\][^}]*\btype\s*=\s*\"AWS\"|\btype\s*=\s*\"AWS\"[^}]*\bidentifiers\s*=\s*\[\s*\"\*\"\s*\]"
        r"|\bmembers?[\"']?\s*[:=]\s*\[?[^\]\n]{0,200}\b(?:allUsers|allAuthenticatedUsers)\b"
        r"|^[ \t]*-[ \t]*[\"']?(?:allUsers|allAuthenticatedUsers)[\"']?[ \t]*$"
        # a Kubernetes binding whose subject is anyone (every caller, or every signed-in identity)
        r"|[\"']?name[\"']?\s*:\s*[\"']?system:(?:anonymous|unauthenticated|authenticated)[\"']?\s*(?:[,}\n]|$)"
    ),
    "admin-grant": lazy_compile(
        r"(?i)arn:aws:iam::aws:policy/(?:AdministratorAccess|IAMFullAccess|PowerUserAccess)\b"
        r"|[\"']?Action[\"']?\s*[:=]\s*\[?\s*[\"']\*[\"']\s*\]?\s*,?\s*(?:\n\s*)?[\"']?Resource[\"']?\s*[:=]\s*\[?\s*[\"']\*[\"']"
        r"|[\"']?actions?[\"']?\s*=\s*\[\s*\"\*\"\s*\]"
        r"|\broles/(?:owner|editor|iam\.securityAdmin|resourcemanager\.organizationAdmin)\b"
        r"|role_definition_name\s*=\s*\"(?:Owner|User Access Administrator)\""
        r"|roleRef[^}]{0,200}\bcluster-admin\b"
        r"|verbs\s*:\s*\[\s*[\"']\*[\"']\s*\][^\n]{0,200}\n?\s{0,40}(?:-\s*)?resources\s*:\s*\[\s*[\"']\*[\"']"
        r"|resources\s*:\s*\[\s*[\"']\*[\"']\s*\][^\n]{0,200}\n?\s{0,40}(?:-\s*)?verbs\s*:\s*\[\s*[\"']\*[\"']"
    ),
    "public-access": lazy_compile(
        r"(?i)\b(?:block_public_acls|block_public_policy|ignore_public_acls|restrict_public_buckets|BlockPublicAcls"
        r"|BlockPublicPolicy|IgnorePublicAcls|RestrictPublicBuckets)[\"']?\s*[:=]\s*[\"']?false\b"
        r"|\bacl[\"']?\s*[:=]\s*[\"']?public-read(?:-write)?\b|AccessControl[\"']?\s*:\s*[\"']?PublicRead"
        r"|container_access_type\s*=\s*\"(?:blob|container)\"|[\"']?publicAccess[\"']?\s*:\s*[\"']?(?:Blob|Container)\b"
        r"|[\"']?(?:allowBlobPublicAccess|allow_nested_items_to_be_public|allow_blob_public_access)[\"']?\s*[:=]\s*[\"']?true\b"
    ),
    "logging-off": lazy_compile(
        r"(?i)[\"']?\b(?:enable_logging|is_logging|IsLogging|EnableLogging|logging_enabled|enable_log_file_validation"
        r"|EnableLogFileValidation|include_global_service_events|IncludeGlobalServiceEvents)[\"']?\s*[:=]\s*[\"']?false\b"
    ),
    # a DaemonSet placed in a cluster's system namespace: every node runs it beside the cluster's own
    # agents (the Dero and Kinsing cryptojacking campaigns' way in); the window keeps kind and
    # namespace in one document
    "system-daemonset": lazy_compile(
        r"(?is)\bkind[\"']?\s*:\s*[\"']?DaemonSet\b(?:(?!\n---).){0,400}?\bnamespace[\"']?\s*:\s*[\"']?kube-system\b"
        r"|\bnamespace[\"']?\s*:\s*[\"']?kube-system\b(?:(?!\n---).){0,400}?\bkind[\"']?\s*:\s*[\"']?DaemonSet\b"
    ),
    # a workload or a config that mines: a known miner's image or binary, a stratum URL, or a pool
    # host:port named as a pool URL (compose services, Kubernetes pods, xmrig's config.json)
    "miner": lazy_compile(
        r"(?i)\bstratum\+?(?:tcp|ssl|tls)?://"
        r"|\bimage[\"']?\s*[:=]\s*[\"']?[\w./-]*(?:xmrig|xmr-stak|cpuminer|srbminer|lolminer|t-rex|nbminer|dero-miner"
        r"|monero-miner|nanominer)\b"
        r"|[\"']?\b(?:url|pool|pools|host)[\"']?\s*[:=]\s*\[?\s*\{?\s*[\"']?(?:url[\"']?\s*[:=]\s*[\"']?)?"
        r"(?:[\w-]+\.)*(?:pool|nanopool|supportxmr|moneroocean|hashvault|2miners|f2pool|nicehash|minexmr|herominers"
        r"|c3pool|unmineable)\.[\w.-]+:\d{2,5}\b"
    ),
    # a data store opened to whoever reaches it: redis protected mode off, pg_hba trusting every
    # address, Elasticsearch security off, MongoDB authorization disabled (how Migo, P2Pinfect and
    # the Meow wipes got in)
    "open-datastore": lazy_compile(
        r"(?im)^[ \t]*protected-mode[ \t]+no\b"
        r"|^[ \t]*host(?:ssl)?[ \t]+\S+[ \t]+\S+[ \t]+(?:0\.0\.0\.0/0|::/0|all)[ \t]+trust\b"
        r"|\bxpack\.security\.enabled[\"']?\s*[:=]\s*[\"']?false\b"
        r"|^[ \t]*authorization[\"']?\s*:\s*[\"']?disabled\b"
    ),
    # a relay client publishing a local port on a server elsewhere (frp's remotePort, rathole)
    "relay-publish": lazy_compile(
        r"(?is)\bserver_?addr[\"']?\s*[:=].{0,600}?\bremote_?port[\"']?\s*[:=]\s*\d"
        r"|\bremote_?port[\"']?\s*[:=]\s*\d.{0,600}?\bserver_?addr[\"']?\s*[:=]"
    ),
    # a backend's security rules letting anyone write, or read everything (Firebase's Firestore and
    # Storage rules: `allow read, write;`, `allow write: if true;`, a `{document=**}` match allowed
    # reads without a condition; the Realtime Database's `".write": true`): deployed by the next
    # `firebase deploy`, the database is the internet's (Firebase's insecure-rules guide)
    "open-rules": lazy_compile(
        r"(?i)\ballow[ \t]+(?:[a-z]+[ \t]*,[ \t]*)*(?:write|create|update|delete)"
        r"(?:[ \t]*,[ \t]*[a-z]+)*[ \t]*(?::[ \t]*if[ \t]+true[ \t]*)?;"
        r"|(?s:\{\w+=\*\*\}[ \t]*\{[^{}]*?\ballow[ \t]+(?:[a-z]+[ \t]*,[ \t]*)*(?:read|get|list)"
        r"(?:[ \t]*,[ \t]*[a-z]+)*[ \t]*(?::[ \t]*if[ \t]+true[ \t]*)?;)"
        r"|\"\.write\"[ \t]*:[ \t]*(?:true|\"true\")"
    ),
}
"""Each infrastructure signal with the pattern that finds it in a file's new text."""


_OPEN_SOURCE = lazy_compile(
    r"(?i)[\"']?(?:0\.0\.0\.0/0|::/0)[\"']?|(?:source_address_prefix|sourceAddressPrefix)[\"']?\s*[:=]\s*[\"'](?:\*|Internet|Any)[\"']"
)
_DIRECTION = lazy_compile(
    r"(?i)\b(?:ingress|egress|inbound|outbound|SecurityGroupIngress|SecurityGroupEgress|source_ranges|sourceRanges"
    r"|destination_ranges|destinationRanges|source_address_prefix|sourceAddressPrefix|CidrIp|DestinationCidrIp)\b"
)
_ADMIN_PORT = lazy_compile(
    r"(?i)(?:port|ports|port_range|portRange|destination_port_ranges?|destinationPortRanges?)[\"']?\s*[:=]\s*\[?\s*[\"']?"
    r"(?:22|23|2375|2376|3306|3389|5432|5900|5984|6379|9200|10250|11211|27017|0-65535|\*)\b"
    r"|\b(?:ip_?)?protocol[\"']?\s*[:=]\s*[\"']?(?:-1|all|\*)\b"
    # every port spelled as a range's two ends (Terraform from_port/to_port, CloudFormation FromPort/ToPort)
    r"|\bfrom_?port[\"']?\s*[:=]\s*[\"']?[01][\"']?\s*[,\n][\s\S]{0,200}?\bto_?port[\"']?\s*[:=]\s*[\"']?65535\b"
)
_WINDOW = 500
_MAX_OPEN_RANGES = 256
"""Open source ranges read per file (a template with more is judged by its first ones)."""


def _open_ingress(text: str) -> bool:
    """An open source range in an inbound rule that names an administration or database port, or
    every port and protocol. The rule runs from the direction word before the range (ingress,
    inbound, SecurityGroupIngress; for CloudFormation's CidrIp the word before it) to the next
    direction word after it, so an open egress rule beside an inbound web rule is not read as one
    rule; where the source range closes the rule (GCP source_ranges, Azure source prefixes) the
    ports before it, back to the previous direction word, belong to it. The direction words are
    found once and at most :data:`_MAX_OPEN_RANGES` ranges are read, so the work stays linear."""
    words = list(_DIRECTION.finditer(text))
    starts = [w.start() for w in words]
    for count, match in enumerate(_OPEN_SOURCE.finditer(text)):
        if count >= _MAX_OPEN_RANGES:
            break
        first = bisect_left(starts, max(0, match.start() - _WINDOW))
        before = words[first : bisect_left(starts, match.start())]
        if not words:
            # a fragment (an edit's new text) that names no direction: the source range and the
            # ports beside it are the rule (an egress block names itself)
            if _ADMIN_PORT.search(text[max(0, match.start() - _WINDOW) : match.end() + _WINDOW]):
                return True
            continue
        if not before:
            continue
        head = before.pop()
        if head.group().lower() == "cidrip" and before:
            head = before.pop()
        if re.match(r"(?i)egress|outbound|destination|SecurityGroupEgress", head.group()):
            continue
        nxt = bisect_left(starts, match.end())
        stop = words[nxt].start() if nxt < len(words) and words[nxt].start() < match.end() + _WINDOW else None
        rule = text[head.start() : stop if stop is not None else match.end() + _WINDOW]
        if re.match(r"(?i)source", head.group()):
            floor = before[-1].end() if before else 0
            rule = text[max(floor, head.start() - _WINDOW) : head.start()] + rule
        if _ADMIN_PORT.search(rule):
            return True
    return False


INFRA_SIGNAL_NAMES: tuple[str, ...] = (*INFRA_SIGNALS, "open-ingress")
"""Every signal :func:`infra_signals` reports, in its order."""


_PUBLIC_SERVICE = lazy_compile(r"(?i)[\"']?type[\"']?\s*:\s*[\"']?(?:LoadBalancer|NodePort)\b")
_SERVICE_PORT = lazy_compile(
    r"(?i)[\"']?(?:port|targetPort|nodePort)[\"']?\s*:\s*[\"']?"
    r"(?:22|23|2375|2376|3306|3389|5432|5900|5984|6379|9200|10250|11211|27017)\b"
)
_SOURCE_RANGES = lazy_compile(r"(?i)loadBalancerSourceRanges")


def _public_service(text: str) -> bool:
    """A Kubernetes Service of type LoadBalancer or NodePort in front of an administration or
    database port with no ``loadBalancerSourceRanges``: the database reachable from the internet,
    as an open inbound rule on its port would make it (probe17). Each ``---`` document is read
    alone."""
    for document in text.split("\n---"):
        if (
            _PUBLIC_SERVICE.search(document)
            and _SERVICE_PORT.search(document)
            and not _SOURCE_RANGES.search(document)
        ):
            return True
    return False


def infra_signals(text: str) -> list[str]:
    """The infrastructure signals found in ``text`` (the first 200,000 characters)."""
    sample = text[:200_000]
    found = [name for name, pattern in INFRA_SIGNALS.items() if pattern.search(sample)]
    return [*found, "open-ingress"] if _open_ingress(sample) or _public_service(sample) else found
