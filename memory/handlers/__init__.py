"""One module per hook event; each exposes `handle(event) -> dict | None`."""
