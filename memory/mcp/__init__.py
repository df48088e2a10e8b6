"""The MCP server: a fast front that answers the handshake from a cache, and the real server behind it.

Cold side, the layer under cli: may import every other memory package but cli. Nothing imports it except
the CLI's `memory mcp` command, which starts it."""
