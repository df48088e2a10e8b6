"""Figures, reports and text shared by the CLI and the MCP server: stats, doctor, the secrets audit, dates
and sizes (text.py).

Cold side: may import the packages below it (worker, learn, team, hook, recall, outline, capture, store,
base). Must not import click or mcp (those belong to the cli and mcp packages that print what these
modules return)."""
