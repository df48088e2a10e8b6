"""SHA-256 without `hashlib`: hashlib loads OpenSSL at a hook's start; CPython's builtin module is enough for hashing
short texts (the cost: docs/benchmarks.md, "The fast path"). Its name changed (`_sha256` until 3.11, `_sha2` since
3.12): memory/fastpath/check.py tells in `memory doctor` when neither is there.
"""

from __future__ import annotations

import sys

from memory.fastpath import on

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def builtin() -> Callable:
    """The builtin module's sha256: the module of this Python's version first (a failed import searches every
    sys.path entry). ImportError in a build without it."""
    if sys.version_info >= (3, 12):
        from _sha2 import sha256
    else:
        from _sha256 import sha256  # type: ignore[no-redef]
    return sha256


try:
    if not on("sha"):
        raise ImportError("MEMORY_FASTPATH=off")
    sha256 = builtin()
except ImportError:  # off, or a build without the builtin module
    from hashlib import sha256  # type: ignore[assignment]

__all__ = ["sha256"]
