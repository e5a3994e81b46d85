"""Cost of the gateway's decision path per tool call and per result, for 10, 100 and 1,000 rules,
on every installed CEL engine, against hand-written Python doing the same checks and against the
harness with no gateway.

Run: ``python benchmarks/bench_gateway.py [--quick]``. Prints a table and writes
``benchmarks/results/gateway.json``. Everything is measured in one run (best of several rounds),
so a noisy shared machine moves all sides together; the ratios are what to compare.
``--shipped-only`` times the shipped-pack cells alone (below; every engine, about a minute) and
writes ``benchmarks/results/gateway_shipped.json``.

The packs are synthetic but shaped like real ones: rules cycle through ten templates (shell
``commands`` checks, an ``rm -rf /`` guard, ``path.within``, ``url.host`` allow-lists, constant
``matches``, a pack variable, preset and pattern redactions, a block on a private key), each with
its own constants, spread evenly over the pack's tools with ``match: {tools: [...]}``. A tool gets
ten rules in every configuration but "100 rules on 1 tool", so a call evaluates the same ten rules
(seven at pre-execute/guard, three at post-execute) whether the pack holds 10, 100 or 1,000.

The hand-written baseline is the same rules written as Python functions over the same helper
functions (``policy/cel/functions.py``, ``policy/detectors.py``), indexed by tool in a dict and
combined the same way (deny > ask > allow, any guard denies; every redaction applies in order to
text and value). Before timing, both sides decide a set of events and must agree.

Then the shipped packs (``rules/``): the recommended set against the baseline pack as it was before
issue 13 (frozen in ``benchmarks/reference/``) and the baseline of today, on a mix of everyday shell
calls, also interleaved in one run; the target is the recommended set within 2x of the old baseline.
Beside them, every shipped pack against every pack shipped before the threat-coverage work (frozen
in ``benchmarks/reference/packs-before-issue-24/``), both on today's code: target at most 1.3x.

Measured per configuration:

- ``call``: ``Policy.pre_execute`` + ``Policy.guard`` on one event (what the gateway's
  ``tools/pre-execute`` listener and guard run per call);
- ``result``: ``Policy.review_tool_result`` on a ~1 KB output holding one AWS key;
- ``harness``: one ``ToolRegistry.execute`` with the gateway plugin installed, end to end
  (pre-execute, guard, dispatch, post-execute with redaction, result), next to the same call on a
  harness with no gateway.

All cells of all configurations are timed in one interleaved run (min of rounds). Then the python
engine's 100-rule call is profiled (cProfile) and its own time grouped by where it goes.

Loading the shipped packs (``rules/*.yaml``) is timed on every engine with the load-time type
checker and with it patched out, interleaved, in CPU time, so its cost is a ratio from one run
(target: at most 1.2x).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import re2
import yaml
from dsh_policy.core import Harness, define_tool
from dsh_policy.core.frozen import freeze_json
from dsh_policy.policy import detectors
from dsh_policy.policy.cel import available_engines
from dsh_policy.policy.cel.functions import path_within, re2_matches, shell_commands, url_host
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent, ToolCallVerdict, ToolResultEvent
from dsh_policy.policy.loading import LoadFailure, build_policy
from dsh_policy.policy.runtime.gateway import PolicyGateway

RESULTS = Path(__file__).resolve().parent / "results" / "gateway.json"
SHIPPED_RESULTS = RESULTS.with_name("gateway_shipped.json")
"""Where ``--shipped-only`` writes (the full run's file is left as it was)."""
SHIPPED_PACKS = sorted(
    path
    for path in (Path(__file__).resolve().parents[1] / "rules").glob("*.yaml")
    if not path.name.endswith(".cases.yaml")
)
RULES_PER_TOOL = 10

# (rules, tools): 10 rules on one tool, 100 rules on one tool (every call evaluates all of them),
# then 100 and 1,000 rules spread so each tool has the same ten rules.
CONFIGS: tuple[tuple[int, int], ...] = ((10, 1), (100, 1), (100, 10), (1000, 100))

PARAMS = {
    "workspace": "/workspace",
    "allowed_hosts": ["github.com", "pypi.org", "registry.npmjs.org", "docs.python.org"],
}
PRESETS = ("aws-access-key", "github-token", "slack-token", "stripe-key", "google-api-key")

ARGS: Mapping[str, Any] = {
    "command": "cd /workspace && git status --short && make -j4 test 2>&1 | tee build.log",
    "path": "/workspace/src/../src/main.py",
    "url": "https://github.com/org/repo/pulls?state=open",
}
OUTPUT = (
    "total 48\n"
    + "".join(f"-rw-r--r-- 1 dev dev {1000 + i} Jan  1 12:00 module_{i}.py\n" for i in range(16))
    + "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n"
    + "".join(f"INFO step {i}: compiled target_{i} in {i * 3} ms\n" for i in range(12))
)


# --- the synthetic rules, once as CEL and once as Python -----------------------------------------


@dataclass(frozen=True, slots=True)
class HandRule:
    """A rule as hand-written Python: ``check(args, text)`` says whether it matches."""

    id: str
    stage: str
    effect: str
    check: Callable[[Mapping[str, Any], str], bool] | None
    redactions: tuple[tuple[str | None, Any, str], ...] = ()


def _has_command(name: str) -> Callable[[Mapping[str, Any], str], bool]:
    return lambda a, _t: "command" in a and any(c[0] == name for c in shell_commands(a["command"]))


def _rm_root(program: str) -> Callable[[Mapping[str, Any], str], bool]:
    def check(a: Mapping[str, Any], _t: str) -> bool:
        return "command" in a and any(
            c[0] == program
            and any(re2_matches(x, "^-[a-zA-Z]*[rR]") or x == "--recursive" for x in c)
            and any(x in ("/", "/*", "~", "~/") for x in c)
            for c in shell_commands(a["command"])
        )

    return check


def _template(k: int, tool: str) -> tuple[dict[str, Any], HandRule]:
    """Rule ``k`` of a pack (template ``k % 10``) as a YAML rule and as hand-written Python."""
    kind = k % RULES_PER_TOOL
    rule: dict[str, Any] = {"id": f"r{k}", "stage": "pre-execute", "match": {"tools": [tool]}}
    hand_id = f"synthetic/r{k}"
    if kind == 0:
        name = f"forbidden{k}"
        rule.update(
            stage="guard",
            when=f'has(args.command) && shell.commands(args.command).exists(c, c[0] == "{name}")',
        )
        return rule, HandRule(hand_id, "guard", "deny", _has_command(name))
    if kind == 1:
        program = f"rm{k}"
        rule.update(
            stage="guard",
            when=(
                f'has(args.command) && shell.commands(args.command).exists(c, c[0] == "{program}"'
                ' && c.exists(a, a.matches("^-[a-zA-Z]*[rR]") || a == "--recursive")'
                ' && c.exists(a, a in ["/", "/*", "~", "~/"]))'
            ),
        )
        return rule, HandRule(hand_id, "guard", "deny", _rm_root(program))
    if kind == 2:
        root = f"/protected{k}"
        rule.update(decision="deny", when=f'has(args.path) && path.within(args.path, "{root}")')
        return rule, HandRule(
            hand_id, "pre-execute", "deny", lambda a, _t: "path" in a and path_within(a["path"], root)
        )
    if kind == 3:
        rule.update(decision="deny", when="has(args.path) && !path.within(args.path, params.workspace)")
        workspace = PARAMS["workspace"]
        return rule, HandRule(
            hand_id,
            "pre-execute",
            "deny",
            lambda a, _t: "path" in a and not path_within(a["path"], workspace),
        )
    if kind == 4:
        hosts = [f"mirror{k}.example.com", "github.com", "pypi.org"]
        rule.update(decision="ask", when=f"has(args.url) && !(url.host(args.url) in {json.dumps(hosts)})")
        return rule, HandRule(
            hand_id, "pre-execute", "ask", lambda a, _t: "url" in a and url_host(a["url"]) not in hosts
        )
    if kind == 5:
        pattern = rf"(^|[;&|]\s*)curl{k}\s+[^|]*\|\s*(ba)?sh"
        rule.update(decision="deny", when=f"has(args.command) && args.command.matches({json.dumps(pattern)})")
        return rule, HandRule(
            hand_id,
            "pre-execute",
            "deny",
            lambda a, _t: "command" in a and re2_matches(a["command"], pattern),
        )
    if kind == 6:
        prefix = f"sudo{k} "
        rule.update(decision="ask", when=f'vars.command.startsWith("{prefix}")')
        return rule, HandRule(
            hand_id, "pre-execute", "ask", lambda a, _t: a.get("command", "").startswith(prefix)
        )
    rule["stage"] = "post-execute"
    if kind == 7:
        preset = PRESETS[k // RULES_PER_TOOL % len(PRESETS)]
        rule["redact"] = [{"preset": preset}]
        return rule, HandRule(hand_id, "post-execute", "accept", None, ((preset, None, ""),))
    if kind == 8:
        pattern = f"tok{k}_[A-Za-z0-9]{{20}}"
        replace = f"[REDACTED:token-{k}]"
        rule["redact"] = [{"pattern": pattern, "replace": replace}]
        return rule, HandRule(
            hand_id, "post-execute", "accept", None, ((None, re2.compile(pattern), replace),)
        )
    marker = f"BEGIN KEY{k} PRIVATE KEY-----"
    rule.update(decision="block", when=f'result.text.contains("{marker}")')
    return rule, HandRule(hand_id, "post-execute", "block", lambda _a, t: marker in t)


def synthetic_pack(rules: int, tools: int) -> tuple[dict[str, Any], dict[str, list[HandRule]]]:
    """A rule pack document and its hand-written twin, indexed by tool."""
    yaml_rules: list[dict[str, Any]] = []
    hand: dict[str, list[HandRule]] = {}
    per_tool = rules // tools
    for k in range(rules):
        tool = f"tool_{k // per_tool}"
        yaml_rule, hand_rule = _template(k, tool)
        yaml_rules.append(yaml_rule)
        hand.setdefault(tool, []).append(hand_rule)
    document = {
        "apiVersion": "dsh-policy/v1",
        "kind": "RulePack",
        "metadata": {"name": "synthetic", "version": "1.0.0"},
        "spec": {
            "defaults": {"mode": "enforce", "on_error": "deny", "decision": "allow"},
            "params": PARAMS,
            "variables": [{"name": "command", "expression": 'has(args.command) ? args.command : ""'}],
            "rules": yaml_rules,
        },
    }
    return document, hand


# --- the hand-written gateway -------------------------------------------------------------------

_RANK = {"deny": 2, "ask": 1, "allow": 0}


class HandWrittenGateway:
    """The same checks as the synthetic pack, as plain Python over the same helpers."""

    def __init__(self, rules: Mapping[str, Sequence[HandRule]]) -> None:
        self.call_rules = {
            tool: tuple(r for r in found if r.stage in ("pre-execute", "guard"))
            for tool, found in rules.items()
        }
        self.result_rules = {
            tool: tuple(r for r in found if r.stage == "post-execute") for tool, found in rules.items()
        }

    def check_call(self, tool: str, args: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
        """(decision, deciding rule ids): a guard denies; else deny > ask > allow."""
        guards: list[str] = []
        best, deciding = "allow", []
        for rule in self.call_rules.get(tool, ()):
            assert rule.check is not None
            if not rule.check(args, ""):
                continue
            if rule.stage == "guard":
                guards.append(rule.id)
            elif _RANK[rule.effect] > _RANK[best]:
                best, deciding = rule.effect, [rule.id]
            elif rule.effect == best:
                deciding.append(rule.id)
        if guards:
            return "deny", tuple(guards)
        return best, tuple(deciding)

    def review(self, tool: str, args: Mapping[str, Any], text: str, value: Any) -> tuple[str, str, Any]:
        """(decision, text, value): a block wins; else every redaction, in order, on both."""
        rules = self.result_rules.get(tool, ())
        for rule in rules:
            if rule.check is not None and rule.check(args, text):
                return "block", text, value
        for rule in rules:
            for preset, pattern, replace in rule.redactions:
                if preset is not None:
                    text = detectors.redact(text, [preset])[0]
                    value = detectors.redact(value, [preset])[0] if isinstance(value, str) else value
                else:
                    text = pattern.sub(replace, text)
                    value = pattern.sub(replace, value) if isinstance(value, str) else value
        return "accept", text, value


# --- timing -------------------------------------------------------------------------------------


def _batch_sizes(functions: Mapping[str, Callable[[], Any]], seconds: float) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for name, function in functions.items():
        function()  # warm-up: memoized tool selections, lazily built caches
        started = time.perf_counter()
        function()
        sizes[name] = max(1, int(seconds / max(time.perf_counter() - started, 1e-7)))
    return sizes


def interleaved_best(
    functions: Mapping[str, Callable[[], Any]], *, rounds: int, budget: float
) -> dict[str, float]:
    """Min over ``rounds`` of the mean seconds per call of each function, the functions taking
    turns within every round so that load from other processes hits all of them alike (the
    ratios between them are what the benchmark reports). Each cell gets about ``budget`` s."""
    sizes = _batch_sizes(functions, budget / rounds)
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(rounds):
        for name, function in functions.items():
            started = time.perf_counter()
            for _ in range(sizes[name]):
                function()
            seconds = (time.perf_counter() - started) / sizes[name]
            ROUNDS.setdefault(name, []).append(seconds)
            best[name] = min(best[name], seconds)
    return best


ROUNDS: dict[str, list[float]] = {}
"""Every cell's seconds per call in each round (the targets use ratios within a round)."""


def round_ratio(numerator: str, denominator: str) -> float:
    """The median over rounds of ``numerator / denominator`` measured in the same round, which
    cancels the load of a shared machine drifting between rounds."""
    import statistics

    pairs = zip(ROUNDS[numerator], ROUNDS[denominator], strict=True)
    return statistics.median(a / b for a, b in pairs)


def _register_tools(harness: Harness, tools: int) -> None:
    for index in range(tools):
        harness.tools.register(
            define_tool(f"tool_{index}", description="synthetic", execute=lambda args, run: OUTPUT)
        )


def harness_caller(policy: Policy | None, tools: int) -> Callable[[], Awaitable[None]]:
    """One ``ToolRegistry.execute`` of ``tool_0`` on a harness, gateway installed or not."""
    harness = Harness()
    _register_tools(harness, tools)
    if policy is not None:
        harness.plugin(PolicyGateway(policy))
    registry = harness.runtime.tools
    counter = 0

    async def one() -> None:
        nonlocal counter
        counter += 1
        result = await registry.execute("tool_0", dict(ARGS), call_id=f"c{counter}")
        if policy is not None and "AKIAIOSFODNN7EXAMPLE" in result.text:
            raise SystemExit("the gateway did not redact the AWS key in the harness run")

    return one


def interleaved_best_async(
    callers: Mapping[str, Callable[[], Awaitable[None]]], *, rounds: int, budget: float
) -> dict[str, float]:
    """:func:`interleaved_best` for coroutines, all in one event loop."""

    async def measure() -> dict[str, float]:
        sizes: dict[str, int] = {}
        for name, one in callers.items():
            await one()
            started = time.perf_counter()
            await one()
            sizes[name] = max(1, int(budget / rounds / max(time.perf_counter() - started, 1e-7)))
        best = dict.fromkeys(callers, float("inf"))
        for _ in range(rounds):
            for name, one in callers.items():
                started = time.perf_counter()
                for _ in range(sizes[name]):
                    await one()
                best[name] = min(best[name], (time.perf_counter() - started) / sizes[name])
        return best

    return anyio.run(measure)


# --- agreement ----------------------------------------------------------------------------------


def _probe_args(tools: int) -> list[tuple[str, dict[str, Any]]]:
    """Events that make each template decide on a few tools, plus the benign call."""
    probes: list[tuple[str, dict[str, Any]]] = [("tool_0", dict(ARGS))]
    per_tool = RULES_PER_TOOL
    for index in sorted({0, tools // 2, tools - 1}):
        base = index * per_tool
        probes += [
            (f"tool_{index}", {"command": f"ls && forbidden{base} now"}),
            (f"tool_{index}", {"command": f"sudo rm{base + 1} -rf /"}),
            (f"tool_{index}", {"path": f"/protected{base + 2}/../protected{base + 2}/x"}),
            (f"tool_{index}", {"path": "/workspace/../etc/passwd"}),
            (f"tool_{index}", {"url": "http://user@github.com@evil.example/x"}),
            (f"tool_{index}", {"command": f"curl{base + 5} -s http://x | bash"}),
            (f"tool_{index}", {"command": f"sudo{base + 6} make"}),
            (f"tool_{index}", {"command": "echo hi", "url": f"https://mirror{base + 4}.example.com"}),
        ]
    return probes


def verify_agreement(policy: Policy, hand: HandWrittenGateway, tools: int, label: str) -> None:
    """Both sides must decide every probe the same way, or the comparison means nothing."""
    for tool, args in _probe_args(tools):
        verdict: ToolCallVerdict = policy.check_tool_call(ToolCallEvent(tool=tool, args=freeze_json(args)))
        expected = hand.check_call(tool, args)
        if (verdict.decision, tuple(sorted(verdict.rules))) != (expected[0], tuple(sorted(expected[1]))):
            raise SystemExit(
                f"{label}: {tool} {args}: gateway {verdict.decision} {verdict.rules}, {expected}"
            )
    for tool, text in (("tool_0", OUTPUT), ("tool_0", OUTPUT + "-----BEGIN KEY9 PRIVATE KEY-----\n")):
        review = policy.review_tool_result(
            ToolResultEvent(ToolCallEvent(tool=tool, args=freeze_json(ARGS)), text=text, value=text)
        )
        decision, hand_text, hand_value = hand.review(tool, ARGS, text, text)
        got_text = review.redacted_text if review.redacted_text is not None else text
        got_value = review.redacted_value if review.value_redacted else text
        same = review.decision == decision and (
            decision == "block" or (got_text, got_value) == (hand_text, hand_value)
        )
        if not same:
            raise SystemExit(f"{label}: result review differs: gateway {review.decision}, hand {decision}")


# --- where the python engine's time goes ---------------------------------------------------------

# Where a function lives -> what it is, for a profile read at a glance.
_PROFILE_GROUPS: tuple[tuple[str, str], ...] = (
    ("/policy/cel/functions.py", "gateway helpers (path, url, matches)"),
    ("/cmdline/", "gateway helpers (shell.commands and the other command-line readers)"),
    ("/policy/detectors.py", "redaction detectors"),
    ("/policy/redaction.py", "redaction detectors"),
    ("/policy/cel/closure_", "closure compiler: compiled CEL"),
    ("/policy/cel/python_", "interpreter: our overrides (dispatch, budget, names, ops, calls)"),
    ("/celpy/", "interpreter: cel-python's own methods (member, activations, types)"),
    ("/lark/", "interpreter: lark tree dispatch"),
    ("typing.py", "interpreter: cel-python's runtime typing.cast subscripts"),
    ("logging/", "interpreter: cel-python's disabled debug logging calls"),
    ("/policy/decide/", "decision path (scope, trace, combination)"),
    ("/policy/compile.py", "decision path (scope, trace, combination)"),
    ("/policy/plans.py", "decision path (scope, trace, combination)"),
)


def profile_breakdown(function: Callable[[], Any], calls: int = 20) -> dict[str, float]:
    """Share of ``function``'s own-time per group (cProfile, ``calls`` calls), largest first."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        function()
    profiler.disable()
    stats = pstats.Stats(profiler)
    groups: dict[str, float] = {}
    total = 0.0
    for (filename, _line, _name), (_cc, _nc, own, _cum, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        group = next((label for part, label in _PROFILE_GROUPS if part in filename), "other (builtins, C)")
        groups[group] = groups.get(group, 0.0) + own
        total += own
    shares = {label: own / total for label, own in sorted(groups.items(), key=lambda item: -item[1])}
    print("\nauto engine, 100 rules on one tool, one call (pre-execute + guard): share of own time")
    for label, share in shares.items():
        print(f"  {share * 100:5.1f}%  {label}")
    return shares


# --- the run ------------------------------------------------------------------------------------


def load(directory: Path, rules: int, tools: int, engine: str) -> Policy:
    path = directory / f"synthetic-{rules}-{tools}.yaml"
    policy = Policy.load([path], engine=engine)
    if isinstance(policy, LoadFailure):
        raise SystemExit(f"synthetic pack does not load on {engine}:\n{policy}")
    return policy


@dataclass
class PreparedConfig:
    """One configuration ready to time: its row of facts and the callables to measure."""

    row: dict[str, Any]
    functions: dict[str, Callable[[], Any]]
    callers: dict[str, Callable[[], Awaitable[None]]]
    policies: dict[str, Policy]


def prepare_config(directory: Path, rules: int, tools: int, engines: Sequence[str]) -> PreparedConfig:
    """Write and load the pack on every engine, check both sides agree, build the callables."""
    document, hand_rules = synthetic_pack(rules, tools)
    (directory / f"synthetic-{rules}-{tools}.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    hand = HandWrittenGateway(hand_rules)
    args = dict(ARGS)
    call_event = ToolCallEvent(tool="tool_0", args=freeze_json(dict(ARGS)), call_id="c1")
    result_event = ToolResultEvent(call_event, text=OUTPUT, value=OUTPUT)
    row: dict[str, Any] = {
        "rules": rules,
        "tools": tools,
        "call_rules_evaluated": len(hand.call_rules["tool_0"]),
        "result_rules_evaluated": len(hand.result_rules["tool_0"]),
    }
    functions: dict[str, Callable[[], Any]] = {
        "hand_call": lambda: hand.check_call("tool_0", args),
        "hand_result": lambda: hand.review("tool_0", args, OUTPUT, OUTPUT),
    }
    callers: dict[str, Callable[[], Awaitable[None]]] = {"harness_alone": harness_caller(None, tools)}
    policies: dict[str, Policy] = {}
    for engine in engines:
        started = time.perf_counter()
        policy = policies[engine] = load(directory, rules, tools, engine)
        row[f"{engine}_compile_s"] = time.perf_counter() - started
        verify_agreement(policy, hand, tools, f"{rules} rules/{tools} tools on {engine}")

        def call(policy: Policy = policy) -> None:
            policy.pre_execute(call_event)
            policy.guard(call_event)

        def review(policy: Policy = policy) -> None:
            policy.review_tool_result(result_event)

        functions[f"{engine}_call"] = call
        functions[f"{engine}_result"] = review
        callers[f"{engine}_harness"] = harness_caller(policy, tools)
    return PreparedConfig(row, functions, callers, policies)


def measure(
    prepared: Sequence[PreparedConfig], engines: Sequence[str], *, rounds: int, budget: float
) -> list[dict[str, Any]]:
    """Time every cell of every configuration in one interleaved run (so ratios across
    configurations, such as 1,000 rules vs 10, are as fair as ratios within one)."""
    functions = {
        f"{i}:{name}": f for i, config in enumerate(prepared) for name, f in config.functions.items()
    }
    callers = {f"{i}:{name}": c for i, config in enumerate(prepared) for name, c in config.callers.items()}
    timings = interleaved_best(functions, rounds=rounds, budget=budget)
    timings.update(interleaved_best_async(callers, rounds=rounds, budget=budget))
    rows: list[dict[str, Any]] = []
    for index, config in enumerate(prepared):
        row = dict(config.row)
        prefix = f"{index}:"
        row.update(
            {f"{key[len(prefix) :]}_us": s * 1e6 for key, s in timings.items() if key.startswith(prefix)}
        )
        for engine in engines:
            row[f"{engine}_call_x_hand"] = row[f"{engine}_call_us"] / row["hand_call_us"]
            row[f"{engine}_result_x_hand"] = row[f"{engine}_result_us"] / row["hand_result_us"]
            row[f"{engine}_harness_x_alone"] = row[f"{engine}_harness_us"] / row["harness_alone_us"]
        rows.append(row)
    return rows


# --- the shipped packs ----------------------------------------------------------------------------

RULES = Path(__file__).resolve().parents[1] / "rules"
REFERENCE_BASELINE = Path(__file__).resolve().parent / "reference" / "baseline-before-issue-13.yaml"
"""The baseline pack as shipped before issue 13 (frozen), the reference point of its cost target."""
REFERENCE_BEFORE_24 = sorted((REFERENCE_BASELINE.parent / "packs-before-issue-24").glob("*.yaml"))
"""Every pack shipped before the threat-coverage work (frozen at 4c369dd, 2026-12-02): the point its
decision-cost target (at most 1.3x) is measured from, on today's code, so the ratio is the packs'."""

RECOMMENDED = ("baseline", "secrets", "injection", "infrastructure", "databases", "host")
"""The recommended set (examples/gateway.yaml enables it)."""

SHELL_CALLS: tuple[str, ...] = (
    "git status --short",
    "git commit -m 'Fix the login redirect'",
    "npm test -- --coverage",
    "cd /workspace && make -j4 test 2>&1 | tee build.log",
    "grep -rn TODO src | head -20",
    "python -m pytest -q tests/test_api.py",
    "ls -la",
    "kubectl get pods -n web",
    "terraform plan -out tfplan",
    "psql -c 'SELECT count(*) FROM users'",
    'python3 -c \'import json; print(json.load(open("package.json"))["version"])\'',
    "docker compose up -d --build",
)
"""Everyday shell calls, the common case of an agent's tool calls, each timed through pre-execute
and guard."""


def shipped_pack_functions(engines: Sequence[str]) -> dict[str, Callable[[], Any]]:
    """One callable per engine and pack set: every call of SHELL_CALLS through the whole gate."""
    sets = {
        "baseline-before": [REFERENCE_BASELINE],
        "baseline": [RULES / "baseline.yaml"],
        "recommended": [RULES / f"{name}.yaml" for name in RECOMMENDED],
        "shipped-before-24": REFERENCE_BEFORE_24,
        "shipped": SHIPPED_PACKS,
    }
    events = [ToolCallEvent(tool="shell", args=freeze_json({"command": c}), call_id="c") for c in SHELL_CALLS]
    functions: dict[str, Callable[[], Any]] = {}
    for engine in engines:
        for label, packs in sets.items():
            policy = Policy.load(packs, engine=engine)
            if isinstance(policy, LoadFailure):
                raise SystemExit(f"{label} does not load on {engine}:\n{policy}")

            def calls(policy: Policy = policy) -> None:
                for event in events:
                    policy.pre_execute(event)
                    policy.guard(event)

            functions[f"{engine}:{label}"] = calls
    return functions


def measure_shipped_packs(engines: Sequence[str], *, rounds: int, budget: float) -> dict[str, Any]:
    """Per-call cost of the shipped pack sets, side by side in one interleaved run."""
    timings = interleaved_best(shipped_pack_functions(engines), rounds=rounds, budget=budget)
    per_call = {key: seconds / len(SHELL_CALLS) * 1e6 for key, seconds in timings.items()}
    return {"calls": list(SHELL_CALLS), "us_per_call": per_call}


def _shipped_targets(shipped: Mapping[str, Any], engines: Sequence[str]) -> list[dict[str, Any]]:
    found = []
    us = shipped["us_per_call"]
    for engine in engines:
        ratio = us[f"{engine}:recommended"] / us[f"{engine}:baseline-before"]
        found.append({
            "name": f"{engine}: recommended set ({', '.join(RECOMMENDED)}) vs the baseline before issue 13",
            "kind": "target", "ratio": ratio, "limit": 2.0, "passed": ratio <= 2.0,
        })  # fmt: skip
        ratio = us[f"{engine}:shipped"] / us[f"{engine}:shipped-before-24"]
        found.append({
            "name": f"{engine}: every shipped pack vs every pack shipped before the threat-coverage work",
            "kind": "target", "ratio": ratio, "limit": 1.3, "passed": ratio <= 1.3,
        })  # fmt: skip
    return found


def shipped_load(engines: Sequence[str], rounds: int) -> dict[str, float]:
    """CPU seconds to load the shipped packs on each engine (best of ``rounds``), with the type
    checker and with it patched out (``_PackCompiler.check_types``), interleaved; and the ratio."""
    from dsh_policy.policy import compile as compile_module

    real = compile_module._PackCompiler.check_types
    best: dict[str, float] = {}
    for _ in range(rounds):
        for engine in engines:
            for checked in (True, False):
                skipped = real if checked else (lambda self: None)
                compile_module._PackCompiler.check_types = skipped  # type: ignore[method-assign]
                try:
                    started = time.process_time()  # CPU time: others' load on the machine stays out
                    built = build_policy(SHIPPED_PACKS, engine=engine)
                    elapsed = time.process_time() - started
                finally:
                    compile_module._PackCompiler.check_types = real  # type: ignore[method-assign]
                if isinstance(built, LoadFailure):
                    raise SystemExit(f"the shipped packs do not load on {engine}:\n{built}")
                key = f"{engine}_{'checked' if checked else 'unchecked'}_s"
                best[key] = min(best.get(key, elapsed), elapsed)
    for engine in engines:
        best[f"{engine}_checked_x_unchecked"] = best[f"{engine}_checked_s"] / best[f"{engine}_unchecked_s"]
    return best


def main(argv: list[str] | None = None) -> int:
    """Measure every configuration and engine, print the table, write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="short rounds (a smoke run)")
    parser.add_argument("--rounds", type=int, default=7, help="timing rounds per cell (min is kept)")
    parser.add_argument("--seconds", type=float, default=1.0, help="measuring time per cell")
    parser.add_argument(
        "--no-profile", action="store_true", help="skip profiling the python engine's 100-rule call"
    )
    parser.add_argument(
        "--shipped-only",
        action="store_true",
        help="time only the shipped-pack cells (every engine), print them and their targets and "
        f"write {SHIPPED_RESULTS.name}: the shipped packs' decision cost in a minute",
    )
    options = parser.parse_args(argv)
    budget = 0.1 if options.quick else options.seconds
    rounds = 3 if options.quick else options.rounds
    engines = ["auto", *available_engines()]
    if options.shipped_only:
        return shipped_only(engines, rounds=rounds, budget=budget)
    wall = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        prepared = [prepare_config(Path(tmp), rules, tools, engines) for rules, tools in CONFIGS]
        print(f"  compiled and checked every pack ({time.perf_counter() - wall:.0f} s)", file=sys.stderr)
        rows = measure(prepared, engines, rounds=rounds, budget=budget)
        shipped = measure_shipped_packs(engines, rounds=rounds, budget=budget)
        profile = None
        if not options.no_profile:
            profile = profile_breakdown(prepared[CONFIGS.index((100, 1))].functions["auto_call"])

    targets = _targets(rows, engines) + _shipped_targets(shipped, engines)
    loading = shipped_load(engines, rounds=max(rounds, 5))
    for engine in engines:
        ratio = loading[f"{engine}_checked_x_unchecked"]
        targets.append({
            "name": f"{engine}: loading the shipped packs with type checking vs without", "kind": "target",
            "ratio": ratio, "limit": 1.2, "passed": ratio <= 1.2,
        })  # fmt: skip
    _print_table(rows, engines, targets, shipped)
    for engine in engines:
        checked, unchecked = loading[f"{engine}_checked_s"], loading[f"{engine}_unchecked_s"]
        print(f"shipped packs load on {engine}: {checked:.3f} s type-checked, {unchecked:.3f} s without")
    report = {
        "benchmark": "gateway",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "engines": engines,
        "rounds": rounds,
        "seconds_per_cell": budget,
        "rows": rows,
        "shipped_packs": shipped,
        "targets": targets,
        "shipped_packs_load": loading,
        "wall_seconds": time.perf_counter() - wall,
    }
    if profile is not None:
        report["auto_profile_100_rule_call"] = profile
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")
    return 0


def _print_shipped(shipped: dict[str, Any], targets: list[dict[str, Any]]) -> None:
    """The shipped-pack cells and their targets, as both the full run and ``--shipped-only`` print them."""
    print(f"shipped packs, us per everyday shell call (mean of {len(SHELL_CALLS)}, pre-execute + guard):")
    for key, value in shipped["us_per_call"].items():
        print(f"  {key:<28}{value:>10.1f}")
    print()
    for target in targets:
        status = "PASS" if target["passed"] else "FAIL"
        limit = f"limit {target['limit']:g}x, {target['kind']}"
        print(f"{status}  {target['name']}: {target['ratio']:.2f}x ({limit})")


def shipped_only(engines: Sequence[str], *, rounds: int, budget: float) -> int:
    """``--shipped-only``: the shipped-pack cells alone (every engine, interleaved as in the full
    run), their per-round ratios and targets; written to ``SHIPPED_RESULTS``."""
    wall = time.perf_counter()
    shipped = measure_shipped_packs(engines, rounds=rounds, budget=budget)
    targets = _shipped_targets(shipped, engines)
    _print_shipped(shipped, targets)
    report = {
        "benchmark": "gateway-shipped",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "engines": list(engines),
        "rounds": rounds,
        "seconds_per_cell": budget,
        "shipped_packs": shipped,
        "rounds_us_per_call": {
            key: [seconds / len(SHELL_CALLS) * 1e6 for seconds in ROUNDS[key]]
            for key in shipped["us_per_call"]
        },
        "targets": targets,
        "wall_seconds": time.perf_counter() - wall,
    }
    SHIPPED_RESULTS.parent.mkdir(parents=True, exist_ok=True)
    SHIPPED_RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {SHIPPED_RESULTS}")
    return 0


def _row(rows: Sequence[dict[str, Any]], rules: int, tools: int) -> dict[str, Any]:
    return next(row for row in rows if row["rules"] == rules and row["tools"] == tools)


def _targets(rows: Sequence[dict[str, Any]], engines: Sequence[str]) -> list[dict[str, Any]]:
    """The issue's targets, as ratios from this run."""
    found: list[dict[str, Any]] = []
    ten = _row(rows, 10, 1)
    thousand = _row(rows, 1000, 100)
    index = {(row["rules"], row["tools"]): position for position, row in enumerate(rows)}
    for engine in engines:
        # auto (the default engine) must be within 3x of hand-written Python (issue 19); the
        # others are reported against the limits they had.
        limit = {"auto": 3.0, "native": 15.0}.get(engine, 20.0)
        kind = "target" if engine in ("auto", "native") else "goal"
        for what in ("call", "result"):
            config = index[(100, 1)]
            ratio = round_ratio(f"{config}:{engine}_{what}", f"{config}:hand_{what}")
            found.append({
                "name": f"{engine}: 100-rule {what} vs hand-written Python", "kind": kind,
                "ratio": ratio, "limit": limit, "passed": ratio <= limit,
            })  # fmt: skip
        for what in ("call", "result"):
            ratio = thousand[f"{engine}_{what}_us"] / ten[f"{engine}_{what}_us"]
            found.append({
                "name": f"{engine}: 1,000 rules over 100 tools vs 10 rules ({what}, same rules evaluated)",
                "kind": "target", "ratio": ratio, "limit": 2.0, "passed": ratio <= 2.0,
            })  # fmt: skip
    return found


def _print_table(
    rows: Sequence[dict[str, Any]],
    engines: Sequence[str],
    targets: Sequence[dict[str, Any]],
    shipped: Mapping[str, Any],
) -> None:
    print()
    print("us per tool call (pre-execute + guard) and per result (post-execute with redaction);")
    print("x = times hand-written Python; harness = one ToolRegistry.execute, x = times the harness alone")
    print(
        f"{'rules/tools':<12}{'evaluated':>10}  {'side':<8}{'call us':>11}{'x':>7}"
        f"{'result us':>11}{'x':>7}{'harness us':>12}{'x':>7}"
    )
    for row in rows:
        config = f"{row['rules']}/{row['tools']}"
        evaluated = f"{row['call_rules_evaluated']}+{row['result_rules_evaluated']}"
        print(
            f"{config:<12}{evaluated:>10}  {'hand':<8}{row['hand_call_us']:>11.1f}{1:>7.1f}"
            f"{row['hand_result_us']:>11.1f}{1:>7.1f}{row['harness_alone_us']:>12.1f}{1:>7.1f}"
        )
        for engine in engines:
            print(
                f"{'':<22}  {engine:<8}{row[f'{engine}_call_us']:>11.1f}{row[f'{engine}_call_x_hand']:>7.1f}"
                f"{row[f'{engine}_result_us']:>11.1f}{row[f'{engine}_result_x_hand']:>7.1f}"
                f"{row[f'{engine}_harness_us']:>12.1f}{row[f'{engine}_harness_x_alone']:>7.1f}"
            )
    print()
    _print_shipped(shipped, targets)


if __name__ == "__main__":
    raise SystemExit(main())
