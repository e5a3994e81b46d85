"""The engines ``bench_peers.py`` decides beside dsh-policy, each with the same N deny rules.

Rule ``i`` reads "the tool is ``shell_i`` and its command contains ``rm``"; a call is decided
from a tool name and a command. Each peer is written the way its documentation says is fastest
(everything that does not depend on the call is prepared once: parsed policy sets, compiled
programs, loaded VMs), and its input is built inside the timed call from the tool name and the
command, as a caller holding a tool call would build it:

- ``agt``: Microsoft's Agent Governance Toolkit ``PolicyEvaluator.evaluate`` on a context dict. An
  AGT rule holds one condition on one context field, so the command is given under a field named
  after the tool (``command@shell_i``) and rule ``i`` is ``contains "rm"`` on it: a rule for
  another tool finds no field, AGT's fastest path.
- ``cedar``: ``cedarpy.is_authorized`` with a pre-parsed ``PolicySet`` and ``Entities`` handle (the
  documented way to skip re-parsing per call): ``permit`` everything, and one ``forbid`` per tool
  ``when { context.command like "*rm*" }``, the request naming the tool as its resource.
- ``rego``: Regorus, the Rust Rego interpreter (``gordon-to-regorus``, the binding on the package
  index; ``regorus``, ``regorus-python`` and ``pyregorus`` are not there), compiled once to its
  bytecode VM (``Program.compile_from_modules`` + ``Rvm``), one ``deny if { ... }`` body per rule;
  the input is the call as JSON text (``set_input_json``), which the VM parses natively.
- ``rust-cel``: ``common-expression-language`` (the Rust ``cel`` crate), one compiled program per
  rule, indexed by tool in a dict (the fastest way to hold N rules: a program per call, none for a
  tool no rule names); the activation is a dict.
- ``cpp-cel``: ``cel-expr-python`` (Google's C++ CEL), likewise one checked program per rule
  indexed by tool, evaluated with ``eval(data=...)``.

Each factory returns ``None`` when its package is not installed (``pip install -e '.[bench]'``).
A peer is a :class:`Peer`: ``call(tool, command)`` is what is timed; ``decision(result)`` turns
its result into ``deny``/``allow`` for the correctness check made before timing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

RULE = 'args.command.contains("rm")'
"""Every rule's condition, in CEL (dsh-policy's own ``when``, and both CEL peers')."""


@dataclass(frozen=True)
class Peer:
    """One engine holding the N rules: ``call`` decides a call (timed), ``decision`` reads its
    result as ``deny`` or ``allow`` (untimed, for the check)."""

    name: str
    package: str
    call: Callable[[str, str], Any]
    decision: Callable[[Any], str]

    @property
    def version(self) -> str | None:
        """The installed version of the peer's package."""
        try:
            return version(self.package)
        except PackageNotFoundError:
            return None


def _deny_if(denied: Any) -> str:
    return "deny" if denied is True else "allow"


def agt(rules: int) -> Peer | None:
    """AGT's ``PolicyEvaluator`` (see module doc for how a rule is encoded)."""
    try:
        from agent_os.policies import PolicyEvaluator
        from agent_os.policies.schema import (
            PolicyAction,
            PolicyCondition,
            PolicyDocument,
            PolicyOperator,
            PolicyRule,
        )
    except ImportError:
        return None
    document = PolicyDocument(
        name="peers",
        rules=[
            PolicyRule(
                name=f"no-rm-{i}",
                condition=PolicyCondition(
                    field=f"command@shell_{i}", operator=PolicyOperator.CONTAINS, value="rm"
                ),
                action=PolicyAction.DENY,
                message=f"shell_{i} may not remove files",
            )
            for i in range(rules)
        ],
    )
    evaluate = PolicyEvaluator(policies=[document]).evaluate

    def call(tool: str, command: str) -> Any:
        return evaluate({"tool_name": tool, f"command@{tool}": command})

    return Peer("agt", "agent-governance-toolkit-core", call, lambda result: str(result.action))


def cedar(rules: int) -> Peer | None:
    """Cedar (``cedarpy``): a parsed policy set of one permit and N forbids."""
    try:
        import cedarpy
    except ImportError:
        return None
    text = "permit(principal, action, resource);\n" + "".join(
        f'@id("no-rm-{i}")\nforbid(principal, action == Action::"call", resource == Tool::"shell_{i}")\n'
        '  when { context.command like "*rm*" };\n'
        for i in range(rules)
    )
    policies = cedarpy.PolicySet.from_str(text)
    entities = cedarpy.Entities.from_json_str("[]")
    authorize = cedarpy.is_authorized
    deny = cedarpy.Decision.Deny

    def call(tool: str, command: str) -> Any:
        request = {
            "principal": {"type": "Agent", "id": "agent"},
            "action": {"type": "Action", "id": "call"},
            "resource": {"type": "Tool", "id": tool},
            "context": {"command": command},
        }
        return authorize(request, policies, entities)

    return Peer("cedar", "cedarpy", call, lambda result: "deny" if result.decision == deny else "allow")


def rego(rules: int) -> Peer | None:
    """Regorus compiled to its bytecode VM: ``data.peers.deny`` over N rule bodies."""
    try:
        import regorus
    except ImportError:
        return None
    module = "package peers\nimport rego.v1\n\ndefault deny := false\n\n" + "".join(
        f'deny if {{\n  input.tool == "shell_{i}"\n  contains(input.args.command, "rm")\n}}\n\n'
        for i in range(rules)
    )
    program = regorus.Program.compile_from_modules("{}", [("peers.rego", module)], ["data.peers.deny"])
    vm = regorus.Rvm()
    vm.load_program(program)
    set_input, execute = vm.set_input_json, vm.execute
    dumps = json.dumps

    def call(tool: str, command: str) -> Any:
        set_input(dumps({"tool": tool, "args": {"command": command}}))
        return execute()

    return Peer("rego", "gordon-to-regorus", call, lambda result: _deny_if(json.loads(result)))


def rust_cel(rules: int) -> Peer | None:
    """The Rust ``cel`` crate (``common-expression-language``): a program per rule, by tool."""
    try:
        import cel
    except ImportError:
        return None
    programs = {f"shell_{i}": cel.compile(RULE) for i in range(rules)}
    lookup = programs.get

    def call(tool: str, command: str) -> Any:
        program = lookup(tool)
        return program is not None and program.execute({"args": {"command": command}})

    return Peer("rust-cel", "common-expression-language", call, _deny_if)


def cpp_cel(rules: int) -> Peer | None:
    """Google's C++ CEL (``cel-expr-python``): a checked program per rule, by tool."""
    try:
        from cel_expr_python import cel
    except ImportError:
        return None
    env = cel.NewEnv(variables={"args": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)})
    programs = {f"shell_{i}": env.compile(RULE) for i in range(rules)}
    lookup = programs.get

    def call(tool: str, command: str) -> Any:
        program = lookup(tool)
        return program is not None and program.eval(data={"args": {"command": command}}).plain_value()

    return Peer("cpp-cel", "cel-expr-python", call, _deny_if)


FACTORIES: dict[str, Callable[[int], Peer | None]] = {
    "agt": agt,
    "cedar": cedar,
    "rego": rego,
    "rust-cel": rust_cel,
    "cpp-cel": cpp_cel,
}
"""Every peer, by the name its column has."""
