"""The deployment file (``kind: Gateway``): which packs, param overrides, engine, shadow mode and
audit settings. It stands in for the command-line flags of every command that loads packs.

```yaml
apiVersion: dsh-policy/v1
kind: Gateway
metadata: {name: prod}
spec:
  packs: [../rules/baseline.yaml, ../rules/secrets.yaml]   # relative to this file
  params: {max_turns: 20}
  engine: auto            # auto | closure | python | native
  shadow: false           # true: evaluate every rule in audit mode
  audit:
    path: audit/gateway.jsonl
    fsync: batch          # always | batch | off
    checkpoint_key: keys/checkpoint.key
    fail_closed: true
    rotate_bytes: 67108864
    rotate_seconds: 86400
    format: 3             # a new log's format (default 2; an existing log keeps its own)
```
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from dsh_policy.policy.compiled import CompiledPolicy
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.loading import LoadFailure, build_policy
from dsh_policy.policy.params import ParamOrigin, parse_param_flags
from dsh_policy.policy.self_protection import SelfProtection, protection_for
from dsh_policy.policy.source.schema import schema_errors
from dsh_policy.policy.source.yaml_source import read_yaml_file
from pydantic import BaseModel, ConfigDict, Field

EngineChoice = Literal["auto", "closure", "python", "native"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class AuditSettings(_Model):
    """Audit log settings; paths are resolved against the deployment file's directory."""

    path: str
    fsync: Literal["always", "batch", "off"] = "batch"
    checkpoint_key: str | None = None
    fail_closed: bool = False
    rotate_bytes: int | None = None
    rotate_seconds: float | None = None
    #: The format of a new log (an existing log keeps its own); None: the writer's default, 2.
    #: 3 saves a SHA-256 per record, but only processes of a release that knows it may append.
    format: Literal[1, 2, 3] | None = None


class SelfProtectionSettings(_Model):
    """``self_protection:``; on unless ``enabled: false`` (an operator's choice: this file is
    itself protected). Paths are resolved against the deployment file's directory."""

    enabled: bool = True
    paths: tuple[str, ...] = ()
    secret_paths: tuple[str, ...] = ()


class ReloadSettings(_Model):
    """``reload:``; ``refuse_weakening`` keeps the policy in force when an edit would weaken it."""

    refuse_weakening: bool = False


class WebhookSettings(_Model):
    """``approvals.webhook:``; a new request is POSTed to ``url`` as JSON signed with HMAC-SHA256
    under the key in the file ``secret`` (docs/approvals.md). ``console`` is the console's address,
    put in the body so the notice links to it. Paths are resolved against the deployment file."""

    url: str = Field(pattern=r"^https?://[^\s/]+(/\S*)?$")
    secret: str = Field(min_length=1)
    timeout_seconds: float = Field(default=2.0, gt=0, le=10)
    console: str | None = None


class ApprovalSettings(_Model):
    """``approvals:``; an ``ask`` goes to this queue instead of a terminal prompt (docs/approvals.md).
    Paths are resolved against the deployment file's directory."""

    folder: str
    approvers: str | None = None
    wait_seconds: float = Field(default=5.0, ge=0, le=60)
    pending_seconds: int = Field(default=3600, ge=1)
    #: Where an ``ask`` of an embedded channel goes (the framework adapters, the embedded gateway,
    #: the Claude Agent SDK hooks): their own interrupt or approval service (``native``: a person
    #: in the loop), or this queue (``queue``: headless runs). Hooks and the MCP proxy always queue.
    embedded: Literal["native", "queue"] = "native"
    webhook: WebhookSettings | None = None


class _GatewaySpec(_Model):
    packs: tuple[str, ...]
    params: dict[str, Any] = Field(default_factory=dict)
    engine: EngineChoice = "auto"
    shadow: bool = False
    audit: AuditSettings | None = None
    self_protection: SelfProtectionSettings = SelfProtectionSettings()
    reload: ReloadSettings = ReloadSettings()
    approvals: ApprovalSettings | None = None


class _GatewayMetadata(_Model):
    name: str | None = None
    description: str | None = None


class _GatewayDocument(_Model):
    api_version: Literal["dsh-policy/v1"] = Field(alias="apiVersion")
    kind: Literal["Gateway"]
    metadata: _GatewayMetadata = _GatewayMetadata()
    spec: _GatewaySpec


@dataclass(frozen=True, slots=True)
class GatewayConfig:
    """A validated deployment file with every path resolved."""

    path: str
    name: str | None
    packs: tuple[str, ...]
    params: Mapping[str, Any]
    param_origins: Mapping[str, ParamOrigin]
    engine: EngineChoice
    shadow: bool
    audit: AuditSettings | None
    self_protection: SelfProtectionSettings = field(default_factory=SelfProtectionSettings)
    reload: ReloadSettings = field(default_factory=ReloadSettings)
    approvals: ApprovalSettings | None = None


def load_gateway_config(path: str | Path) -> GatewayConfig | list[PolicyError]:
    """Read and validate a deployment file (FILE:LINE:COL errors, unknown keys are errors)."""
    file = str(path)
    document = read_yaml_file(path)
    if isinstance(document, list):
        return document
    errors = schema_errors(document.value, document.source, file, "gateway-config.schema.json")
    if errors:
        return sorted(errors)
    model = _GatewayDocument.model_validate(document.value)
    base = Path(path).parent

    def resolve(relative: str) -> str:
        candidate = Path(relative).expanduser()
        return os.path.normpath(candidate if candidate.is_absolute() else base / candidate)

    audit = model.spec.audit
    if audit is not None:
        audit = audit.model_copy(
            update={
                "path": resolve(audit.path),
                "checkpoint_key": resolve(audit.checkpoint_key) if audit.checkpoint_key else None,
            }
        )
    origins = {
        key: ParamOrigin(file, *document.source.key_position(("spec", "params", key)))
        for key in model.spec.params
    }
    return GatewayConfig(
        path=file,
        name=model.metadata.name,
        packs=tuple(resolve(pack) for pack in model.spec.packs),
        params=dict(model.spec.params),
        param_origins=origins,
        engine=model.spec.engine,
        shadow=model.spec.shadow,
        audit=audit,
        self_protection=model.spec.self_protection.model_copy(
            update={
                "paths": tuple(resolve(path) for path in model.spec.self_protection.paths),
                "secret_paths": tuple(resolve(path) for path in model.spec.self_protection.secret_paths),
            }
        ),
        reload=model.spec.reload,
        approvals=_resolved_approvals(model.spec.approvals, resolve),
    )


def _resolved_approvals(
    approvals: ApprovalSettings | None, resolve: Callable[[str], str]
) -> ApprovalSettings | None:
    if approvals is None:
        return None
    approvers = resolve(approvals.approvers) if approvals.approvers else None
    webhook = approvals.webhook
    if webhook is not None:
        webhook = webhook.model_copy(update={"secret": resolve(webhook.secret)})
    return approvals.model_copy(
        update={"folder": resolve(approvals.folder), "approvers": approvers, "webhook": webhook}
    )


@dataclass(frozen=True, slots=True)
class PolicySources:
    """Everything needed to build a policy, from flags and/or a deployment file. Flags win:
    ``--param`` over the file's params, ``--engine`` over its engine; packs are the file's
    followed by those named on the command line."""

    packs: tuple[str, ...]
    params: Mapping[str, Any]
    param_origins: Mapping[str, ParamOrigin]
    engine: str
    shadow: bool
    config: GatewayConfig | None = None
    watched: tuple[str, ...] = field(default=())
    # ``--no-self-protection``: the operator's command line (the hook settings are protected).
    unprotected: bool = False

    def build(
        self, *, protect: bool = True, audit_path: str | None = None, signing_key: str | None = None
    ) -> CompiledPolicy | LoadFailure:
        """Load and compile the packs these sources name, with their params, engine and shadow
        flag (all-or-nothing). With ``protect`` (every deployment; ``check`` dry-runs packs
        without) the deployment's self-protection is attached: see :meth:`protection`."""
        return build_policy(
            self.packs,
            params=self.params,
            param_origins=self.param_origins,
            engine=self.engine,
            shadow=self.shadow,
            protection=self.protection(audit_path=audit_path, signing_key=signing_key) if protect else None,
        )

    def protection(self, *, audit_path: str | None = None, signing_key: str | None = None) -> SelfProtection:
        """What this deployment protects from its agent: packs, deployment file, audit log (a flag's
        or the file's), signing key, harness settings, the installed package, the operator's list."""
        config = self.config
        audit = config.audit if config is not None else None
        settings = config.self_protection if config is not None else SelfProtectionSettings()
        # The approval queue and the approvers file: an agent that could write them could
        # unmark a used approval or list its own key.
        approvals = config.approvals if config is not None else None
        queue = () if approvals is None else (approvals.folder, *filter(None, (approvals.approvers,)))
        return protection_for(
            packs=self.packs,
            deployment=config.path if config is not None else None,
            audit_log=audit_path or (audit.path if audit else None),
            signing_key=signing_key or (audit.checkpoint_key if audit else None),
            extra=(*settings.paths, *queue),
            extra_secret=settings.secret_paths,
            enabled=settings.enabled and not self.unprotected,
        )


def policy_sources(
    packs: Sequence[str],
    *,
    config: str | None = None,
    param_flags: Sequence[str] = (),
    engine: str | None = None,
    shadow: bool = False,
    unprotected: bool = False,
) -> PolicySources | list[PolicyError]:
    """Combine command-line flags with an optional deployment file."""
    errors: list[PolicyError] = []
    gateway: GatewayConfig | None = None
    if config is not None:
        loaded = load_gateway_config(config)
        if isinstance(loaded, list):
            errors.extend(loaded)
        else:
            gateway = loaded
    flags, flag_errors = parse_param_flags(param_flags)
    errors.extend(flag_errors)
    if errors:
        return errors
    params: dict[str, Any] = dict(gateway.params) if gateway else {}
    origins: dict[str, ParamOrigin] = dict(gateway.param_origins) if gateway else {}
    for key, value in flags.items():
        params[key] = value
        origins[key] = ParamOrigin("--param", 0, 0)
    all_packs = (*(gateway.packs if gateway else ()), *packs)
    if not all_packs:
        return [PolicyError("<command line>", 0, 0, "no rule packs given (name PACK files or use --config)")]
    chosen_engine = engine or (gateway.engine if gateway else "auto")
    watched = (*all_packs, *((gateway.path,) if gateway else ()))
    return PolicySources(
        packs=tuple(all_packs),
        params=params,
        param_origins=origins,
        engine=chosen_engine,
        shadow=shadow or (gateway.shadow if gateway else False),
        config=gateway,
        watched=watched,
        unprotected=unprotected,
    )
