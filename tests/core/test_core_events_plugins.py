"""Dispatch modes of the event bus and the plugin runtime's scoping (HARNESS.md section 1)."""

from __future__ import annotations

import types
from typing import Any

import pytest
import structlog
from dsh_policy.core import EventBus, Harness, PluginError, define_tool, reply

pytestmark = pytest.mark.anyio


# --- dispatch modes -------------------------------------------------------------------------------


async def test_waterfall_first_registered_is_outermost_and_default_is_innermost() -> None:
    bus = EventBus()
    order: list[str] = []

    async def outer(payload: str, next: Any) -> str:
        order.append("outer in")
        result = await next()
        order.append("outer out")
        return f"outer({result})"

    def inner(payload: str, next: Any) -> Any:
        order.append("inner")
        return next()  # a sync listener may hand back the awaitable

    bus.on("e", outer)
    bus.on("e", inner)
    result = await bus.waterfall("e", ("p",), lambda: "default")
    assert result == "outer(default)"
    assert order == ["outer in", "inner", "outer out"]


async def test_waterfall_prepend_makes_a_listener_outermost() -> None:
    bus = EventBus()
    bus.on("e", lambda next: next())
    bus.on("e", lambda next: "first", prepend=True)
    assert await bus.waterfall("e", (), lambda: "default") == "first"


async def test_waterfall_returning_without_next_short_circuits_everything_after() -> None:
    bus = EventBus()
    ran: list[str] = []
    bus.on("e", lambda next: "short")
    bus.on("e", lambda next: ran.append("later"))
    assert await bus.waterfall("e", (), lambda: ran.append("default")) == "short"
    assert ran == []


async def test_waterfall_exceptions_propagate_to_the_caller() -> None:
    bus = EventBus()
    bus.on("e", lambda next: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        await bus.waterfall("e", (), lambda: None)


async def test_serial_stops_at_the_first_result_that_is_not_none_or_false() -> None:
    bus = EventBus()
    ran: list[int] = []

    def answer(label: int, value: Any) -> Any:
        async def listener() -> Any:
            ran.append(label)
            return value

        return listener

    bus.on("e", answer(1, None))
    bus.on("e", answer(2, False))
    bus.on("e", answer(3, "stop"))
    bus.on("e", answer(4, "too late"))
    assert await bus.serial("e") == "stop"
    assert ran == [1, 2, 3]


async def test_emit_calls_every_listener_and_ignores_results() -> None:
    bus = EventBus()
    seen: list[int] = []
    def first(x: int) -> str:
        seen.append(x)
        return "ignored"

    bus.on("e", first)
    bus.on("e", lambda x: seen.append(x * 2))
    assert await bus.emit("e", 2) is None
    assert seen == [2, 4]


async def test_contained_emit_logs_each_failing_listener_and_runs_the_others() -> None:
    seen: list[str] = []

    def first(x: str) -> None:
        raise ValueError("first broke")

    async def second(x: str) -> None:
        raise KeyError("second broke")

    with structlog.testing.capture_logs() as logs:
        bus = EventBus()
        bus.on("e", first)
        bus.on("e", second)
        bus.on("e", lambda x: seen.append(x))
        assert await bus.emit_contained("e", "payload") == 2
    assert seen == ["payload"]
    failures = [entry for entry in logs if entry["event"] == "listener failed"]
    assert [entry["hook"] for entry in failures] == ["e", "e"]
    assert "first broke" in failures[0]["error"] and "second broke" in failures[1]["error"]


async def test_disposing_during_dispatch_changes_only_later_dispatches() -> None:
    bus = EventBus()
    seen: list[str] = []
    disposers: list[Any] = []

    def once(x: str) -> None:
        seen.append("once")
        disposers[0]()

    disposers.append(bus.on("e", once))
    bus.on("e", lambda x: seen.append("always"))
    await bus.emit("e", "a")
    await bus.emit("e", "b")
    assert seen == ["once", "always", "always"]


# --- plugins --------------------------------------------------------------------------------------


class CountingPlugin:
    name = "counting"

    def __init__(self) -> None:
        self.configs: list[Any] = []

    def apply(self, ctx: Any, config: Any = None) -> None:
        self.configs.append(config)
        ctx.on("tools/pre-execute", lambda ex, next: next())
        ctx.tools.guard(lambda ex: None)
        ctx.tools.register(define_tool("counted", description="c", execute=lambda a, r: 1))
        ctx.provide("counter", self)
        ctx.plugin(NestedPlugin())


class NestedPlugin:
    name = "nested"

    def apply(self, ctx: Any) -> None:
        ctx.on("tools/result", lambda ex, r: None)
        ctx.on("agent/pre-step", lambda e, next: next())


def registrations(harness: Harness) -> tuple[int, int, tuple[str, ...], tuple[str, ...]]:
    runtime = harness.runtime
    return (
        runtime.bus.count(),
        len(runtime.tools.root_scope.guards),
        runtime.tools.names(),
        tuple(runtime.services),
    )


def test_disposing_a_plugin_removes_everything_it_registered_including_nested_plugins() -> None:
    harness = Harness()
    before = registrations(harness)
    plugin = CountingPlugin()
    fiber = harness.plugin(plugin, {"limit": 3})
    assert registrations(harness) == (3, 1, ("counted",), ("counter",))
    assert [child.name for child in fiber.children] == ["nested"]
    fiber.dispose()
    assert registrations(harness) == before
    fiber.dispose()  # idempotent
    harness.plugin(plugin, {"limit": 4})  # reload = dispose + apply
    assert plugin.configs == [{"limit": 3}, {"limit": 4}]


def test_disposing_a_nested_plugin_leaves_its_parent_alone() -> None:
    harness = Harness()
    fiber = harness.plugin(CountingPlugin())
    fiber.children[0].dispose()
    assert harness.runtime.bus.count() == 1
    assert fiber.children == ()
    fiber.dispose()
    assert harness.runtime.bus.count() == 0


def test_a_plugin_that_fails_to_apply_leaves_nothing_behind() -> None:
    def apply(ctx: Any) -> None:
        ctx.on("tools/result", lambda ex, r: None)
        ctx.provide("half", object())
        raise RuntimeError("config missing")

    harness = Harness()
    with pytest.raises(PluginError, match='plugin "broken" failed to apply: config missing'):
        harness.plugin(types.SimpleNamespace(name="broken", apply=apply))
    assert registrations(harness) == (0, 0, (), ())


def test_a_module_can_be_a_plugin() -> None:
    module = types.ModuleType("audit_sink")
    seen: list[str] = []

    def apply(ctx: Any) -> None:
        seen.append(ctx.name)
        ctx.on("tools/result", lambda ex, r: None)

    module.apply = apply  # type: ignore[attr-defined]
    harness = Harness()
    fiber = harness.plugin(module)
    assert seen == ["audit_sink"] and fiber.name == "audit_sink"
    with pytest.raises(PluginError, match="takes no config"):
        harness.plugin(module, {"x": 1})


def test_required_services_are_checked_before_apply() -> None:
    applied: list[bool] = []
    plugin = types.SimpleNamespace(
        name="needs-approval", inject=("approval",), apply=lambda ctx: applied.append(True)
    )
    harness = Harness()
    with pytest.raises(PluginError, match="approval"):
        harness.plugin(plugin)
    assert applied == []
    harness.provide("approval", object())
    harness.plugin(plugin)
    assert applied == [True]


def test_services_are_optional_through_get_and_scoped_to_the_provider() -> None:
    harness = Harness()
    seen: dict[str, Any] = {}

    def consumer(ctx: Any) -> None:
        seen["approval"] = ctx.approval
        seen["missing"] = ctx.get("nothing-here")
        seen["tools"] = ctx.get("tools")
        seen["logger"] = ctx.logger

    service = object()
    provider = harness.plugin(
        types.SimpleNamespace(name="p", apply=lambda ctx: ctx.provide("approval", service))
    )
    harness.plugin(types.SimpleNamespace(name="c", apply=consumer))
    assert seen["approval"] is service and seen["missing"] is None
    assert seen["tools"] is not None and seen["logger"] is not None
    provider.dispose()
    assert harness.ctx.approval is None


def test_service_names_cannot_clash_or_shadow_builtins() -> None:
    harness = Harness()
    harness.provide("approval", object())
    with pytest.raises(PluginError, match="already provided"):
        harness.provide("approval", object())
    with pytest.raises(PluginError, match="reserved"):
        harness.provide("tools", object())


def test_async_apply_is_refused_and_rolled_back() -> None:
    async def apply(ctx: Any) -> None:
        ctx.on("tools/result", lambda ex, r: None)

    harness = Harness()
    with pytest.raises(PluginError, match="synchronous"):
        harness.plugin(types.SimpleNamespace(name="async", apply=apply))
    assert harness.runtime.bus.count() == 0


async def test_agent_scoped_plugins_go_away_with_the_agent(kit: Any) -> None:
    from dsh_policy.core import ScriptedModel

    plugin = CountingPlugin()
    model = ScriptedModel([reply("x")])
    agent = await kit.harness.create_agent(model=model, plugins=[(plugin, {"a": 1})])
    assert kit.bus.count() == 3 and agent.guard_scope.guards
    assert not kit.harness.runtime.tools.root_scope.guards
    agent.close()
    assert kit.bus.count() == 0 and agent.guard_scope.guards == []
    assert kit.harness.runtime.tools.names() == ()


def test_registering_through_a_disposed_context_is_refused() -> None:
    harness = Harness()
    captured: list[Any] = []
    fiber = harness.plugin(types.SimpleNamespace(name="p", apply=captured.append))
    fiber.dispose()
    with pytest.raises(PluginError, match="disposed"):
        captured[0].on("tools/result", lambda ex, r: None)
    assert harness.runtime.bus.count() == 0
