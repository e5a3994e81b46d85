"""What SQL (and the SQL-like commands of redis and MongoDB shells) would do, statement by
statement: ``sql.statements`` and the database part of ``shell.sql``.

A guard needs to know a statement's kind and target, and whether a ``DELETE``/``UPDATE`` is
bounded by a ``WHERE``; it does not need a full grammar. So this is a small recogniser rather
than a parser: it splits text into statements (quotes, ``$$`` and ``$tag$`` bodies, backticks,
bracketed identifiers and comments respected), reads the leading keywords of each, and finds the
top-level ``WHERE``/``LIMIT`` of ``DELETE`` and ``UPDATE`` (a ``WHERE`` inside a subquery does not
count; ``WHERE 1=1``, ``WHERE true`` and ``WHERE 1`` count as none). It is linear in the text, never
raises and costs nothing to import. sqlglot, the well-kept parser considered, was measured against
it on this project's machine: about 100 ms to import (``python -X importtime``, sqlglot 30.x: paid
by every hook process) and about six times slower per statement; its strength, a faithful tree of
every dialect, is not what a guard asks.

Each statement is a map of strings: ``kind`` (``drop``, ``truncate``, ``delete``, ``update``,
``alter-drop``, ``grant``, ``revoke``, ``flush``, ``shell`` for client escapes, else the leading
keyword lowercased: ``select``, ``insert``, ``create``...), ``object`` (``table``, ``database``,
``schema``, ``collection``, ``keys``, ...), ``name`` (the object's name as written, ``""`` when
none), ``where`` (``"true"`` when a ``DELETE``/``UPDATE`` is bounded by a real ``WHERE`` or a
``LIMIT``, else ``"false"``; ``""`` for other kinds) and ``text`` (the statement, at most
:data:`MAX_TEXT` characters).
"""

from __future__ import annotations

import re
import shlex

from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["MAX_STATEMENTS", "MAX_TEXT", "mongo_statements", "redis_statements", "sql_statements"]

MAX_STATEMENTS = 256
"""Most statements read from one text (and from one wrapper's body). Past it the text is not read
statement by statement: whatever statements follow are one ``too-deep`` entry, which the rules
treat as destructive, so a ``DROP`` placed after 256 harmless statements fails closed."""

MAX_TEXT = 512
"""Longest ``text`` reported per statement."""

MAX_SQL_CHARS = 256 * 1024
"""Longest text read."""

_WORD = lazy_compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_DOLLAR_TAG = lazy_compile(r"\$[A-Za-z_]*\$")  # a PostgreSQL dollar quote's opening tag
_LEADING_WORD = lazy_compile(r"\s*([A-Za-z_]+)\b")
_NAME = lazy_compile(
    r'\s*((?:[A-Za-z0-9_$.*-]+|"[^"]*"|`[^`]*`|\[[^\]]*\])(?:\s*\.\s*(?:[A-Za-z0-9_$*-]+'
    r'|"[^"]*"|`[^`]*`|\[[^\]]*\]))*)'
)
_TRIVIAL_WHERE = lazy_compile(
    r"(?is)^\s*where\s+(?:\(?\s*(?:1\s*=\s*1|'1'\s*=\s*'1'"
    r"|true|1|0\s*=\s*0|'a'\s*=\s*'a')\s*\)?\s*)(?:;|$|(?:order|returning|limit)\b)"
)
_SKIPPED_WORDS = frozenset({"if", "exists", "not", "temporary", "temp", "concurrently", "only", "global",
                            "local", "unlogged", "cascade", "restrict", "online", "quick", "low_priority",
                            "ignore", "from", "table", "view", "materialized"})  # fmt: skip
_CLIENT_ESCAPE = lazy_compile(r"^\s*(?:\\!|\.(?:shell|system)\b|system\b)\s*(.*)$", re.DOTALL)


def _split(text: str) -> tuple[list[str], str]:
    """Statements of ``text``, with comments removed and quoted text kept, and what follows the
    :data:`MAX_STATEMENTS`-th of them, unread (``""`` when the text was read to its end)."""
    text = text[:MAX_SQL_CHARS]
    statements: list[str] = []
    current: list[str] = []
    i = 0
    n = len(text)
    line_start = True
    while i < n:
        ch = text[i]
        if line_start and ch in "\\.":
            end = text.find("\n", i)
            end = n if end < 0 else end
            if "".join(current).strip():
                statements.append("".join(current))
                current = []
            statements.append(text[i:end])  # a client meta-command: \dt, .tables, \! cmd
            i = end
            if len(statements) >= MAX_STATEMENTS:
                return _stripped(statements), text[i:]
            continue
        if ch in " \t\r":
            current.append(ch)
            i += 1
            continue
        line_start = ch == "\n"
        if (ch == "-" and text.startswith("--", i)) or (ch == "#" and (i + 1 < n and text[i + 1] in " \t!")):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            current.append(" ")
            continue
        if ch in "'\"`[":
            closing = "]" if ch == "[" else ch
            end = i + 1
            while end < n:
                if text[end] == closing:
                    if end + 1 < n and text[end + 1] == closing and closing != "]":
                        end += 2
                        continue
                    break
                end += 2 if text[end] == "\\" and closing != "]" else 1
            current.append(text[i : end + 1])
            i = end + 1
            continue
        if ch == "$":
            tag = _DOLLAR_TAG.match(text, i)
            if tag is not None:
                end = text.find(tag.group(), i + len(tag.group()))
                end = n if end < 0 else end + len(tag.group())
                current.append(text[i:end])
                i = end
                continue
        if ch == ";":
            if "".join(current).strip():  # empty statements (;;) do not count towards the cap
                statements.append("".join(current))
            current = []
            i += 1
            if len(statements) >= MAX_STATEMENTS:
                return _stripped(statements), text[i:]
            continue
        current.append(ch)
        i += 1
    statements.append("".join(current))
    return _stripped(statements), ""


def _stripped(statements: list[str]) -> list[str]:
    return [s.strip() for s in statements if s.strip()]


def _unread(rest: str, inside: str, out: list[dict[str, str]]) -> dict[str, str] | None:
    """The ``too-deep`` entry for statements past :data:`MAX_STATEMENTS` (None when what is left
    holds no statement, only blanks or comments, or when ``out`` already ends in a ``too-deep``
    entry that stands for it: :data:`MAX_ENTRIES` was reached)."""
    if (out and out[-1]["kind"] == "too-deep") or not _split(rest)[0]:
        return None
    return _too_deep(rest.strip(), inside)


def _top_level(statement: str) -> str:
    """The statement with parenthesised parts and quoted text blanked, so keywords found in it
    are at the top level."""
    out: list[str] = []
    depth = 0
    quote = ""
    for ch in statement:
        if quote:
            if ch == quote:
                quote = ""
            out.append(" ")
            continue
        if ch in "'\"`":
            quote = ch
            out.append(" ")
        elif ch == "(":
            depth += 1
            out.append(" ")
        elif ch == ")":
            depth = max(depth - 1, 0)
            out.append(" ")
        else:
            out.append(ch if depth == 0 else " ")
    return "".join(out)


def _statement(text: str) -> dict[str, str]:
    escape = _CLIENT_ESCAPE.match(text)
    if escape is not None and (
        text.lstrip().startswith(("\\!", ".")) or text.lstrip().lower().startswith("system ")
    ):
        return _entry("shell", "", "", "", text, escape.group(1).strip())
    if text.startswith(("\\", ".")):
        return _entry("meta", "", "", "", text)
    top = _top_level(text)
    words = [w.lower() for w in _WORD.findall(top)]
    if not words:
        return _entry("", "", "", "", text)
    if words[0] == "with":  # WITH x AS (...) DELETE FROM ...: the verb after the CTEs
        verbs = ("select", "insert", "update", "delete", "merge")
        words = words[next((i for i, w in enumerate(words) if w in verbs), 0) :]
    verb = words[0]
    if verb == "drop":
        obj = next((w for w in words[1:] if w not in ("if", "exists", "temporary", "temp", "unique")), "")
        return _entry("drop", obj, _name_after(text, obj), "", text)
    if verb == "truncate":
        return _entry(
            "truncate", "table", _name_after(text, "table" if "table" in words[1:2] else "truncate"), "", text
        )
    if verb in ("delete", "update"):
        where = _where(top, text)
        name = _name_after(text, "from") if verb == "delete" else _name_after(text, "update")
        return _entry(verb, "table", name, where, text)
    mutation = _MUTATION.match(top)
    if verb == "alter" and mutation is not None:
        # ClickHouse's mutations: `ALTER TABLE t DELETE WHERE 1` deletes like `DELETE FROM t`
        kind = mutation.group(2).lower()
        return _entry(
            kind, "table", mutation.group(1), _where(top[mutation.end() :], text[mutation.end() :]), text
        )
    if verb == "alter" and "drop" in words:
        obj = words[1] if len(words) > 1 else ""
        return _entry("alter-drop", obj, _name_after(text, obj), "", text)
    if verb == "create" and len(words) > 1 and words[1] == "policy" and _opens_every_row(text):
        # a row-level policy that lets every row be written by every role (`FOR ALL ... USING
        # (true)` to anon or public): the table opened like DISABLE ROW LEVEL SECURITY (probe17)
        return _entry("grant", "policy", _name_after(text, "policy"), "", text)
    if (
        verb == "alter"
        and len(words) > 2
        and words[1] in ("user", "role")
        and any(w in ("superuser", "createrole", "bypassrls", "replication") for w in words)
    ):
        return _entry("grant", words[1], _name_after(text, words[1]), "", text)
    if verb == "alter" and len(words) > 2 and words[1] == "table" and "disable" in words and "row" in words:
        # `ALTER TABLE t DISABLE ROW LEVEL SECURITY`: every row open to every role that can read
        # the table (Supabase's anon key included): a grant of every row (probe14).
        return _entry("grant", "table", _name_after(text, "table"), "", text)
    if verb in ("grant", "revoke"):
        return _entry(verb, "privileges", "", "", text)
    if verb in (
        "flush",
        "reset",
        "purge",
        "vacuum",
        "optimize",
        "merge",
        "replace",
        "copy",
        "load",
        "call",
        "exec",
        "execute",
    ):
        return _entry(verb, "", "", "", text)
    return _entry(verb, "", "", "", text)


_MUTATION = lazy_compile(
    r"(?is)^\s*alter\s+table\s+((?:[\w$.`\"]+))(?:\s+on\s+cluster\s+\S+)?\s+(delete|update)\b"
)
_POLICY_COMMAND = lazy_compile(r"(?is)\bfor\s+(all|select|insert|update|delete)\b")
_POLICY_ROLES = lazy_compile(r"(?is)\bto\s+(.+?)(?:\busing\b|\bwith\s+check\b|$)")
_ALWAYS_TRUE = lazy_compile(r"(?is)\b(?:using|with\s+check)\s*\(\s*(?:true|1\s*=\s*1|'1'\s*=\s*'1')\s*\)")


def _opens_every_row(text: str) -> bool:
    """``CREATE POLICY`` that lets anyone write every row: a condition that is always true, for
    writing commands (``FOR ALL`` is the default), to the public or anonymous role (``TO``
    omitted means PUBLIC). ``FOR SELECT USING (true)``, a public read policy, is ordinary."""
    if _ALWAYS_TRUE.search(text) is None:
        return False
    command = _POLICY_COMMAND.search(text)
    if command is not None and command.group(1).lower() == "select":
        return False
    roles = _POLICY_ROLES.search(text)
    if roles is None:
        return True
    named = {r.strip().strip('"').lower() for r in roles.group(1).split(",")}
    return bool(named & {"public", "anon", "anonymous"})


def _where(top: str, text: str) -> str:
    match = re.search(r"(?i)\b(where|limit|top)\b", top)
    if match is None:
        return "false"
    if match.group(1).lower() == "where" and _TRIVIAL_WHERE.match(text[match.start() :]):
        return "false"
    return "true"


def _name_after(text: str, keyword: str) -> str:
    """The identifier following ``keyword`` (skipping IF EXISTS and friends), as written."""
    if not keyword:
        return ""
    match = re.search(rf"(?i)\b{re.escape(keyword)}\b", text)
    if match is None:
        return ""
    pos = match.end()
    while True:
        word = _LEADING_WORD.match(text, pos)
        if word is None or word.group(1).lower() not in _SKIPPED_WORDS:
            break
        pos = word.end()
    name = _NAME.match(text, pos)
    return name.group(1) if name else ""


def _entry(kind: str, obj: str, name: str, where: str, text: str, command: str = "") -> dict[str, str]:
    entry = {"kind": kind, "object": obj, "name": name, "where": where, "text": text[:MAX_TEXT]}
    if command:
        entry["command"] = command
    return entry


def sql_statements(text: str) -> list[dict[str, str]]:
    """CEL ``sql.statements(text)``: every statement of ``text`` (see the module doc), each
    followed by the statements it wraps (see :func:`_inner_texts`)."""
    if not isinstance(text, str):
        raise TypeError(f"sql.statements expects a string, got {type(text).__name__}")
    out: list[dict[str, str]] = []
    statements, rest = _split(text)
    for statement in statements:
        _with_inner(statement, 0, out)
    if rest and (unread := _unread(rest, "", out)) is not None:
        out.append(unread)
    return out


# -- statements inside statements -----------------------------------------------------------------
#
# A DELETE is as destructive inside EXPLAIN ANALYZE (which runs it), a DO block, a function body,
# a prepared statement or a data-modifying CTE as on its own. Each wrapper's inner text is read
# again as statements, after the wrapper's own entry, with ``inside`` naming the wrapper; the
# rules then judge the inner ones like bare statements. Plain EXPLAIN only plans (it runs nothing,
# in PostgreSQL, MySQL and SQLite alike), so only EXPLAIN ANALYZE is unwrapped.

MAX_INNER_DEPTH = 6
"""How deep wrappers are read (``DO`` around ``EXECUTE`` around a ``WITH`` ...); deeper ones are
one ``too-deep`` entry."""
MAX_ENTRIES = 4 * MAX_STATEMENTS
"""Most entries one text yields, wrapped statements included."""

_EXPLAIN = lazy_compile(r"(?is)^\s*explain\b")
_EXPLAIN_OPTION_WORDS = lazy_compile(
    r"(?is)\s*(?:analy[sz]e|verbose|extended|partitions|costs|buffers|query\s+plan|plan\s+for|format\s*=?\s*\w+)\b"
)
_ANALYZE_ON = lazy_compile(r"(?is)\banaly[sz]e\b(?!\s*(?:false|off|0)\b)")
_PREPARE = lazy_compile(r"(?is)^\s*prepare\s+[\w$\"]+\s*(?:\([^)]*\))?\s*(?:as\b|from\s*(?=['\"]))")
_EXECUTE_TEXT = lazy_compile(
    r"(?is)^\s*(?:execute|exec)\s*(?:immediate\s*|sp_executesql\s*)?\(?\s*(?:format\s*\(\s*)?N?(?=')"
)
_DO = lazy_compile(r"(?is)^\s*do\b")
_ROUTINE = lazy_compile(r"(?is)^\s*create\s+(?:or\s+replace\s+)?(?:function|procedure)\b")
_ROUTINE_BODY = lazy_compile(r"(?is)\bas\s*(?=\$[A-Za-z_]*\$|')|\bbegin\s+atomic\b")
_CTE_BODY = lazy_compile(r"(?is)\bas\s*(?:not\s+)?(?:materialized\s*)?\(")
_MODIFYING = lazy_compile(r"(?is)^\s*(?:delete|update|insert|merge|drop|truncate|alter)\b")
_CONTROL = lazy_compile(
    r"(?is)^\s*(?:<<\w+>>|begin\b|declare\b.*?\bbegin\b|else\b|loop\b|exception\b|end(?:\s+(?:if|loop|case))?\b"
    r"|(?:if|elsif|elseif|when|while)\b.*?\b(?:then|loop|do)\b|for\b.*?\bloop\b|foreach\b.*?\bloop\b)"
)


def _with_inner(statement: str, depth: int, out: list[dict[str, str]], inside: str = "") -> None:
    if len(out) >= MAX_ENTRIES:
        if out[-1]["kind"] != "too-deep":
            out.append(_too_deep(statement, inside))
        return
    entry = _statement(statement)
    if inside:
        entry["inside"] = inside
    out.append(entry)
    inner = _inner_texts(statement)
    if inner and depth >= MAX_INNER_DEPTH:
        out.append(_too_deep(statement, inside))
        return
    for wrapper, text, procedural in inner:
        pieces, rest = _split(text) if procedural else ([text], "")
        for piece in pieces:
            body = _without_control(piece) if procedural else piece
            if body:
                _with_inner(body, depth + 1, out, inside or wrapper)
        if rest and (unread := _unread(rest, inside or wrapper, out)) is not None:
            out.append(unread)


def _too_deep(statement: str, inside: str) -> dict[str, str]:
    """The entry that stands for statements left unread (wrapped deeper than
    :data:`MAX_INNER_DEPTH` or beyond :data:`MAX_ENTRIES`): kind ``too-deep``, which the rules
    treat as destructive, so unread SQL fails closed."""
    entry = _entry("too-deep", "", "", "", statement)
    entry["inside"] = inside or "too-deep"
    return entry


def _inner_texts(statement: str) -> list[tuple[str, str, bool]]:
    """The statements ``statement`` wraps, as ``(wrapper, text, procedural)``: ``procedural``
    texts are PL/pgSQL-like bodies (several statements, with BEGIN/IF/LOOP around them)."""
    explain = _EXPLAIN.match(statement)
    if explain is not None:
        rest = statement[explain.end() :].lstrip()
        options = ""
        if rest.startswith("("):
            end = rest.find(")")
            options, rest = (rest, "") if end < 0 else (rest[: end + 1], rest[end + 1 :])
        else:
            while (word := _EXPLAIN_OPTION_WORDS.match(rest)) is not None:
                options += word.group()
                rest = rest[word.end() :]
        return [("explain analyze", rest, False)] if _ANALYZE_ON.search(options) and rest.strip() else []
    prepare = _PREPARE.match(statement)
    if prepare is not None:
        rest = statement[prepare.end() :]
        literal = _literal(rest)
        return [("prepare", rest if literal is None else literal, literal is not None)]
    execute = _EXECUTE_TEXT.match(statement)
    if execute is not None:
        literal = _literal(statement[execute.end() :])
        return [("execute", literal, True)] if literal else []
    do = _DO.match(statement)
    if do is not None:
        body = _literal(statement[do.end() :], anywhere=True)
        return [("do", body, True)] if body else []
    if _ROUTINE.match(statement) is not None:
        found = _ROUTINE_BODY.search(statement)
        if found is None:
            return []
        if found.group().lower().startswith("begin"):
            return [("function", statement[found.end() :], True)]
        body = _literal(statement[found.end() :])
        return [("function", body, True)] if body else []
    if re.match(r"(?is)\s*with\b", statement):
        return [("with", body, False) for body in _cte_bodies(statement) if _MODIFYING.match(body)]
    return []


def _literal(text: str, anywhere: bool = False) -> str | None:
    """The text of the ``$tag$...$tag$`` or ``'...'`` literal that ``text`` starts with (after
    blanks; anywhere in it when ``anywhere``: ``DO LANGUAGE plpgsql $$...$$``), or ``None``."""
    stripped = text.lstrip()
    tag = _DOLLAR_TAG.search(stripped) if anywhere else _DOLLAR_TAG.match(stripped)
    quote = stripped.find("'") if anywhere else (0 if stripped.startswith("'") else -1)
    if tag is not None and (quote < 0 or tag.start() < quote):
        end = stripped.find(tag.group(), tag.end())
        return stripped[tag.end() : len(stripped) if end < 0 else end]
    if quote < 0:
        return None
    chars: list[str] = []
    i = quote + 1
    while i < len(stripped):
        if stripped[i] == "'":
            if stripped.startswith("''", i):
                chars.append("'")
                i += 2
                continue
            break
        chars.append(stripped[i])
        i += 1
    return "".join(chars)


def _cte_bodies(statement: str) -> list[str]:
    """The parenthesised bodies of a ``WITH`` clause's common table expressions."""
    top = _top_level(statement)
    bodies: list[str] = []
    for match in _CTE_BODY.finditer(statement):
        if top[match.start() : match.start() + 2].lower() != "as":  # inside parentheses or quotes
            continue
        depth = 0
        for i in range(match.end() - 1, len(statement)):
            depth += {"(": 1, ")": -1}.get(statement[i], 0)
            if depth == 0:
                bodies.append(statement[match.end() : i])
                break
    return bodies


def _without_control(piece: str) -> str:
    """A procedural body's statement without the BEGIN/IF ... THEN/LOOP/END around it."""
    while (control := _CONTROL.match(piece)) is not None and control.end() > 0:
        piece = piece[control.end() :]
    return piece.strip()


# -- redis and MongoDB ----------------------------------------------------------------------------

_REDIS_KINDS = {
    "flushall": ("flush", "keys"), "flushdb": ("flush", "keys"), "del": ("delete", "keys"),
    "unlink": ("delete", "keys"), "script": ("flush", "scripts"), "function": ("flush", "functions"),
    "config": ("config", ""), "shutdown": ("shutdown", ""), "debug": ("debug", ""),
    "slaveof": ("replicate", ""), "replicaof": ("replicate", ""), "swapdb": ("swap", "keys"),
    "expire": ("expire", "keys"), "rename": ("rename", "keys"), "acl": ("acl", ""), "module": ("module", ""),
}  # fmt: skip


_REDIS_TUNING = lazy_compile(
    r"(?i)^(?:maxmemory(?:-[\w-]+)?|maxclients|timeout|tcp-keepalive|hz|dynamic-hz|loglevel|slowlog-[\w-]+"
    r"|latency-[\w-]+|notify-keyspace-events|lazyfree-[\w-]+|active-?defrag[\w-]*|(?:hash|list|set|zset)-max-[\w-]+"
    r"|stream-node-[\w-]+|save|appendonly|appendfsync|client-output-buffer-limit|lua-time-limit"
    r"|busy-reply-threshold|lfu-[\w-]+|activerehashing|io-threads[\w-]*|proto-max-bulk-len)$"
)
"""CONFIG SET parameters that only tune memory, eviction, timeouts, persistence schedule and
logging detail. Every other parameter (``dir``, ``dbfilename``, ``protected-mode``,
``requirepass``, ``replica-read-only``, ``enable-module-command``, ...) can write files where the
server runs, open it to others or loosen its safety, and stays ``config-set``."""
_LUA_ESCAPE = lazy_compile(
    r"\b(?:package\.loadlib|loadlib|io\.popen|os\.execute|io\.open|require)\s*\(|\bffi\."
)
"""Lua that reaches outside redis's script sandbox (CVE-2022-0543: ``package.loadlib`` of the
system Lua library, then ``io.popen``)."""


def redis_statements(argvs: list[list[str]]) -> list[dict[str, str]]:
    """Commands a redis client would send, one argv each: ``FLUSHALL`` is kind ``flush`` (object
    ``keys``), ``DEL``/``UNLINK`` ``delete``, ``SCRIPT|FUNCTION FLUSH`` ``flush``, ``CONFIG SET``
    ``config``, ``SHUTDOWN``, ...; other commands are their lowercased name."""
    out: list[dict[str, str]] = []
    for argv in argvs[:MAX_STATEMENTS]:
        if not argv:
            continue
        name = argv[0].lower()
        kind, obj = _REDIS_KINDS.get(name, (name, ""))
        if name in ("script", "function") and (len(argv) < 2 or argv[1].lower() != "flush"):
            kind, obj = name, ""
        if name == "config" and len(argv) > 1:
            kind = "config-" + argv[1].lower()
            if kind == "config-set" and len(argv) > 2 and all(_REDIS_TUNING.match(p) for p in argv[2::2]):
                kind = "config-tune"
        elif name == "module" and len(argv) > 1 and argv[1].lower() == "list":
            kind = "module-list"
        elif name in ("eval", "eval_ro", "evalsha", "function") and _LUA_ESCAPE.search(" ".join(argv[1:])):
            kind = "lua-escape"
        target = argv[1] if len(argv) > 1 and name in ("del", "unlink", "expire", "rename") else ""
        out.append(_entry(kind, obj, target, "", " ".join(argv)))
    return out


def redis_argvs(text: str) -> list[list[str]]:
    """Commands in text piped to a redis client: one per line, split like the client does."""
    argvs: list[list[str]] = []
    for line in text[:MAX_SQL_CHARS].splitlines():
        try:
            words = shlex.split(line)
        except ValueError:
            words = line.split()
        if words:
            argvs.append(words)
    return argvs


_MONGO_DROP_DATABASE = lazy_compile(r"\.dropDatabase\s*\(")
# A collection reference: a dotted name. Bounded, because Python's ``re`` tries a match from every
# start: unbounded, a long run of name characters with no ``.drop()`` after it cost time quadratic
# in its length (4 s at 16 KiB, minutes at the 256 KiB cap, inside one helper call). A longer chain
# is still found; it is named by its last 128 characters.
_MONGO_NAME = r"[A-Za-z_][\w.]{0,127}"
_MONGO_DROP = lazy_compile(
    r"(?:db\.)?(?:getCollection\(\s*['\"]([^'\"]+)['\"]\s*\)|(" + _MONGO_NAME + r"))\.drop\s*\(\s*\)"
)
# A collection named by a value computed at run time: ``db[c].drop()``, ``getCollection(n).drop()``
# (a loop over ``getCollectionNames()`` drops every collection this way).
_MONGO_COMPUTED = lazy_compile(
    r"(?:\[[^\]\n]{1,128}\]|getCollection\(\s*[^'\")\s][^)\n]{0,127}\))\.(drop|deleteMany|remove)\s*\(\s*(\{\s*\})?\s*\)?"
)
_MONGO_DROP_COLLECTION = lazy_compile(r"\.dropCollection\s*\(\s*['\"]([^'\"]*)['\"]")
_MONGO_BULK = lazy_compile(
    r"(?:db\.)?(?:getCollection\(\s*['\"]([^'\"]+)['\"]\s*\)"
    r"|(" + _MONGO_NAME + r"))\.(deleteMany|remove|updateMany"
    r"|update|findOneAndDelete|deleteOne)\s*\(\s*(\{\s*\})?"
)
_MONGO_ADMIN = lazy_compile(
    r"\.(dropUser|dropAllUsers|dropRole|dropAllRoles|dropIndexes|shutdownServer)\s*\("
)


def mongo_statements(code: str) -> list[dict[str, str]]:
    """Destructive calls in MongoDB shell JavaScript: ``dropDatabase()`` (kind ``drop``, object
    ``database``), ``coll.drop()`` / ``dropCollection`` (``drop``, ``collection``),
    ``deleteMany({})``/``remove({})`` (``delete``, where ``false``; with a filter ``true``),
    ``updateMany({}, ...)`` (``update``), ``dropUser``/``dropAllUsers``/``shutdownServer``."""
    code = code[:MAX_SQL_CHARS]
    out: list[dict[str, str]] = []
    for match in _MONGO_DROP_DATABASE.finditer(code):
        out.append(_entry("drop", "database", "", "", match.group()))
    for match in _MONGO_DROP.finditer(code):
        name = match.group(1) or (match.group(2) or "").removeprefix("db.")
        if not name.endswith("dropDatabase"):
            out.append(_entry("drop", "collection", name, "", match.group()))
    for match in _MONGO_COMPUTED.finditer(code):
        method, unbounded = match.group(1), match.group(2) is not None or match.group(1) == "drop"
        kind = "drop" if method == "drop" else "delete"
        out.append(_entry(kind, "collection", "<computed>", "false" if unbounded else "true", match.group()))
    for match in _MONGO_DROP_COLLECTION.finditer(code):
        out.append(_entry("drop", "collection", match.group(1), "", match.group()))
    for match in _MONGO_BULK.finditer(code):
        name = match.group(1) or (match.group(2) or "").removeprefix("db.")
        method = match.group(3)
        kind = "update" if method.startswith("update") else "delete"
        bounded = "false" if match.group(4) is not None else "true"
        out.append(_entry(kind, "collection", name, bounded, match.group()))
    for match in _MONGO_ADMIN.finditer(code):
        method = match.group(1)
        kind = "shutdown" if method == "shutdownServer" else "drop"
        obj = (
            "user"
            if "User" in method
            else "role"
            if "Role" in method
            else "index"
            if "Index" in method
            else ""
        )
        out.append(_entry(kind, obj, "", "", match.group()))
    return out[:MAX_STATEMENTS]
