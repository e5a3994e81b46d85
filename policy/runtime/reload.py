"""A Policy that follows edits to its pack files (and deployment file) while the gateway runs.

On the decision path, at most every ``interval`` seconds, it stats the watched files (cheap); only
when a size or mtime changed does it hash the content, and only when the content changed does it
load and compile again. A broken edit - or a deleted file - keeps the last good policy in force
and is reported once per distinct broken state (structlog error plus ``on_reload_failed``, which
the audit wiring records as ``policy_reload_failed``); every policy put in force, the first one
included, is reported through ``on_loaded`` (``policy_loaded``).

The check runs inside the calling decision (no watcher thread to outlive its scope). Concurrent
callers never wait for a reload: whoever holds the check lock reloads, the others decide with the
policy in force.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import structlog
from dsh_policy.policy.cel.engine import CelEngine
from dsh_policy.policy.compiled import CompiledPolicy
from dsh_policy.policy.config import policy_sources
from dsh_policy.policy.decide import DEFAULT_EVENT_SECONDS, DEFAULT_MAX_SCAN_BYTES, Decider, Policy
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.loading import LoadFailure, build_policy, with_protection
from dsh_policy.policy.params import ParamOrigin
from dsh_policy.policy.runtime.policy_changes import PolicyChanges, diff_summaries, policy_summary
from dsh_policy.policy.self_protection import protection_for

_log = structlog.get_logger("dsh_policy.policy.reload")

DEFAULT_INTERVAL = 0.2


@dataclass(frozen=True, slots=True)
class FileState:
    """What a watched file looked like: stat identity and content hash (None = missing)."""

    mtime_ns: int
    size: int
    sha256: str | None


def _stat(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def _hash(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def snapshot(paths: Sequence[str], previous: Mapping[str, FileState] | None = None) -> dict[str, FileState]:
    """States of ``paths``, reusing ``previous`` hashes when stat says nothing changed."""
    out: dict[str, FileState] = {}
    for path in paths:
        stat = _stat(path)
        if stat is None:
            out[path] = FileState(-1, -1, None)
            continue
        before = previous.get(path) if previous else None
        if before is not None and (before.mtime_ns, before.size) == stat:
            out[path] = before
        else:
            out[path] = FileState(stat[0], stat[1], _hash(path))
    return out


def _content(states: Mapping[str, FileState]) -> tuple[tuple[str, str | None], ...]:
    return tuple((path, state.sha256) for path, state in sorted(states.items()))


class ReloadingPolicy(Policy):
    """A :class:`Policy` whose compiled policy is rebuilt when its files change."""

    def __init__(
        self,
        build: Callable[[], CompiledPolicy | LoadFailure],
        watched: Callable[[], Sequence[str]],
        initial: CompiledPolicy,
        *,
        interval: float = DEFAULT_INTERVAL,
        on_loaded: Callable[[CompiledPolicy], Any] | None = None,
        on_reload_failed: Callable[[tuple[PolicyError, ...]], Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_scan_bytes: int = DEFAULT_MAX_SCAN_BYTES,
        event_seconds: float = DEFAULT_EVENT_SECONDS,
        refuse_weakening: Callable[[], bool] | bool = False,
        on_reload_refused: Callable[[CompiledPolicy, PolicyChanges], Any] | None = None,
    ) -> None:
        super().__init__(initial, max_scan_bytes=max_scan_bytes, event_seconds=event_seconds)
        self._refuse_weakening = refuse_weakening
        self._on_reload_refused = on_reload_refused
        self._max_scan_bytes = max_scan_bytes
        self._event_seconds = event_seconds
        self._build = build
        self._watched = watched
        self._interval = interval
        self._on_loaded = on_loaded
        self._on_reload_failed = on_reload_failed
        self._clock = clock
        self._lock = threading.Lock()
        self._states = snapshot(watched())
        self._failed_content: tuple[tuple[str, str | None], ...] | None = None
        self._next_check = clock() + interval
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self._notify(self._on_loaded, initial)

    @classmethod
    def load_watching(
        cls,
        paths: Sequence[str],
        *,
        params: Mapping[str, Any] | None = None,
        param_origins: Mapping[str, ParamOrigin] | None = None,
        engine: CelEngine | str = "auto",
        shadow: bool = False,
        config: str | None = None,
        interval: float = DEFAULT_INTERVAL,
        on_loaded: Callable[[CompiledPolicy], Any] | None = None,
        on_reload_failed: Callable[[tuple[PolicyError, ...]], Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_scan_bytes: int = DEFAULT_MAX_SCAN_BYTES,
        event_seconds: float = DEFAULT_EVENT_SECONDS,
        protect: bool = False,
        audit_path: str | None = None,
        signing_key: str | None = None,
        unprotected: bool = False,
        refuse_weakening: bool | None = None,
        on_reload_refused: Callable[[CompiledPolicy, PolicyChanges], Any] | None = None,
        protection: Any = None,
    ) -> ReloadingPolicy | LoadFailure:
        """Load packs (and optionally a deployment file, which is watched too and re-read on
        change, so its pack list and params can change) and follow their edits.

        ``protect`` attaches the deployment's self-protection to every policy built (``deploy``
        does); ``refuse_weakening`` (default: the deployment file's ``reload.refuse_weakening``,
        as in force) keeps the policy in force when an edit would weaken it, and reports the
        refusal through ``on_reload_refused``."""
        state: dict[str, Any] = {"watched": tuple(paths), "refuse": bool(refuse_weakening)}

        def build() -> CompiledPolicy | LoadFailure:
            if config is None:
                built = build_policy(
                    paths, params=params, engine=engine, shadow=shadow, param_origins=param_origins
                )
                if protection is not None and not isinstance(built, LoadFailure):
                    built = with_protection(built, protection)
                elif protect and not isinstance(built, LoadFailure):
                    built = with_protection(
                        built,
                        protection_for(
                            packs=paths,
                            audit_log=audit_path,
                            signing_key=signing_key,
                            enabled=not unprotected,
                        ),
                    )
                return built
            sources = policy_sources(paths, config=config, unprotected=unprotected)
            if isinstance(sources, list):
                return LoadFailure(tuple(sources))
            state["watched"] = sources.watched
            state["next_refuse"] = (
                refuse_weakening
                if refuse_weakening is not None
                else bool(sources.config and sources.config.reload.refuse_weakening)
            )
            # Explicit arguments beat the deployment file, as flags do on the command line.
            merged = replace(
                sources,
                params={**sources.params, **(params or {})},
                engine=sources.engine if engine == "auto" else str(engine),
                shadow=shadow or sources.shadow,
                param_origins={**sources.param_origins, **(param_origins or {})},
            )
            if protection is not None:
                built = merged.build(protect=False)
                return built if isinstance(built, LoadFailure) else with_protection(built, protection)
            return merged.build(protect=protect, audit_path=audit_path, signing_key=signing_key)

        first = build()
        if isinstance(first, LoadFailure):
            return first
        state["refuse"] = state.get("next_refuse", state["refuse"])

        def refusing() -> bool:
            # The setting of the policy *in force* decides, so an edit cannot switch it off and
            # weaken in one step; it moves on only with a reload that was put in force.
            return bool(state["refuse"])

        def loaded(compiled: CompiledPolicy) -> None:
            state["refuse"] = state.get("next_refuse", state["refuse"])
            if on_loaded is not None:
                on_loaded(compiled)

        return cls(
            build,
            lambda: state["watched"],
            first,
            interval=interval,
            on_loaded=loaded,
            on_reload_failed=on_reload_failed,
            clock=clock,
            max_scan_bytes=max_scan_bytes,
            event_seconds=event_seconds,
            refuse_weakening=refusing,
            on_reload_refused=on_reload_refused,
        )

    @classmethod
    def load(
        cls,
        paths: Sequence[str | os.PathLike[str]],
        *,
        params: Mapping[str, Any] | None = None,
        engine: CelEngine | str = "auto",
        shadow: bool = False,
        param_origins: Mapping[str, ParamOrigin] | None = None,
        max_scan_bytes: int = DEFAULT_MAX_SCAN_BYTES,
        event_seconds: float = DEFAULT_EVENT_SECONDS,
        protection: Any = None,
    ) -> ReloadingPolicy | LoadFailure:
        """:meth:`Policy.load`, watching the packs (see :meth:`load_watching` for callbacks)."""
        return cls.load_watching(
            [str(path) for path in paths],
            protection=protection,
            params=params,
            param_origins=param_origins,
            engine=engine,
            shadow=shadow,
            max_scan_bytes=max_scan_bytes,
            event_seconds=event_seconds,
        )

    def current(self) -> Decider:
        """The decider in force. Without a background watcher, a due reload check runs first (on
        the caller's thread); with one, this is a single attribute read."""
        if self._watcher is None and self._clock() >= self._next_check:
            self.check_now(blocking=False)
        return self._decider

    def watch_in_background(self) -> None:
        """Take reloads off the decision path: a thread checks the files every ``interval``,
        compiles an edit there, and swaps the new decider in with one assignment (decisions
        already under way keep the decider they pinned). :meth:`close` stops and joins it."""
        if self._watcher is not None:
            return
        self._stop.clear()
        self._watcher = threading.Thread(target=self._watch, name="dsh-policy-reload", daemon=True)
        self._watcher.start()

    def _watch(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self.check_now()
            except Exception as exc:  # a watcher bug must never take the last good policy away
                _log.error("policy reload check crashed", exc_info=exc)

    def close(self) -> None:
        """Stop the background watcher, if one runs (the policy in force stays usable)."""
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            self._stop.set()
            watcher.join()

    def check_now(self, *, blocking: bool = True) -> bool:
        """Check the watched files now; True when a new policy was put in force."""
        if not self._lock.acquire(blocking=blocking):
            return False
        try:
            self._next_check = self._clock() + self._interval
            states = snapshot(self._watched(), self._states)
            if _content(states) == _content(self._states):
                self._states = states
                return False
            return self._reload(states)
        finally:
            self._lock.release()

    def _reload(self, states: dict[str, FileState]) -> bool:
        if _content(states) == self._failed_content:
            return False  # the same broken or refused edit: nothing new to build
        built = self._safe_build()
        if isinstance(built, LoadFailure):
            content = _content(states)
            if content != self._failed_content:
                self._failed_content = content
                _log.error(
                    "policy reload failed; keeping the last good policy",
                    digest=self._decider.policy.digest,
                    errors=[str(error) for error in built.errors],
                )
                self._notify(self._on_reload_failed, built.errors)
            return False
        changes = diff_summaries(policy_summary(self._decider.policy), policy_summary(built))
        refuse = self._refuse_weakening() if callable(self._refuse_weakening) else self._refuse_weakening
        if changes.weakening and refuse:
            content = _content(states)
            if content != self._failed_content:
                self._failed_content = content
                _log.error(
                    "policy reload refused: it would weaken enforcement; keeping the policy in force",
                    digest=self._decider.policy.digest,
                    weakened=list(changes.weakened),
                )
                if self._on_reload_refused is not None:
                    try:
                        self._on_reload_refused(built, changes)
                    except Exception as exc:
                        _log.error("policy reload callback failed", exc_info=exc)
            return False
        # Re-snapshot after a success: the build may have changed the watched set (config edits).
        self._states = snapshot(self._watched(), states)
        self._failed_content = None
        previous = self._decider.policy.digest
        self._decider = Decider(built, max_scan_bytes=self._max_scan_bytes, event_seconds=self._event_seconds)
        _log.info("policy reloaded", previous=previous, digest=built.digest)
        self._notify(self._on_loaded, built)
        return True

    def _safe_build(self) -> CompiledPolicy | LoadFailure:
        try:
            return self._build()
        except Exception as exc:  # a loader bug must not take the gateway down with it
            _log.error("policy reload crashed", exc_info=exc)
            return LoadFailure((PolicyError("<reload>", 0, 0, f"internal error: {exc}"),))

    @staticmethod
    def _notify(callback: Callable[[Any], Any] | None, value: Any) -> None:
        if callback is None:
            return
        try:
            callback(value)
        except Exception as exc:
            _log.error("policy reload callback failed", exc_info=exc)
