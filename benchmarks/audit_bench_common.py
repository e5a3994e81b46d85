"""Timings shared by the audit benchmark's modules: wall and process CPU per run, rows of runs."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

APPEND_CPU_TARGET = 0.35  # batch appends / raw write + group fsync, CPU
BATCH_RECORDS = 256  # the writer's default group commit


@dataclass(frozen=True, slots=True)
class Timing:
    """One run: wall seconds and process CPU seconds."""

    wall: float
    cpu: float


def measure(action: Callable[[], object]) -> Timing:
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return Timing(time.perf_counter() - wall, time.process_time() - cpu)


@dataclass(frozen=True, slots=True)
class Row:
    what: str
    records: int
    runs: tuple[Timing, ...]
    megabytes: float | None = None

    def best(self, clock: str) -> float:
        return min(getattr(run, clock) for run in self.runs)

    def median(self, clock: str) -> float:
        values = sorted(getattr(run, clock) for run in self.runs)
        return values[len(values) // 2]

    def rate(self, clock: str) -> float:
        return self.records / max(self.best(clock), 1e-9)

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {"what": self.what, "records": self.records}
        for clock in ("cpu", "wall"):
            row[f"{clock}_seconds_best"] = self.best(clock)
            row[f"{clock}_records_per_s_best"] = self.rate(clock)
            row[f"{clock}_records_per_s_median"] = self.records / max(self.median(clock), 1e-9)
            if self.megabytes is not None:
                row[f"{clock}_mb_per_s_best"] = self.megabytes / max(self.best(clock), 1e-9)
        return row
