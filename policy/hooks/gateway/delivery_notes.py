"""Notes a hook leaves when what it told the agent is not its gateway's answer.

A hook that sent its event to the gateway and then lost the answer (the gateway died or broke
the protocol, or went silent with no time left to decide in process) gives the event's safe
answer. The gateway may have decided and recorded the event already, with another outcome
(``ls`` passed), so the log alone would not say what the agent was told. The hook cannot append
to the hash-chained log itself (the fast client has no audit writer), so it leaves a note in the
runtime folder, ``<key>.told/<request>.json`` (the folder is 0700, self-protection guards it);
the gateway serving the deployment (the running one, or the next to start) appends each note to
the log as a ``hook_told`` record naming the request id its decision record carries
(``delivery.request``), and removes it.

Standard library only; the client imports this only on its failure path.
"""

from __future__ import annotations

import os

TOLD_SUFFIX = ".told"
MAX_NOTE_BYTES = 8192
MAX_NOTES_PER_PASS = 256
_FIELDS = ("request", "harness", "event", "told", "why")


def notes_folder(folder: str, key: str) -> str:
    """Where the notes of deployment ``key`` wait for its gateway."""
    return os.path.join(folder, key + TOLD_SUFFIX)


def leave_note(
    folder: str, key: str, request: str, harness: str, event: str | None, told: dict[str, object], why: str
) -> None:
    """Leave a note (best effort: a note that cannot be written is a log line fewer, never a
    changed answer). Written aside and renamed, so the gateway never reads half a note."""
    import json

    target = notes_folder(folder, key)
    try:
        os.mkdir(target, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return
    note = {"request": request, "harness": harness, "event": event, "told": told, "why": why[:500]}
    data = json.dumps(note, ensure_ascii=True, sort_keys=True).encode("ascii")[:MAX_NOTE_BYTES]
    temporary = os.path.join(target, f".{request}.{os.getpid()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(temporary, os.path.join(target, request + ".json"))
    except OSError:
        remove_note(temporary)


def pending_notes(folder: str, key: str) -> list[tuple[str, dict[str, object] | None]]:
    """The notes waiting (path, note; None for one that cannot be read as a note), oldest first,
    at most :data:`MAX_NOTES_PER_PASS`."""
    import json

    target = notes_folder(folder, key)
    try:
        names = [name for name in os.listdir(target) if name.endswith(".json") and not name.startswith(".")]
    except OSError:
        return []
    found: list[tuple[float, str]] = []
    for name in names:
        path = os.path.join(target, name)
        try:
            found.append((os.lstat(path).st_mtime, path))
        except OSError:
            continue
    notes: list[tuple[str, dict[str, object] | None]] = []
    for _, path in sorted(found)[:MAX_NOTES_PER_PASS]:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            try:
                data = os.read(fd, MAX_NOTE_BYTES + 1)
            finally:
                os.close(fd)
            document = json.loads(data) if len(data) <= MAX_NOTE_BYTES else None
        except (OSError, ValueError):
            document = None
        notes.append((path, _checked(document)))
    return notes


def _checked(document: object) -> dict[str, object] | None:
    if not isinstance(document, dict) or set(document) != set(_FIELDS):
        return None
    if not all(isinstance(document[name], str) for name in ("request", "harness", "why")):
        return None
    if not isinstance(document["told"], dict) or not (
        document["event"] is None or isinstance(document["event"], str)
    ):
        return None
    return document


def remove_note(path: str) -> None:
    """The note is recorded (or unreadable and reported): remove it."""
    try:  # noqa: SIM105 - contextlib is one import more on the hook client's path
        os.unlink(path)
    except OSError:
        pass
