"""SHA-256 without `hashlib`: hashlib loads OpenSSL (~3-5 ms of a hook's start); the builtin module is
enough for hashing short texts."""

from __future__ import annotations

import sys

# The module of this Python's version first: a failed import searches every sys.path entry (~0.05 ms).
try:
    if sys.version_info >= (3, 12):
        from _sha2 import sha256
    else:
        from _sha256 import sha256  # type: ignore[no-redef]
except ImportError:  # a build without the builtin module
    from hashlib import sha256  # type: ignore[no-redef]

__all__ = ["sha256"]
