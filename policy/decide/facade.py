"""The decision API the gateway plugins and hook adapters hold: :class:`Policy`.

It loads packs into a :class:`~.decider.Decider` and forwards each decision to the decider in
force; ``policy.runtime.reload.ReloadingPolicy`` is one that follows edits to its pack files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from typing import TYPE_CHECKING, Any

from dsh_policy.policy.cel.engine import CelEngine
from dsh_policy.policy.compiled import CompiledPolicy
from dsh_policy.policy.decide.decider import DEFAULT_EVENT_SECONDS, DEFAULT_MAX_SCAN_BYTES, Decider
from dsh_policy.policy.events import (
    GuardVerdict,
    ResultVerdict,
    StepEvent,
    StepVerdict,
    ToolCallEvent,
    ToolCallVerdict,
    ToolResultEvent,
)
from dsh_policy.policy.loading import LoadFailure, PackInfo, build_policy

if TYPE_CHECKING:  # annotations only: params imports the pack reader (PyYAML, pydantic, jsonschema),
    # which a policy read back from the compiled-policy cache never needs
    from dsh_policy.policy.params import ParamOrigin

_FORWARDED = (
    "gate_step",
    "pre_execute",
    "pre_execute_call",
    "guard",
    "check_tool_call",
    "review_tool_result",
    "redact_arguments",
)
"""The decide methods a plain :class:`Policy` binds straight to its decider."""


class Policy:
    """The decision API the gateway plugins and hook adapters hold: the decide methods of
    :class:`Decider` over the policy currently in force (see ``reload.ReloadingPolicy`` for one
    that follows edits to its pack files)."""

    def __init__(
        self,
        compiled: CompiledPolicy,
        *,
        max_scan_bytes: int = DEFAULT_MAX_SCAN_BYTES,
        event_seconds: float = DEFAULT_EVENT_SECONDS,
    ) -> None:
        self._decider = Decider(compiled, max_scan_bytes=max_scan_bytes, event_seconds=event_seconds)
        if type(self).current is Policy.current:
            # The decider never changes here (a subclass that swaps it overrides ``current``):
            # the decide methods are the decider's own, bound once, so a decision does not pay
            # two more Python calls for forwarding (a third of deciding a call no rule names).
            # A method a subclass overrides stays the subclass's.
            decider, cls = self._decider, type(self)
            for name in _FORWARDED:
                if getattr(cls, name) is getattr(Policy, name):
                    setattr(self, name, getattr(decider, name))

    @classmethod
    def load(
        cls,
        paths: Sequence[str | PathLike[str]],
        *,
        params: Mapping[str, Any] | None = None,
        engine: CelEngine | str = "auto",
        shadow: bool = False,
        param_origins: Mapping[str, ParamOrigin] | None = None,
        max_scan_bytes: int = DEFAULT_MAX_SCAN_BYTES,
        event_seconds: float = DEFAULT_EVENT_SECONDS,
        protection: Any = None,
    ) -> Policy | LoadFailure:
        """Load, validate and compile packs; a :class:`LoadFailure` holds every error.
        ``max_scan_bytes`` caps the tool output post-execute reviews (larger is withheld);
        ``event_seconds`` the evaluation time of one stage of one event (later rules fail closed);
        ``protection`` a deployment's self-protection (``PolicySources.protection()``)."""
        built = build_policy(
            paths,
            params=params,
            engine=engine,
            shadow=shadow,
            param_origins=param_origins,
            protection=protection,
        )
        if isinstance(built, LoadFailure):
            return built
        return cls(built, max_scan_bytes=max_scan_bytes, event_seconds=event_seconds)

    def current(self) -> Decider:
        """The decider for the policy in force now."""
        return self._decider

    @property
    def compiled(self) -> CompiledPolicy:
        """The compiled policy in force."""
        return self.current().policy

    @property
    def digest(self) -> str:
        """``sha256:...`` over packs, params, engine and shadow flag (recorded by the audit log)."""
        return self.compiled.digest

    @property
    def engine_name(self) -> str:
        """The CEL engine in use (``python`` or ``native``)."""
        return self.compiled.engine_name

    @property
    def protection(self) -> Any:
        """The deployment's self-protection in force (``None`` without a deployment)."""
        return self.compiled.protection

    @property
    def packs(self) -> tuple[PackInfo, ...]:
        """The packs in force, in load order."""
        return tuple(PackInfo(pack.path, pack.name, pack.digest) for pack in self.compiled.packs)

    def gate_step(self, event: StepEvent) -> StepVerdict:
        """See :meth:`Decider.gate_step`."""
        return self.current().gate_step(event)

    def pre_execute(self, event: ToolCallEvent) -> ToolCallVerdict:
        """See :meth:`Decider.pre_execute`."""
        return self.current().pre_execute(event)

    def pre_execute_call(self, tool: str, args: Any = None) -> ToolCallVerdict:
        """See :meth:`Decider.pre_execute_call`."""
        return self.current().pre_execute_call(tool, args)

    def guard(self, event: ToolCallEvent) -> GuardVerdict:
        """See :meth:`Decider.guard`."""
        return self.current().guard(event)

    def check_tool_call(self, event: ToolCallEvent) -> ToolCallVerdict:
        """See :meth:`Decider.check_tool_call`."""
        return self.current().check_tool_call(event)

    def review_tool_result(self, event: ToolResultEvent) -> ResultVerdict:
        """See :meth:`Decider.review_tool_result`."""
        return self.current().review_tool_result(event)

    def redact_arguments(self, args: Any) -> tuple[Any, int]:
        """See :meth:`Decider.redact_arguments`."""
        return self.current().redact_arguments(args)
