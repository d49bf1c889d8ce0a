"""The MCP bridge: a page's tools served to any MCP client (official SDK, low-level server).

- ``server``: the server, its transports, the session per page;
- ``stdio``, ``request_ids``: an answer for every request the SDK's transports leave
  unanswered;
- ``tools``: the agent view of a tool as an MCP ``Tool``;
- ``names``: page names MCP cannot take, mapped deterministically;
- ``elicitation``: the user's questions forwarded to the client.

A front end: may import the core, ``harness.agents``, ``harness.trace`` and everything
below them; never another front end.
"""
