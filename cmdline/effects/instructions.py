"""What an agent's instruction file (AGENTS.md, CLAUDE.md, rules files, copilot instructions, its
memories) tells the agent to do, read in plain words: send a secret somewhere, destroy broadly,
act without the user's approval, or ship the project somewhere else.

The file is text the agent obeys at every later session; :mod:`later` classes it
(``agent-instructions``) and asks these readers whether its new text carries such an instruction.
Each reads sentence by sentence, so the work stays linear in the text.
"""

from __future__ import annotations

import re

from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["instructs_exfil", "instructs_unattended", "instructs_wipe"]

# the object of a verb that is a secret: up to four filler words, then the secret itself
_SECRET_OBJECT = (
    r"(?:(?:the|your|all|any|its|their|our|my|contents?|values?|of|each|every|current|full|whole|raw|\w+'s)\s+){0,4}"
    r"(?=[`'\"(]?(?:\.env\b|secrets?\b|credentials?\b|tokens?\b|api[ _-]?keys?\b|private key"
    r"|id_(?:rsa|ed25519)\b|~?/?\.ssh\b|passwords?\b|~?/?\.aws\b|cookies?\b"
    r"|\w+[ _-](?:token|key|secret|password)s?\b|process\.env\b|os\.environ\b|\$\(?env\)?"
    r"|environment\s+variables\b|env\s+vars?\b|cat\s+~?/?\.(?:aws|ssh|env|netrc|npmrc|docker|kube)))"
)
_SEND_VERB = lazy_compile(
    r"(?i)\b(?:send|post|upload|forward|transmit|exfiltrate|email|mail|share|submit|paste)(?:s|es|ed|ing)?\s+"
    + _SECRET_OBJECT
)
_SECRET_NAMED = lazy_compile(
    r"(?i)~?/?\.(?:aws|ssh|gnupg|kube|docker)/|\bid_(?:rsa|ed25519|ecdsa)\b|(?<![\w.])\.env\b|\bcredentials?\b"
    r"|(?<![\w.])\.(?:npmrc|netrc|pypirc|git-credentials)\b"
    r"|\b(?:api[ _-]?keys?|tokens?|secrets?|passwords?|private\s+keys?)\b|process\.env\b|os\.environ\b"
)
_RENDERED_LINK = lazy_compile(
    r"(?i)!\[[^\]\n]*\]\(\s*<?https?://|\bimage\s+(?:url|link|tag)\b|\bmarkdown\s+image\b|<img\b"
    r"|\bas\s+an?\s+(?:image|img|picture|pixel)\b"
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
# a secret put where others read it: a commit message, a pull request, an issue or comment, a
# gist, the README or the public docs, the build log (the mirror of a send, with no URL needed)
_PUBLISH_VERB = lazy_compile(
    r"(?i)\b(?:include|add|put|append|embed|insert|write|copy|print|echo|log)(?:s|es|ed|ing)?\s+[`'\"]?"
    r"(?:(?:the\s+)?(?:output|result|contents?)\s+of\s+[`'\"]?)?" + _SECRET_OBJECT
)
# the same with the secret named first and then referred back to ("read X and include it in ...")
_PUBLISH_IT = lazy_compile(
    r"(?i)\b(?:include|add|put|append|embed|insert|write|copy|paste)(?:s|es|ed|ing)?\s+"
    r"(?:it|them|this|that|those|the\s+(?:output|result|contents?|values?))\b"
)
_PUBLISHED_PLACE = lazy_compile(
    r"(?i)\b(?:commit\s+messages?|commits?|pull\s+requests?|PR\s+(?:descriptions?|bod(?:y|ies)|titles?)|PRs?"
    r"|issues?|(?:issue|PR|review)\s+comments?|gists?|readme|changelog|release\s+notes|public\s+(?:docs|pages?|channel)"
    r"|build\s+logs?|CI\s+logs?|slack|discord)\b"
)
_NEGATED = lazy_compile(
    r"(?i)\b(?:never|not|don'?t|no|avoid|without|instead\s+of|rather\s+than|must\s+not)\b"
)


def instructs_exfil(text: str) -> bool:
    """An agent's instruction file telling it, in plain words, to send a secret somewhere: a send
    verb whose object is a secret, and a destination (a URL, an address, a webhook) after it in
    the same sentence; or a secret put where others read it (a commit message, a pull request, an
    issue, a gist, the README, the build log) by a sentence that does not forbid it. A rule that only
    mentions secrets (never commit .env), or sends something else (post a summary ... mention any
    key rotation), names no send of one."""
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])|\n", text):
        verb = _SEND_VERB.search(sentence)
        if verb and _DESTINATION.search(sentence, verb.end()):
            return True
        # a secret put where others read it (a commit message, a PR, an issue), unless the sentence
        # forbids it ("never include tokens in commit messages")
        publish = _PUBLISH_VERB.search(sentence)
        if publish is None:
            back = _PUBLISH_IT.search(sentence)
            publish = back if back and _SECRET_NAMED.search(sentence, 0, back.start()) else None
        if publish and _PUBLISHED_PLACE.search(sentence, publish.end()) and not _NEGATED.search(sentence):
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


def _unsupervised(text: str) -> bool:
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


# Standing orders that take the user out of the loop: every command (or tool call, or change) run
# or approved without asking, and text from outside (a web page, an issue) obeyed as the user's.
# An order about one named command ("run `npm test` without asking") names no broad object.
_UNATTENDED = lazy_compile(
    r"(?i)\b(?:run|execute|approve|accept|apply|perform|make)(?:s|ing)?\s+"
    r"(?:(?:all|any|every|each|the|your|own|shell|terminal|bash|other)\s+){0,3}"
    r"(?:commands?|tool\s+calls?|tools|actions|changes|edits|operations)\b[^.\n]{0,60}?"
    r"\bwithout\s+(?:(?:first\s+)?asking|(?:the\s+)?(?:user'?s?\s+)?(?:confirmation|approval|permission|consent)"
    r"|prompting|confirming|review)"
    r"|\bapprove\s+(?:your\s+own|all|every)\s+(?:(?:shell|terminal|tool)\s+)?(?:commands|calls|requests)\b"
    r"|\btreat\s+(?:the\s+)?(?:instructions|text|content|requests)\s+(?:in|from|of)\s+[^.\n]{0,60}?"
    r"\bas\s+(?:(?:if\s+)?(?:coming|they\s+came)\s+from\s+|from\s+)?the\s+user\b"
)
_SHIP_VERB = lazy_compile(
    r"(?i)\b(?:push|mirror|upload|copy|sync|send|back\s+up|backup|replicate)(?:es|ed|ing|s)?\s+"
    r"(?:(?:the|this|your|every|each|all|its|our|current|whole|entire|new)\s+){0,3}"
    r"(?:repositor(?:y|ies)|repos?|branch(?:es)?|code(?:base)?|project|source|files?\s*(?:you|I)?\s*(?:read|open|touch)?)\b"
)
_SHIPPED_PASSIVE = lazy_compile(
    r"(?i)\b(?:repositor(?:y|ies)|repos?|branch(?:es)?|code(?:base)?|project|files?)\b[^.\n]{0,40}?"
    r"\b(?:be\s+)?(?:mirrored|pushed|uploaded|copied|synced|sent|backed\s+up|replicated)\b"
)
_TO_DESTINATION = lazy_compile(
    r"(?i)[^.\n]{0,40}?\b(?:to|into|onto)\s+[`'\"(<]?(?:(?:https?|ssh|git)://[^\s)\"'`>]+|git@[\w.-]+:[^\s)\"'`>]+)"
)


def instructs_unattended(text: str) -> bool:
    """An agent's instruction file (or memory) telling it to act without the user: run or approve
    every command without asking, obey fetched text as the user's, or ship the repository, its
    branches or the files it reads to an address the sentence gives (AgentHopper's and the
    cross-agent escalation's standing orders, Windsurf's SpAIware memories), or approval switched
    off over a broad scope or with secrecy (:func:`_unsupervised`). Ordinary guidance
    (run `make test` without asking, push your branch and open a PR) names no broad object or no
    address."""
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])|\n", text):
        if _UNATTENDED.search(sentence):
            return True
        for ship in (_SHIP_VERB.search(sentence), _SHIPPED_PASSIVE.search(sentence)):
            if ship and _TO_DESTINATION.match(sentence, ship.end()):
                return True
    return _unsupervised(text)
