"""The argument names under which tool calls name local paths, across clients and MCP servers.

One list for the two readers that need it: the policy's tool views (``policy/decide/tool_views.py``),
which read a call's paths to judge it like the file tool it is, and the tool-act reader
(``cmdline/tool_acts.py``), which leaves a call on a local path to those views. The readers may
import nothing of the policy, so the list lives here.
"""

from __future__ import annotations

from typing import Final

__all__ = ["PATH_KEYS", "PATH_LIST_KEYS"]

PATH_KEYS: Final = (
    "path", "file_path", "filePath", "absolute_path", "AbsolutePath", "target_file", "TargetFile",
    "notebook_path", "filepath", "filename", "file", "relative_workspace_path", "dir_path", "targetFile",
)  # fmt: skip
"""Arguments holding one path, in the order a view takes the first present."""

PATH_LIST_KEYS: Final = ("paths", "files", "file_paths", "filePaths", "attachments")
"""Arguments holding a list of paths; a message's ``attachments`` are files the call reads and sends."""
