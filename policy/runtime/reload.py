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
from dataclasses import dataclass
from typing import Any

import structlog
from dsh_policy.policy.cel.engine import CelEngine
from dsh_policy.policy.compile import CompiledPolicy, ParamOrigin
from dsh_policy.policy.config import policy_sources
from dsh_policy.policy.decide import DEFAULT_EVENT_SECONDS, DEFAULT_MAX_SCAN_BYTES, Decider, Policy
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.loading import LoadFailure, build_policy

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
    ) -> None:
        super().__init__(initial, max_scan_bytes=max_scan_bytes, event_seconds=event_seconds)
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
    ) -> ReloadingPolicy | LoadFailure:
        """Load packs (and optionally a deployment file, which is watched too and re-read on
        change, so its pack list and params can change) and follow their edits."""
        state: dict[str, Sequence[str]] = {"watched": tuple(paths)}

        def build() -> CompiledPolicy | LoadFailure:
            if config is None:
                return build_policy(
                    paths, params=params, engine=engine, shadow=shadow, param_origins=param_origins
                )
            sources = policy_sources(paths, config=config)
            if isinstance(sources, list):
                return LoadFailure(tuple(sources))
            state["watched"] = sources.watched
            # Explicit arguments beat the deployment file, as flags do on the command line.
            return build_policy(
                sources.packs,
                params={**sources.params, **(params or {})},
                engine=sources.engine if engine == "auto" else engine,
                shadow=shadow or sources.shadow,
                param_origins={**sources.param_origins, **(param_origins or {})},
            )

        first = build()
        if isinstance(first, LoadFailure):
            return first
        return cls(
            build,
            lambda: state["watched"],
            first,
            interval=interval,
            on_loaded=on_loaded,
            on_reload_failed=on_reload_failed,
            clock=clock,
            max_scan_bytes=max_scan_bytes,
            event_seconds=event_seconds,
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
    ) -> ReloadingPolicy | LoadFailure:
        """:meth:`Policy.load`, watching the packs (see :meth:`load_watching` for callbacks)."""
        return cls.load_watching(
            [str(path) for path in paths],
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
        # Re-snapshot after a success: the build may have changed the watched set (config edits).
        self._states = snapshot(self._watched(), states)
        self._failed_content = None
        previous = self._decider.policy.digest
        self._decider = Decider(
            built, max_scan_bytes=self._max_scan_bytes, event_seconds=self._event_seconds
        )
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
