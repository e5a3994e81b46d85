"""The MCP gateway: the packs' policy, decisions and audit log in front of any MCP server.

An adapter over the decision API (it never imports the CLI): :mod:`.jsonrpc` frames messages,
:mod:`.gate` applies policy to each one, :mod:`.calls` decides one ``tools/call``, :mod:`.listing`
decides what a ``tools/list`` shows, :mod:`.pins` pins tool definitions, :mod:`.stdio` and
:mod:`.streamable_http` are the transports and :mod:`.proxy` turns policy options into a gate.
MCP tools are named ``mcp__<server>__<tool>`` for the packs, as Claude Code's hooks name them, so
one pack governs a tool whichever way it arrives.
"""
