"""The event: an immutable record with a type, a schema version, a body and links.

What is hashed is the canonical CBOR of the map ``{"type", "schema", "body", "refs"}`` (refs
as a list of 32-byte digests), so an event's kind and version are part of its address, and two
events with equal content have one address whatever the order their dicts were built in.

Events stored before the ``binary-refs`` extension (``ledger.format``) spell their refs as
address strings; they are read as they were written and keep their addresses. An event's refs
are all of one spelling: a list mixing them is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ledger.address import PREFIX, digest_of, format_address, is_address
from ledger.codec import decode, encode_event, loads_trusted
from ledger.errors import AddressError, FormatError

__all__ = ["Event", "address_of"]

_FIELDS = frozenset({"type", "schema", "body", "refs"})


@dataclass(frozen=True, slots=True, init=False)
class Event:
    """One immutable event.

    ``type`` names the kind of event (``"run.started"``), ``schema`` is the version of its body's
    shape (read old ones through upcasters), ``body`` holds the content (values allowed by
    ``ledger.encode``) and ``refs`` the addresses of the events it points at (any iterable of
    addresses; kept as a tuple).
    """

    type: str
    schema: int
    body: Mapping[str, Any]
    refs: tuple[str, ...]

    def __init__(
        self, type: str, schema: int, body: Mapping[str, Any], refs: Iterable[str] = ()
    ) -> None:
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "schema", schema)
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "refs", refs)
        self._check()

    def _check(self) -> None:
        if not isinstance(self.type, str) or not self.type:
            raise FormatError(f"an event's type must be a non-empty string, not {self.type!r}")
        schema = self.schema
        if isinstance(schema, bool) or not isinstance(schema, int) or not 0 <= schema < 2**64:
            raise FormatError(
                f"an event's schema must be an integer from 0 to 2**64-1, not {schema!r}"
            )
        if type(self.body) is not dict and not isinstance(self.body, Mapping):
            raise FormatError(f"an event's body must be a mapping, not {type(self.body).__name__}")
        refs = self.refs
        if isinstance(refs, str):
            raise FormatError("an event's refs must be a sequence of addresses, not one string")
        if type(refs) is not tuple:
            refs = tuple(refs)
            object.__setattr__(self, "refs", refs)
        for ref in refs:
            if not is_address(ref):
                raise AddressError(
                    f"an event's refs must be full addresses ('sha256:' and 64 hex digits), "
                    f"not {ref!r}"
                )

    def to_bytes(self) -> bytes:
        """The canonical CBOR bytes whose SHA-256 is this event's address."""
        body = self.body if type(self.body) is dict else dict(self.body)
        return encode_event(self.type, self.schema, body, self.refs)

    @classmethod
    def from_bytes(cls, data: bytes) -> Event:
        """Read an event from its canonical bytes, refusing any other encoding or shape."""
        return _from_map(decode(data))


def address_of(event: Event) -> str:
    """The address of ``event``: ``sha256:`` + the hex SHA-256 of its canonical bytes."""
    return format_address(digest_of(event.to_bytes()))


def _from_map(obj: Any) -> Event:
    if not isinstance(obj, dict) or obj.keys() != _FIELDS:
        keys = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
        raise FormatError(
            f"bytes are not an event: expected a map of {sorted(_FIELDS)}, got {keys}"
        )
    refs = obj["refs"]
    if not isinstance(refs, list):
        raise FormatError(f"bytes are not an event: refs must be a list, not {refs!r}")
    if not isinstance(obj["body"], dict):
        raise FormatError("bytes are not an event: its body is not a map")
    if refs and all(type(ref) is bytes for ref in refs):
        if any(len(ref) != 32 for ref in refs):
            raise FormatError("bytes are not an event: a ref is not a 32-byte digest")
        refs = [format_address(ref) for ref in refs]
    elif not all(type(ref) is str for ref in refs):
        raise FormatError("bytes are not an event: its refs mix digests and address strings")
    return Event(obj["type"], obj["schema"], obj["body"], tuple(refs))


# The slots' own setters fill in a frozen Event without going through its __setattr__.
_new = object.__new__
_set_type = Event.__dict__["type"].__set__
_set_schema = Event.__dict__["schema"].__set__
_set_body = Event.__dict__["body"].__set__
_set_refs = Event.__dict__["refs"].__set__


def event_from_trusted(data: bytes) -> Event:
    """Rebuild an event from bytes whose hash was just checked against their address.

    Bytes that hash to a stored address are the bytes that were validated when the event was
    written, so the strict decode and the field checks are skipped on this read path.
    """
    obj = loads_trusted(data)
    event = _new(Event)
    _set_type(event, obj["type"])
    _set_schema(event, obj["schema"])
    _set_body(event, obj["body"])
    _set_refs(event, tuple(ref if type(ref) is str else PREFIX + ref.hex() for ref in obj["refs"]))
    return event
