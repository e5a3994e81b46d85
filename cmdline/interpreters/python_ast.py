"""Python code read with the standard library's parser, spelled back in the canonical form the
generic reader's call tables know.

The generic reader (:mod:`~dsh_policy.cmdline.interpreters.reader`) matches call *spellings* such
as ``subprocess.run(`` and ``os.system(``; an alias defeats it (``import subprocess as sp;
sp.run([...])``, ``from os import system as s``, ``getattr(os, "sys" + "tem")``). When the code
parses, this module rewrites it so every spelling of a call names what it calls, then hands the
result (``ast.unparse``) to the generic reader, so the effects derived keep the shape the rules
already consume:

- **aliases** from ``import m as a``, ``from m import f [as g]``, ``from m import *`` (for the
  members the call tables know), and assignments of a module or a function (``run =
  subprocess.run``) are spelled out as the dotted name;
- **dynamic lookups** whose names are constant: ``getattr(os, "sys" + "tem")``,
  ``__import__("os")``, ``importlib.import_module("os")``, ``sys.modules["os"]``,
  ``vars(os)["system"]``, ``builtins.exec``, and libc reached through ``ctypes`` (``CDLL(..)
  .system``) as ``os.system``;
- **constant folding** of string expressions: concatenation, f-strings of constants,
  ``"".join([...])``, ``chr(n)``, ``[::-1]``, ``.replace``/``.decode``/``.encode``, base64/hex/
  rot13 decoding, and names assigned a constant earlier (the last assignment wins, as in the
  generic reader);
- **code run from constants**: the text handed to ``exec``/``eval``/``compile`` is returned as
  nested code, which the caller reads again as Python under the shell reader's nesting and size
  budget (so ``exec(exec(...))`` ends where every other nesting ends).

Code that does not parse (a fragment, another Python version's syntax, a shell variable spliced
in) returns ``None`` and the caller falls back to the generic reader. Nothing here runs the code;
work is linear in its size (folded values are capped at :data:`MAX_FOLDED_CHARS`) and the only
exceptions caught are the parser's own limits.
"""

from __future__ import annotations

import ast
import base64
import binascii
import builtins
import codecs
import warnings
from dataclasses import dataclass, field

from dsh_policy.cmdline.interpreters.model import MAX_CODE_CHARS

__all__ = ["MAX_FOLDED_CHARS", "CanonicalPython", "canonical_python"]

MAX_FOLDED_CHARS = MAX_CODE_CHARS
"""Longest string a folded expression may produce; a longer one stays unfolded."""

_BUILTIN_NAMES = frozenset(dir(builtins))
_RUNS_CODE = frozenset({"exec", "eval", "compile"})
_IMPORTERS = frozenset({"__import__", "importlib.import_module", "importlib.__import__"})

# Members a `from MODULE import *` brings in that the call tables care about: a bare call to one
# of them is spelled MODULE.NAME (other bare names are left alone, builtins above all).
_STAR_MEMBERS: dict[str, frozenset[str]] = {
    "os": frozenset({
        "system", "popen", "remove", "unlink", "rmdir", "removedirs", "execv", "execve", "execvp",
        "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe",
        "spawnl", "spawnle", "spawnlp", "spawnlpe", "getcwd", "environ", "getenv", "dup2", "sep",
    }),
    "subprocess": frozenset({"run", "call", "check_call", "check_output", "Popen", "getoutput",
                             "getstatusoutput"}),
    "shutil": frozenset({"rmtree"}),
    "pty": frozenset({"spawn"}),
    "socket": frozenset({"socket", "create_connection"}),
    "urllib.request": frozenset({"urlopen", "urlretrieve", "Request"}),
}  # fmt: skip

# Top-level modules whose calls the call tables spell with the module name.
_TABLE_MODULES = frozenset({
    "os", "subprocess", "shutil", "pty", "socket", "urllib", "urllib2", "urllib3", "requests", "httpx",
    "aiohttp", "http", "ftplib", "smtplib", "telnetlib", "paramiko", "pathlib", "importlib", "commands",
    "ctypes", "base64", "binascii", "codecs", "builtins", "sys", "io", "sqlite3",
})  # fmt: skip

# libc functions reached through ctypes, spelled as the os function that does the same.
_LIBC_AS_OS = {"system": "os.system", "popen": "os.popen", "unlink": "os.unlink", "remove": "os.remove",
               "rmdir": "os.rmdir", "execv": "os.execv", "execvp": "os.execvp"}  # fmt: skip

_DECODERS = {
    "base64.b64decode": base64.b64decode,
    "base64.standard_b64decode": base64.standard_b64decode,
    "base64.urlsafe_b64decode": base64.urlsafe_b64decode,
    "base64.b32decode": base64.b32decode,
    "base64.b16decode": base64.b16decode,
    "base64.a85decode": base64.a85decode,
    "base64.b85decode": base64.b85decode,
    "base64.decodebytes": base64.decodebytes,
    "binascii.unhexlify": binascii.unhexlify,
    "binascii.a2b_hex": binascii.a2b_hex,
    "binascii.a2b_base64": binascii.a2b_base64,
    "bytes.fromhex": bytes.fromhex,
}


@dataclass(frozen=True, slots=True)
class CanonicalPython:
    """Python code with its aliases spelled out and constants folded, and the constant code it
    hands to ``exec``/``eval``/``compile``."""

    code: str
    nested: list[str] = field(default_factory=list)


def canonical_python(code: str) -> CanonicalPython | None:
    """``code`` rewritten for the generic reader (see the module doc), or ``None`` when it does
    not parse."""
    try:
        with warnings.catch_warnings():  # "\d" in a string literal: a SyntaxWarning on stderr otherwise
            warnings.simplefilter("ignore")
            tree = ast.parse(code)
        spelled = _Canonical()
        tree = spelled.visit(tree)
        ast.fix_missing_locations(tree)
        return CanonicalPython(ast.unparse(tree), spelled.nested)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attribute lookups on a name, else ``None``."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _name_node(path: str, like: ast.AST) -> ast.expr:
    """The expression ``a.b.c`` for a dotted path, located at ``like``."""
    first, *rest = path.split(".")
    node: ast.expr = ast.Name(id=first, ctx=ast.Load())
    for part in rest:
        node = ast.Attribute(value=node, attr=part, ctx=ast.Load())
    return ast.copy_location(node, like)


def _constant(node: ast.AST) -> str | bytes | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        return node.value
    return None


def _text(value: str | bytes) -> str:
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


class _Canonical(ast.NodeTransformer):
    """One pass over the tree in source order: records bindings, rewrites loads (see module doc)."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}  # local name -> dotted name it stands for
        self.constants: dict[str, str | bytes] = {}  # local name -> constant last assigned
        self.modules: set[str] = set()  # top-level modules imported (roots of dotted names)
        self.stars: list[str] = []  # modules imported with *
        self.nested: list[str] = []

    # -- bindings ------------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> ast.AST:
        for alias in node.names:
            self.modules.add(alias.name.split(".")[0])
            if alias.asname:
                self._forget(alias.asname)
                self.aliases[alias.asname] = alias.name
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        if node.level or not node.module:
            return node
        self.modules.add(node.module.split(".")[0])
        for alias in node.names:
            if alias.name == "*":
                self.stars.append(node.module)
                continue
            local = alias.asname or alias.name
            self._forget(local)
            # a module the call tables name (os, subprocess...): spelled in full; another module's
            # names keep their own name (`session.query(Order)` is what the ORM patterns read)
            known = node.module.split(".")[0] in _TABLE_MODULES
            target = f"{node.module}.{alias.name}" if known else alias.name
            if target != local:
                self.aliases[local] = target
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        node.value = self.visit(node.value)
        node.targets = [self.visit(target) for target in node.targets]
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self._bind(node.targets[0].id, node.value)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is not None:
            node.value = self.visit(node.value)
        node.target = self.visit(node.target)
        if node.value is not None and isinstance(node.target, ast.Name):
            self._bind(node.target.id, node.value)
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        node.value = self.visit(node.value)
        if isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add):
            before = self.constants.get(node.target.id)
            added = _constant(node.value)
            self._forget(node.target.id)
            if before is not None and added is not None and type(before) is type(added):
                joined = before + added  # type: ignore[operator]  # same type, checked above
                if len(joined) <= MAX_FOLDED_CHARS:
                    self.constants[node.target.id] = joined
            return node
        node.target = self.visit(node.target)
        return node

    def _bind(self, name: str, value: ast.AST) -> None:
        self._forget(name)
        folded = _constant(value)
        if folded is not None:
            self.constants[name] = folded
            return
        path = dotted(value)
        if path is not None and path.split(".")[0] in self.modules:
            self.aliases[name] = path

    def _forget(self, name: str) -> None:
        self.aliases.pop(name, None)
        self.constants.pop(name, None)

    # -- loads ---------------------------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if not isinstance(node.ctx, ast.Load):
            self._forget(node.id)
            return node
        if node.id in self.aliases:
            return _name_node(self.aliases[node.id], node)
        if node.id in self.constants:
            return ast.copy_location(ast.Constant(value=self.constants[node.id]), node)
        if node.id not in _BUILTIN_NAMES:
            for module in self.stars:
                if node.id in _STAR_MEMBERS.get(module, ()):
                    return _name_node(f"{module}.{node.id}", node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        builtin = dotted(node.value) in ("builtins", "__builtins__") and node.attr in _BUILTIN_NAMES
        if isinstance(node.ctx, ast.Load) and builtin:
            return ast.copy_location(ast.Name(id=node.attr, ctx=ast.Load()), node)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        key = _constant(node.slice)
        if isinstance(key, str) and key.replace(".", "_").isidentifier():
            if dotted(node.value) == "sys.modules":  # sys.modules["os"]
                self.modules.add(key.split(".")[0])
                return _name_node(key, node)
            owner = _namespace_of(node.value)  # vars(os)["system"], os.__dict__["system"]
            if owner is not None:
                return ast.copy_location(ast.Attribute(value=owner, attr=key, ctx=ast.Load()), node)
        return self._folded(node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        return self._folded(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        self.generic_visit(node)
        return self._folded(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = dotted(node.func)
        first = _constant(node.args[0]) if node.args else None
        if name == "getattr" and len(node.args) >= 2:
            attribute = _constant(node.args[1])
            if isinstance(attribute, str) and attribute.isidentifier():
                return ast.copy_location(
                    ast.Attribute(value=node.args[0], attr=attribute, ctx=ast.Load()), node
                )
        if name in _IMPORTERS and isinstance(first, str):
            module = first if name == "importlib.import_module" else first.split(".")[0]
            if module.replace(".", "_").isidentifier():
                self.modules.add(module.split(".")[0])
                return _name_node(module, node)
        if name in _RUNS_CODE and first is not None:
            self.nested.append(_text(first))
        if isinstance(node.func, ast.Attribute) and node.func.attr in _LIBC_AS_OS:
            library = dotted(node.func.value.func) if isinstance(node.func.value, ast.Call) else None
            owner = dotted(node.func.value)
            if (library or "").startswith("ctypes.") or (owner or "").startswith("ctypes.cdll."):
                node.func = _name_node(_LIBC_AS_OS[node.func.attr], node.func)
                self.modules.add("os")
                return node
        return self._folded(node)

    # -- constant folding ----------------------------------------------------------------------

    def _folded(self, node: ast.expr) -> ast.expr:
        value = _fold(node)
        if value is None or len(value) > MAX_FOLDED_CHARS:
            return node
        return ast.copy_location(ast.Constant(value=value), node)


def _namespace_of(node: ast.AST) -> ast.expr | None:
    """``os`` for ``vars(os)`` or ``os.__dict__``: a lookup in it is an attribute of ``os``."""
    if isinstance(node, ast.Call) and dotted(node.func) == "vars" and len(node.args) == 1:
        return node.args[0]
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return node.value
    return None


def _fold(node: ast.AST) -> str | bytes | None:
    """The constant string an expression whose parts are already folded evaluates to, or
    ``None``. Only cheap, total operations; operands are constants by the time this runs."""
    if isinstance(node, ast.BinOp):
        left, right = _constant(node.left), _constant(node.right)
        if isinstance(node.op, ast.Add) and left is not None and type(left) is type(right):
            return left + right  # type: ignore[operator]  # same type, checked above
        if isinstance(node.op, ast.Mult) and left is not None and isinstance(node.right, ast.Constant):
            count = node.right.value
            if isinstance(count, int) and count >= 0 and len(left) * count <= MAX_FOLDED_CHARS:
                return left * count
        return None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                if value.conversion != -1 or value.format_spec is not None:
                    return None
                value = value.value
            part = _constant(value)
            if not isinstance(part, str):
                return None
            parts.append(part)
        return "".join(parts)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        text = _constant(node.value)
        step = node.slice.step
        if (
            text is not None
            and node.slice.lower is None
            and node.slice.upper is None
            and isinstance(step, ast.UnaryOp)
            and isinstance(step.op, ast.USub)
            and isinstance(step.operand, ast.Constant)
            and step.operand.value == 1
        ):
            return text[::-1]
        return None
    if isinstance(node, ast.Call):
        return _fold_call(node)
    return None


def _fold_call(node: ast.Call) -> str | bytes | None:
    name = dotted(node.func)
    args = [_constant(arg) for arg in node.args]
    first = args[0] if args else None
    if name == "chr" and node.args and isinstance(node.args[0], ast.Constant):
        code = node.args[0].value
        return chr(code) if isinstance(code, int) and 0 <= code < 0x110000 else None
    if name in ("str", "bytes") and len(args) == 1 and first is not None:
        return first if (name == "str") == isinstance(first, str) else None
    if name == "bytes" and len(args) == 2 and isinstance(first, str):
        return first.encode("utf-8", "replace")
    decoder = _DECODERS.get(name or "")
    if decoder is not None and first is not None:
        try:
            return decoder(first)  # type: ignore[operator]  # every decoder takes str or bytes
        except (binascii.Error, ValueError, TypeError):
            return None
    if name == "codecs.decode" and isinstance(first, str) and len(args) >= 2:
        encoding = args[1]
        if isinstance(encoding, str) and encoding.replace("_", "").lower() == "rot13":
            return codecs.decode(first, "rot13")
        return None
    if not isinstance(node.func, ast.Attribute):
        return None
    owner = _constant(node.func.value)
    method = node.func.attr
    if owner is None:
        return None
    if method == "join" and len(node.args) == 1:
        items = _items(node.args[0])
        if items is not None and all(type(item) is type(owner) for item in items):
            return owner.join(items)  # type: ignore[arg-type]  # same type, checked above
        return None
    if method == "decode" and isinstance(owner, bytes):
        return owner.decode("utf-8", "replace")
    if method == "encode" and isinstance(owner, str):
        return owner.encode("utf-8", "replace")
    if method == "replace" and len(args) == 2 and all(type(a) is type(owner) for a in args):
        return owner.replace(args[0], args[1])  # type: ignore[arg-type]  # same type, checked above
    if method in ("lower", "upper", "strip") and not node.args:
        return getattr(owner, method)()
    return None


def _items(node: ast.AST) -> list[str | bytes] | None:
    """The constant items of ``[..]``/``(..)``, or of ``map(chr, [n, ...])``."""
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_constant(item) for item in node.elts]
        return None if any(item is None for item in items) else items  # type: ignore[return-value]
    if not (isinstance(node, ast.Call) and dotted(node.func) == "map" and len(node.args) == 2):
        return None
    if dotted(node.args[0]) == "chr" and isinstance(node.args[1], (ast.List, ast.Tuple)):
        codes = [item.value if isinstance(item, ast.Constant) else None for item in node.args[1].elts]
        if all(isinstance(code, int) and 0 <= code < 0x110000 for code in codes):
            return [chr(code) for code in codes]  # type: ignore[arg-type]  # checked ints
    return None
