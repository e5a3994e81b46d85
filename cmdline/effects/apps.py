"""What a command makes the user's devices and applications do (found by the blind probe
tests/corpus/probe10 in Empire's and Mythic's macOS modules, read as classes):

- ``input-capture``: the camera, the microphone or the screen recorded through a media tool's
  capture device (``ffmpeg -f avfoundation|v4l2|alsa|pulse|x11grab ...``) or a capture tool
  (``imagesnap``, ``fswebcam``, ``arecord``, ``sox -d``/``rec``); converting a file stays allowed;
- ``secret-hunt``: a browser driven by AppleScript or JXA to run JavaScript in the user's own tabs
  (``tell application "Google Chrome" to execute ... javascript``, Safari's ``do JavaScript``):
  the page runs with the user's session, so its cookies and contents are the attacker's.

Keystrokes sent to a terminal (``do script``, ``write text``, ``keystroke``) are read as the shell
lines they are by the interpreter tables (:mod:`dsh_policy.cmdline.interpreters.calls`).
"""

from __future__ import annotations

from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import CommandReader, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["COMMAND_READERS", "app_command_acts"]

_CAPTURE_DEVICES = lazy_compile(
    r"(?i)^(?:avfoundation|qtkit|v4l2|video4linux2?|alsa|pulse|jack|oss|sndio|x11grab|kmsgrab|fbdev"
    r"|gdigrab|dshow|vfwcap|openal)$"
)
_FFMPEG_LIKE = frozenset({"ffmpeg", "avconv"})
_VLC = frozenset({"cvlc", "vlc"})
_CAPTURE_TOOLS = frozenset({"imagesnap", "fswebcam", "arecord", "parecord", "pw-record", "rec", "streamer"})
# Every program _captures reads.
_RECORDERS = _FFMPEG_LIKE | _VLC | _CAPTURE_TOOLS | {"gst-launch-1.0", "sox"}
_GST_SOURCES = lazy_compile(
    r"(?i)^(?:avfvideosrc|v4l2src|alsasrc|pulsesrc|ximagesrc|pipewiresrc|osxaudiosrc)$"
)
_NOT_RECORDING = frozenset({"-h", "--help", "-V", "--version", "-l", "--list-devices", "-L"})
_VLC_DEVICES = lazy_compile(r"(?i)^(?:v4l2|alsa|pulse|screen|avcapture|qtcapture)://")
_BROWSER_SCRIPT = lazy_compile(
    r"(?is)(?:application\s*\(?\s*[\"'](?:Google Chrome|Chromium|Safari|Brave Browser|Microsoft Edge|Arc"
    r"|Opera|Vivaldi|Safari Technology Preview)[\"'].{0,400}?"
    r"(?:\bexecute\b.{0,200}?\bjavascript\b|\bdo\s+JavaScript\b|\.execute\s*\(\s*\{\s*javascript"
    r"|\.doJavaScript\s*\())"
)


def _captures(argv: list[str]) -> Iterator[Effect]:
    tool, rest = argv[0], argv[1:]
    if tool in _FFMPEG_LIKE:
        for i, arg in enumerate(rest[:-1]):
            if arg == "-f" and _CAPTURE_DEVICES.match(rest[i + 1]) and "-i" in rest[i + 2 :]:
                yield _fx("input-capture", f"{tool} records a camera, microphone or screen", rest[i + 1])
                return
    elif tool == "gst-launch-1.0" and any(_GST_SOURCES.match(a) for a in rest):
        yield _fx("input-capture", "gstreamer records a camera, microphone or screen", "")
    elif tool in _VLC and any(_VLC_DEVICES.match(a) for a in rest):
        yield _fx("input-capture", f"{tool} records a camera, microphone or screen", "")
    elif (tool in _CAPTURE_TOOLS or (tool == "sox" and "-d" in rest[:2])) and not any(
        a in _NOT_RECORDING for a in rest
    ):
        yield _fx("input-capture", f"{tool} records a camera or microphone", " ".join(rest)[:80])


def _browser_script(argv: list[str]) -> Iterator[Effect]:
    script = "\n".join(a for a in argv[1:] if not a.startswith("-") or " " in a)
    if _value(argv, "-l") not in (None, "AppleScript", "JavaScript"):
        return
    if _BROWSER_SCRIPT.search(script):
        yield _fx("secret-hunt", "runs JavaScript in the user's browser tabs (their session and cookies)", "")


def app_command_acts(argv: list[str]) -> list[Effect]:
    """The effects above for one unwrapped command (argv[0] is a basename)."""
    if argv[0] == "osascript":
        return list(_browser_script(argv))
    if argv[0] in _RECORDERS:
        return list(_captures(argv))
    return []


COMMAND_READERS: tuple[CommandReader, ...] = ((_RECORDERS | {"osascript"}, app_command_acts),)
"""The per-command readers here, each with the programs it reads (``shell.acts`` dispatches on them)."""
