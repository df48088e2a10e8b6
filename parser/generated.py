"""Public names of generated protobuf Python modules (`*_pb2.py`), which the syntax tree does not show.

protoc's modules define their message classes at run time: the current generator from a serialized
FileDescriptorProto (`AddSerializedFile(b'...')`, then `_builder.BuildTopDescriptorsAndMessages`), the older
one by `Foo = _reflection.GeneratedProtocolMessageType('Foo', ...)`. What the source spells out is private
descriptors (`_FOO = _descriptor.Descriptor(...)`, `_globals['_FOO']._serialized_start=...`). This module reads
the message, enum and service names from the serialized descriptor (the protobuf wire format, decoded here:
no protobuf import) or from the older assignments, and the outliner lists those instead of the descriptors.
Imported only for a `_pb2.py` file.
"""

from __future__ import annotations

import codecs
import re

from parser.outline import Symbol

_SERIALIZED = re.compile(rb"AddSerializedFile\(\s*(b'(?:[^'\\]|\\.)*'|b\"(?:[^\"\\]|\\.)*\")")
_LEGACY = re.compile(rb"^([A-Za-z_]\w*) = (?:_reflection\.GeneratedProtocolMessageType|"
                     rb"enum_type_wrapper\.EnumTypeWrapper|_descriptor\.ServiceDescriptor)\(", re.M)

# FileDescriptorProto: 4 message_type, 5 enum_type, 6 service; DescriptorProto: 1 name, 3 nested_type,
# 4 enum_type; EnumDescriptorProto: 1 name, 2 value (EnumValueDescriptorProto: 1 name); ServiceDescriptorProto:
# 1 name.
_FILE_MESSAGE, _FILE_ENUM, _FILE_SERVICE = 4, 5, 6
_NAME, _NESTED, _MESSAGE_ENUM, _ENUM_VALUE = 1, 3, 4, 2


def _fields(data: bytes) -> list[tuple[int, bytes | int]]:
    """(field number, value) of one protobuf message: bytes for length-delimited fields, ints for varints."""
    out: list[tuple[int, bytes | int]] = []
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
            out.append((number, value))
        elif wire == 2:
            size, i = _varint(data, i)
            out.append((number, data[i:i + size]))
            i += size
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise ValueError(f"wire type {wire}")
    return out


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, i
        shift += 7


def _name(fields: list[tuple[int, bytes | int]]) -> str:
    return next((v.decode("utf-8", "replace") for n, v in fields if n == _NAME and isinstance(v, bytes)), "?")


def _enum(fields: list[tuple[int, bytes | int]]) -> tuple[str, list[str]]:
    values = [_name(_fields(v)) for n, v in fields if n == _ENUM_VALUE and isinstance(v, bytes)]
    return _name(fields), values


def _message(data: bytes, parent: str | None, depth: int, line: int, out: list[Symbol]) -> None:
    fields = _fields(data)
    name = _name(fields)
    out.append(Symbol(name, "class", line, line, f"class {name}(Message)", parent, None, depth))
    qualified = f"{parent}.{name}" if parent else name
    for number, value in fields:
        if isinstance(value, bytes) and number == _NESTED:
            _message(value, qualified, depth + 1, line, out)
        elif isinstance(value, bytes) and number == _MESSAGE_ENUM:
            out.append(_enum_symbol(_fields(value), qualified, depth + 1, line))


def _enum_symbol(fields: list[tuple[int, bytes | int]], parent: str | None, depth: int, line: int) -> Symbol:
    name, values = _enum(fields)
    return Symbol(name, "enum", line, line, f"enum {name} {{{', '.join(values)}}}", parent, None, depth)


def _serialized_symbols(source: bytes) -> list[Symbol] | None:
    match = _SERIALIZED.search(source)
    if match is None:
        return None
    line = source.count(b"\n", 0, match.start()) + 1
    data = codecs.escape_decode(match.group(1)[2:-1])[0]
    out: list[Symbol] = []
    for number, value in _fields(data):
        if not isinstance(value, bytes):
            continue
        if number == _FILE_MESSAGE:
            _message(value, None, 0, line, out)
        elif number == _FILE_ENUM:
            out.append(_enum_symbol(_fields(value), None, 0, line))
        elif number == _FILE_SERVICE:
            name = _name(_fields(value))
            out.append(Symbol(name, "class", line, line, f"service {name}", None, None, 0))
    return out


def _legacy_symbols(source: bytes) -> list[Symbol]:
    out = []
    for match in _LEGACY.finditer(source):
        name = match.group(1).decode()
        line = source.count(b"\n", 0, match.start()) + 1
        kind = "enum" if b"EnumTypeWrapper" in match.group(0) else "class"
        out.append(Symbol(name, kind, line, line, f"{'enum' if kind == 'enum' else 'class'} {name}", None, None, 0))
    return out


def protobuf_symbols(source: bytes, symbols: list[Symbol]) -> list[Symbol]:
    """`symbols` of a `_pb2.py` module with its message classes, enums and services added (each on the line
    that defines it) and its private descriptors (`_FOO`, `_globals`) left out."""
    try:
        found = _serialized_symbols(source)
    except (ValueError, IndexError):  # not a descriptor after all: the older form, or nothing
        found = None
    if found is None:
        found = _legacy_symbols(source)
    public = {s.name for s in found if s.depth == 0}
    kept = [s for s in symbols if not s.name.startswith("_") and s.name not in public]
    for symbol in kept:  # DESCRIPTOR = ...AddSerializedFile(b'...'): the bytes are the classes listed
        cut = symbol.signature.find("(b'") if "(b'" in symbol.signature else symbol.signature.find('(b"')
        if cut > 0:
            symbol.signature = symbol.signature[:cut] + "(…)"
    return sorted(kept + found, key=lambda s: s.start_line)
