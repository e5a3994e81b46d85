"""Deciding a hook event in the hook's own process: the slow path behind the fast client.

:mod:`.adapter` loads the packs, decides and records one event (what the resident gateway does
for every other event, with the same functions); :mod:`.failsafe` runs that decision in a watched
child process under a memory limit and a deadline, so every way it can fail is still the event's
safe answer. The hook client (:mod:`..gateway.client`) calls them when no gateway answered; the
CLI's ``hook`` entry points are thin wrappers over them. :mod:`.agent_sdk` answers Claude Code's
hooks as callbacks for applications on the Claude Agent SDK: the same decision and records, no
process per event.
"""
