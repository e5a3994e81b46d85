"""What an agent's instruction file (AGENTS.md, CLAUDE.md, rules files, copilot instructions) tells
the agent to do, read in plain words: send a secret somewhere, or destroy broadly.

The file is text the agent obeys at every later session; :mod:`later` classes it
(``agent-instructions``) and asks these readers whether its new text carries such an instruction.
Each reads sentence by sentence, so the work stays linear in the text.
"""

from __future__ import annotations

import re

from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["instructs_exfil", "instructs_unsupervised", "instructs_wipe"]

_SEND_VERB = lazy_compile(
    r"(?i)\b(?:send|post|upload|forward|transmit|exfiltrate|email|mail|share|submit|paste)(?:s|es|ed|ing)?\s+"
    r"(?:(?:the|your|all|any|its|their|our|my|contents?|values?|of|each|every|current|full|whole|raw|\w+'s)\s+){0,4}"
    r"(?=[`'\"(]?(?:\.env\b|secrets?\b|credentials?\b|tokens?\b|api[ _-]?keys?\b|private key"
    r"|id_(?:rsa|ed25519)\b|~?/?\.ssh\b|passwords?\b|~?/?\.aws\b|cookies?\b"
    r"|\w+[ _-](?:token|key|secret|password)s?\b|process\.env\b|os\.environ\b|\$\(?env\)?"
    r"|environment\s+variables\b|env\s+vars?\b))"
)
_SECRET_NAMED = lazy_compile(
    r"(?i)~?/?\.(?:aws|ssh|gnupg|kube|docker)/|\bid_(?:rsa|ed25519|ecdsa)\b|(?<![\w.])\.env\b|\bcredentials?\b"
    r"|\b(?:api[ _-]?keys?|tokens?|secrets?|passwords?|private\s+keys?)\b|process\.env\b|os\.environ\b"
)
_RENDERED_LINK = lazy_compile(
    r"(?i)!\[[^\]\n]*\]\(\s*<?https?://|\bimage\s+(?:url|link)\b|\bmarkdown\s+image\b"
)
_WIPE_VERB = lazy_compile(
    r"(?i)\b(?:delete|remove|wipe|erase|destroy|purge|terminate|format|clean)(?:s|d|ed|ing)?\b"
)
_WIPE_TARGET = lazy_compile(
    r"(?i)\bfile[- ]?systems?\b|\bhome\s+director(?:y|ies)\b|\bcloud\s+resources\b|\bfactory[- ]state\b"
    r"|\bnear[- ]factory\b|\b(?:entire|whole)\s+(?:disk|drive|system|machine|account)\b"
    r"|\b(?:all|every)\s+(?:cloud\s+|aws\s+|the\s+)?(?:resources|instances|buckets|users|repositories|databases)\b"
)
_DESTINATION = lazy_compile(r"https?://[^\s)\"'`>]+|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b|\bwebhook\b")


def instructs_exfil(text: str) -> bool:
    """An agent's instruction file telling it, in plain words, to send a secret somewhere: a send
    verb whose object is a secret, and a destination (a URL, an address, a webhook) after it in
    the same sentence. A rule that only mentions secrets (never commit .env), or sends something
    else (post a summary ... mention any key rotation), names no send of one."""
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])|\n", text):
        verb = _SEND_VERB.search(sentence)
        if verb and _DESTINATION.search(sentence, verb.end()):
            return True
        # a secret named beside a link the viewer's client fetches by itself (a markdown image)
        if (
            _SECRET_NAMED.search(sentence)
            and _RENDERED_LINK.search(sentence)
            and _DESTINATION.search(sentence)
        ):
            return True
    return False


def instructs_wipe(text: str) -> bool:
    """An agent's instruction file telling it to destroy broadly: a destructive verb and a target
    no task names (the file system, home folders, cloud resources, every instance or bucket) in
    one sentence, the wiper prompt planted in the Amazon Q extension (July 2025). Cleaning up a
    build folder or the task's own scratch files names no such target."""
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])|\n", text):
        verb = _WIPE_VERB.search(sentence)
        if verb and _WIPE_TARGET.search(sentence):
            return True
    return False


_UNSUPERVISED = lazy_compile(
    r"(?i)\b(?:always\s+(?:auto[- ]?)?approve|auto[- ]?approve|approve\s+(?:all|every|any)\b"
    r"|never\s+ask\b|do(?:n't|\s+not)\s+ask\b|without\s+(?:asking|confirmation|confirming|approval|permission"
    r"|prompting|checking\s+with)|skip\s+(?:the\s+|any\s+|all\s+)?(?:confirmation|approval|permission)s?)"
)
_RISKY_SCOPE = lazy_compile(
    r"(?i)\b(?:curl|wget|bash|sudo|rm|shell|terminal|network|downloads?|scripts?|installs?"
    r"|(?:any|all|every|other)\s+(?:\w+\s+)?commands?|commands?\s+(?:automatically|directly))\b"
)
_CONCEAL = lazy_compile(
    r"(?i)\b(?:do(?:n't|\s+not)|never)\s+(?:mention|tell|reveal|disclose|report|show|inform|let\s+the\s+user\s+know)\b"
    r"|\bkeep\s+(?:this|it)\s+(?:secret|hidden|quiet|private)\b|\bhide\s+(?:this|it)\b"
)


def instructs_unsupervised(text: str) -> bool:
    """An agent's instruction file telling it to act without the user's approval (approve
    automatically, never ask, without confirmation) over a broad or risky scope (any command,
    shell, downloads, curl/wget/bash/sudo/rm) in the same sentence, or anywhere beside an
    instruction to hide it from the user: the approval switch written as a rule the agent obeys
    at every session. Skipping a question for one named command (``run npm test without
    asking``) names no such scope."""
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])|\n", text)
    concealed = any(_CONCEAL.search(sentence) for sentence in sentences)
    for sentence in sentences:
        found = _UNSUPERVISED.search(sentence)
        if found and (concealed or _RISKY_SCOPE.search(sentence)):
            return True
    return False
