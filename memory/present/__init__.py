"""Figures and reports shared by the CLI and the MCP server: stats, doctor, the secrets audit.

Cold side: may import base, store, capture, recall, learn and team. Must not import click or mcp (those
belong to the cli and mcp packages that print what these modules return)."""
