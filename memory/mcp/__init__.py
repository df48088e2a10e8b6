"""The MCP server: a fast front that answers the handshake from a cache, and the real server behind it.

Cold side, top layer beside cli: may import every other memory package. Nothing imports it."""
