"""The outliner's tests. Their fixtures are code to outline, not tests: pytest never collects them."""

collect_ignore_glob = ["fixtures/*"]
