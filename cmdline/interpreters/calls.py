"""The calls, per language, through which code runs commands, deletes, reads and writes files
and talks to the network: the tables :mod:`~dsh_policy.cmdline.interpreters.effects` matches.
Kept apart from the matching so a new spelling is one table row."""

from __future__ import annotations

import re

from dsh_policy.cmdline.lazy_regex import lazy_compile

# (language set, call head, how its arguments are read): "line" = the first argument is a shell
# line, a list or several strings an argv; "argv" = program then argument list (spawn, execFile);
# "exec" = os.exec*: program path, then argv.
SHELL_CALLS: tuple[tuple[frozenset[str], re.Pattern[str], str], ...] = tuple(
    (frozenset(langs.split()), lazy_compile(head), how)
    for langs, head, how in (
        ("python", r"\bos\.(?:system|popen[234]?)\s*\(", "line"),
        ("python", r"\bsubprocess\.(?:run|call|check_call|check_output"
            r"|Popen|getoutput|getstatusoutput)\s*\(", "line"),
        ("python", r"\b(?:commands\.getoutput|pty\.spawn|os\.spawn[lv]p?e?)\s*\(", "line"),
        ("python", r"\bos\.exec[lv]p?e?\s*\(", "exec"),
        ("javascript", r"\b(?:exec|execSync)\s*\(", "line"),
        ("javascript", r"\b(?:spawn|spawnSync|execFile|execFileSync|fork)\s*\(", "argv"),
        ("javascript", r"\b(?:Bun\.spawn|Bun\.spawnSync|Bun\.\$)\s*\(", "line"),
        ("ruby perl php r", r"(?<![.\w])(?:system|exec|spawn)\s*\(", "line"),
        ("ruby", r"\b(?:IO\.popen|Open3\.(?:capture[23]e?|popen[23]e?"
            r"|pipeline\w*)|Process\.spawn|PTY\.spawn)\s*\(", "line"),
        ("perl", r"(?<![.\w$])(?:system|exec)\s+(?=['\"])", "bare"),
        ("ruby", r"(?<![.\w$])(?:system|exec|spawn)\s+(?=['\"])", "bare"),
        ("php", r"\b(?:shell_exec|passthru|popen|proc_open|pcntl_exec)\s*\(", "line"),
        ("lua", r"\b(?:os\.execute|io\.popen)\s*\(?", "line"),
        ("r", r"\bsystem2\s*\(", "argv"),
        ("awk", r"\bsystem\s*\(", "line"),
        ("applescript", r"\bdo\s+shell\s+script\s+(?=\")", "bare"),
        ("applescript", r"\.doShellScript\s*\(", "line"),  # JXA (osascript -l JavaScript)
        # text typed into a terminal runs there: Terminal's `do script`, iTerm's `write text`,
        # System Events' `keystroke` (and JXA's `.doScript(`/`.write({text:`/`.keystroke(`)
        ("applescript", r"\b(?:do\s+script|write\s+text|keystroke)\s+(?=\")", "bare"),
        ("applescript", r"\.(?:doScript|keystroke)\s*\(|\.write\s*\(\s*\{\s*text\s*:\s*", "line"),
        ("tcl", r"(?:^|[\[;\n]\s*)(?:exec|spawn)\s+", "words"),
    )
)  # fmt: skip
BACKTICK_LANGS = frozenset({"ruby", "perl", "php"})
QUOTED_COMMAND = lazy_compile(r"(?:%x|qx)\s*([\[({<|/!])")
AWK_PIPES = lazy_compile(r"""("(?:[^"\\]|\\.)*")\s*\|&?\s*getline|\|&?\s*("(?:[^"\\]|\\.)*")""")
SED_EXEC = lazy_compile(r"(?:^|[;\n}]|^\s*[0-9$]+|/\s*)\s*e\s+([^;\n}]+)", re.MULTILINE)

# Deletions through the language's API: (languages, head, recursive).
DELETES: tuple[tuple[frozenset[str], re.Pattern[str], bool], ...] = tuple(
    (frozenset(langs.split()), lazy_compile(head), recursive)
    for langs, head, recursive in (
        ("python", r"\bshutil\.rmtree\s*\(|\brmtree\s*\(", True),
        ("python", r"\bos\.(?:remove|unlink|rmdir|removedirs)\s*\(", False),
        ("python", r"\b(?:pathlib\.)?Path\s*\((?=[^()]*\)\s*\.(?:unlink|rmdir)\s*\()", False),
        ("javascript", r"\b(?:fs\.)?(?:promises\.)?(?:rmSync|rm|rmdirSync"
            r"|rmdir)\s*\((?=[^;\n]*recursive\s*:\s*true)", True),
        ("javascript", r"\b(?:rimraf(?:\.sync)?|(?:fse|fsExtra|fs)\.(?:remove"
            r"|removeSync|emptyDir|emptyDirSync)|Deno\.remove(?:Sync)?(?=\s*\([^)]*recursive\s*:\s*true))"
            r"\s*\(",
            True,
        ),
        ("javascript", r"\bfs\.(?:promises\.)?(?:unlinkSync|unlink"
            r"|rmSync|rm|rmdirSync|rmdir)\s*\(|\bDeno\.remove(?:Sync)?\s*\(", False),
        ("ruby", r"\bFileUtils\.(?:rm_rf|rm_r|remove_dir|remove_entry(?:_secure)?|rmtree)\s*\(?", True),
        ("ruby", r"\b(?:FileUtils\.(?:rm|rm_f|remove)|File\.(?:delete"
            r"|unlink)|Dir\.(?:rmdir|delete|unlink))\s*\(?", False),
        ("perl", r"\b(?:rmtree|remove_tree|File::Path::rmtree|File::Path::remove_tree)\s*\(?", True),
        ("perl php lua", r"(?<![.\w$>])(?:unlink|rmdir)\s*\(?", False),
        ("lua", r"\bos\.remove\s*\(", False),
        ("r", r"\bunlink\s*\((?=[^)]*recursive\s*=\s*T)", True),
        ("r", r"\b(?:unlink|file\.remove)\s*\(", False),
    )
)  # fmt: skip

# File access through the language's API: (languages, head, kind, which argument names the file).
# Python's open() and Ruby's File.open() are reads unless their mode argument writes.
FILES: tuple[tuple[frozenset[str], re.Pattern[str], str, str], ...] = tuple(
    (frozenset(langs.split()), lazy_compile(head), kind, which)
    for langs, head, kind, which in (
        ("python", r"(?<![.\w])(?:io\.|codecs\.)?open\s*\(", "mode", "first"),
        ("python", r"\b(?:pathlib\.)?Path\s*\((?=[^()]*\)\s*\.(?:read_text|read_bytes|open)\s*\()", "read",
         "first"),
        ("python", r"\b(?:pathlib\.)?Path\s*\((?=[^()]*\)\s*\.(?:write_text|write_bytes)\s*\()", "write",
         "first"),
        ("javascript", r"\b(?:fs\.)?(?:promises\.)?(?:readFileSync"
            r"|readFile|createReadStream)\s*\(|\bBun\.file\s*\("
            r"|\bDeno\.readTextFile(?:Sync)?\s*\(", "read", "first"),
        ("javascript", r"\b(?:fs\.)?(?:promises\.)?(?:writeFileSync"
            r"|writeFile|appendFileSync|appendFile|createWriteStream)\s*\("
            r"|\bDeno\.writeTextFile(?:Sync)?\s*\(", "write", "first"),
        ("ruby", r"\b(?:File|IO)\.(?:read|readlines|foreach|binread)\s*\(?", "read", "first"),
        ("ruby", r"\bFile\.open\s*\(?", "mode", "first"),
        ("ruby", r"\b(?:File|IO)\.(?:write|binwrite)\s*\(?", "write", "first"),
        ("perl", r"(?<![.\w$])open\s*\(?", "read", "last"),
        ("php", r"\b(?:file_get_contents|readfile|file|fopen"
            r"|highlight_file|show_source|parse_ini_file)\s*\(", "read", "first"),
        ("php", r"\b(?:file_put_contents)\s*\(", "write", "first"),
        ("lua", r"\bio\.(?:open|lines)\s*\(", "mode", "first"),
        ("r", r"\b(?:readLines|readRDS|read\.csv|scan|file)\s*\(", "read", "first"),
    )
)  # fmt: skip
WRITE_MODE = lazy_compile(r"[wax+]")
AWK_READS = lazy_compile(r"getline\s*(?:[A-Za-z_]\w*\s*)?<\s*(\"(?:[^\"\\]|\\.)*\")")

# Network use: (languages, head). The target is the first host- or URL-like string argument.
CONNECTS: tuple[tuple[frozenset[str], re.Pattern[str]], ...] = tuple(
    (frozenset(langs.split()), lazy_compile(head))
    for langs, head in (
        ("python", r"\.connect(?:_ex)?\s*\(\s*\(?|\bsocket\.create_connection\s*\(\s*\(?"),
        ("python", r"\b(?:urllib\d?\.(?:request\.)?(?:urlopen|urlretrieve"
            r"|Request)|urlopen|urlretrieve)\s*\("),
        ("python", r"\b(?:requests|httpx|aiohttp|urllib3)\.(?:get"
            r"|post|put|patch|delete|head|request|stream|Client|AsyncClient|PoolManager)\s*\("),
        ("python", r"\bhttp\.client\.HTTPS?Connection\s*\(|\b(?:ftplib\.FTP"
            r"|smtplib\.(?:SMTP|SMTP_SSL|LMTP)|ftplib\.FTP_TLS|telnetlib\.Telnet|paramiko\.\w+)\s*\("),
        ("javascript", r"\b(?:fetch|axios(?:\.(?:get|post|put|delete|request))?|got|WebSocket)\s*\("),
        # an HTTP client used straight from require()/import() without a name of its own:
        # ``require('axios').get(url)``, ``(await import('got')).default(url)``
        ("javascript", r"\b(?:require|import)\s*\(\s*['\"](?:axios|got|node-fetch|request|superagent|undici"
            r"|needle|phin|ky|https?|follow-redirects)['\"]\s*\)\)?(?:\.(?:default|get|post|put"
            r"|request|fetch|stream))*\s*\("),
        # mail sent from code: ``require('nodemailer').createTransport({...}).sendMail(...)`` (probe24)
        ("javascript", r"\b(?:nodemailer|require\s*\(\s*['\"]nodemailer['\"]\s*\))"
            r"\s*\.\s*createTransport\s*\("),
        ("javascript", r"\bhttps?\.(?:get|request)\s*\(|\bnet\.(?:connect"
            r"|createConnection|Socket)\s*\(|\.connect\s*\("),
        ("javascript", r"\bDeno\.connect\s*\(|\bBun\.connect\s*\("),
        ("ruby", r"\b(?:TCPSocket|UDPSocket|Socket)\.(?:new|open"
            r"|tcp)\s*\(?|\bNet::HTTP\.(?:get|post|start"
            r"|new)\s*\(|\bURI\.open\s*\(|\bURI\s*\(|\bopen\s*\(\s*(?=['\"]https?:)"),
        ("perl", r"\bnew\s+IO::Socket::(?:INET6?|IP|SSL)\s*\("
            r"|\bIO::Socket::(?:INET6?|IP|SSL)\s*->\s*new\s*\("
            # the URL in quotes or in Perl's own quoting operators: get(q{http://...}), qq(...)
            r"|\binet_aton\s*\(|\b(?:LWP::Simple::)?get(?:store|print)?\s*\(\s*(?=(?:['\"]|qq?\s*[{(\[<|/!])https?:)"
            r"|\bHTTP::Tiny\s*->\s*new\b.*?->\s*(?:get|post|request)\s*\("
            # LWP's and Mojo's user agents (``LWP::UserAgent->new->post(...)``), Net::SMTP (probe24)
            r"|\b(?:LWP::UserAgent|Mojo::UserAgent)\s*->\s*new\b.*?->\s*(?:get|post|put|request|mirror)\s*\("
            r"|\bNet::SMTP(?:S|::SSL)?\s*->\s*new\s*\("),
        ("php", r"\b(?:fsockopen|pfsockopen|stream_socket_client"
            r"|socket_connect|curl_init)\s*\(|\b(?:file_get_contents"
            r"|fopen|readfile|copy)\s*\(\s*(?=['\"](?:https?|ftp|tcp):)"),
        ("lua", r"\bsocket\.(?:tcp|connect|udp)\s*\(|:connect\s*\("),
        ("r", r"\b(?:url|download\.file|socketConnection|httr::\w+|curl::\w+)\s*\("),
        ("tcl", r"\bsocket\s+"),
        # JXA through the Objective-C bridge: ``$.NSData.dataWithContentsOfURL($.NSURL.URLWithString(u))``
        ("applescript", r"\b(?:URLWithString|(?:data|string)WithContentsOfURL|dataTaskWithURL)\s*\("),
    )
)  # fmt: skip
# `(c |& getline)`: runs the text c
AWK_RUNS_READ_LINE = lazy_compile(r"\(\s*[A-Za-z_]\w*\s*\|&?\s*getline\b")
AWK_INET = lazy_compile(r"/inet[46]?/(?:tcp|udp)/[0-9]+/([^/\"]+)/")
HOST_LIKE = lazy_compile(
    r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::[0-9]+)?$"
    r"|localhost\b|\[?[0-9a-fA-F:]+:[0-9a-fA-F:]+\]?$)"
)
FD_DUPLICATION = lazy_compile(
    r"\bos\.dup2\s*\(|\bdup2\s*\(|\bopen\s*\(\s*STD(?:IN"
        r"|OUT|ERR)\s*,\s*['\"][<>+]*&|[<>]&\s*(?:[0-9]+|%d)"
        r"|\.pipe\s*\(\s*\w+\s*\)|\bfdopen\b|\bIO\.for_fd\b|\bproc_open\s*\([^)]*\$sock"
)  # fmt: skip
SHELL_LITERAL = lazy_compile(
    r"""['"](?:/(?:usr/)?bin/)?(?:ba|z|da|k|c)?sh(?:\s+-i)?['"]|['"]cmd(?:\.exe)?['"]"""
)
