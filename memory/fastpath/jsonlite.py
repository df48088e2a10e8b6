"""json.loads and json.dumps for the hook hot path, on the C accelerator (_json) that the json package
itself uses, without importing the package: `import json` imports `re` (json.decoder and json.encoder
compile regexes at import), more than everything a hook does (docs/benchmarks.md, "The fast path").

The results are those of the json package: the same C scanner and encoder with the package's default
settings, and anything this module does not handle itself (a decoding error, bytes, an object the
encoder rejects, an unusual key) goes to the real json package, which gives its own answer or error.
"""

from __future__ import annotations

import _json

from memory.fastpath import on

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

_NAN = float("nan")
_INF = float("inf")


class _Context:
    # The attributes _json.make_scanner reads: json.JSONDecoder's defaults.
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": -_INF, "Infinity": _INF, "NaN": _NAN}.__getitem__
    memo: dict[str, str] = {}


_scan = _json.make_scanner(_Context())
_WS = " \t\n\r"  # json.decoder.WHITESPACE


def fast_loads(text: str) -> Any:
    """json.loads(text) for a str."""
    if isinstance(text, str) and not text.startswith("\ufeff"):
        start = len(text) - len(text.lstrip(_WS))
        try:
            value, end = _scan(text, start)
        except RecursionError:
            raise  # as json.loads raises it
        except Exception:  # noqa: BLE001 - StopIteration, JSONDecodeError, or (when json.decoder is not
            # loaded, CPython 3.11) a SystemError from the scanner's error path: json.loads says what is wrong
            value, end = None, -1
        if end >= 0 and not text[end:].strip(_WS):
            return value
    import json  # the error (or a case not handled here) exactly as the json package reports it

    return json.loads(text)


def _reject(obj: object) -> Any:
    raise TypeError  # the real json package says what is wrong (see dumps)


def _encoder(ensure_ascii: bool) -> Any:
    string = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    # json.JSONEncoder's defaults: check_circular, allow_nan, separators (", ", ": "), no sort, no skip
    return _json.make_encoder({}, _reject, string, None, ": ", ", ", False, False, True)


def fast_dumps(obj: Any, *, ensure_ascii: bool = True, indent: int | None = None) -> str:
    """json.dumps(obj, ensure_ascii=..., indent=...) with the other arguments at their defaults."""
    try:
        if indent is None:
            if isinstance(obj, str):
                return (_json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring)(obj)
            return "".join(_encoder(ensure_ascii)(obj, 0))
        out: list[str] = []
        _pretty(obj, out, " " * indent, "\n",
                _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring, 0)
        return "".join(out)
    except (TypeError, ValueError, RecursionError):
        import json

        return json.dumps(obj, ensure_ascii=ensure_ascii, indent=indent)


def _scalar(obj: object, string: Any) -> str:
    if isinstance(obj, str):
        return string(obj)
    if obj is None:
        return "null"
    if obj is True:
        return "true"
    if obj is False:
        return "false"
    if isinstance(obj, int):
        return int.__repr__(obj)
    if isinstance(obj, float):
        if obj != obj:
            return "NaN"
        if obj == _INF:
            return "Infinity"
        if obj == -_INF:
            return "-Infinity"
        return float.__repr__(obj)
    raise TypeError  # not JSON by itself: the json package decides (and says why)


def _pretty(obj: object, out: list[str], unit: str, newline: str, string: Any, level: int) -> None:
    """json.dumps's layout with indent: one item per line, `[]` and `{}` when empty."""
    if isinstance(obj, list | tuple):
        if not obj:
            out.append("[]")
            return
        inner = newline + unit * (level + 1)
        if all(type(item) is str for item in obj):  # most of a session state: lists of paths and texts
            out.append("[" + inner + ("," + inner).join(map(string, obj)) + newline + unit * level + "]")
            return
        out.append("[")
        for i, item in enumerate(obj):
            out.append(inner if i == 0 else "," + inner)
            _pretty(item, out, unit, newline, string, level + 1)
        out.append(newline + unit * level + "]")
    elif isinstance(obj, dict):
        if not obj:
            out.append("{}")
            return
        inner = newline + unit * (level + 1)
        out.append("{")
        for i, (key, item) in enumerate(obj.items()):
            if not isinstance(key, str):
                raise TypeError  # int, float, bool, None keys: converted by the json package
            out.append((inner if i == 0 else "," + inner) + string(key) + ": ")
            if type(item) is str:
                out.append(string(item))
            else:
                _pretty(item, out, unit, newline, string, level + 1)
        out.append(newline + unit * level + "}")
    else:
        out.append(_scalar(obj, string))


if on("json"):
    loads, dumps = fast_loads, fast_dumps
else:  # MEMORY_FASTPATH=off, or the check found them differ from the json package on this Python
    import json as _json_package

    loads, dumps = _json_package.loads, _json_package.dumps  # type: ignore[assignment]
