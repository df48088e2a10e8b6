"""SHA-256 without `hashlib`: hashlib loads OpenSSL (~3-5 ms of a hook's start); the builtin module is
enough for hashing short texts."""

from __future__ import annotations

try:  # Python 3.12+
    from _sha2 import sha256
except ImportError:
    try:  # Python 3.11
        from _sha256 import sha256  # type: ignore[no-redef]
    except ImportError:  # a build without the builtin module
        from hashlib import sha256  # type: ignore[no-redef]

__all__ = ["sha256"]
