"""Shared entrypoint for every hook process: one JSON event in, at most one JSON object out, exit 0."""

import gc
import os
import sys

# No cyclic garbage collection: a hook lives well under a second and makes few reference cycles (freed at
# exit), while its imports and a cold outline's tree nodes set off dozens of collections: 3-5% of a Read
# hook's instructions (callgrind), ~1 ms CPU of a cold C++ outline, ~0.7 ms of a cached one.
gc.disable()

# The hooks run from the plugin root, which need not be pip-installed: import `memory` from there. The
# plugin root takes the place of hooks/ (the script's folder, which Python put first and which nothing
# needs once this module is found), so the path is not one entry longer for every import to search.
sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _fast_path_finders(root: str) -> None:
    """The fast path's import finders (memory/fastpath/imports.py), loaded from their file before `memory` so
    that `memory` itself comes through them; none with MEMORY_FASTPATH=off, and taken out again when the check
    refused them on this Python (`memory` and `memory.fastpath` have then come through them)."""
    name, bootstrap = "memory.fastpath.imports", sys.modules["_frozen_importlib"]
    loader = sys.modules["_frozen_importlib_external"].SourceFileLoader(name, f"{root}/memory/fastpath/imports.py")
    module = bootstrap.module_from_spec(bootstrap.spec_from_loader(name, loader))
    sys.modules[name] = module
    loader.exec_module(module)
    module.install(root)
    from memory.fastpath import on

    if not on("imports"):
        module.uninstall()


_fast_path_finders(sys.path[0])

from memory.hook.run import run  # noqa: E402

__all__ = ["run"]
