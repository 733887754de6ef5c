"""Reading a reply's body whole, within a size limit, however the server sends it.

Both HTTP clients (an ``http`` system's and the providers') read a body here, as it arrives,
keeping at most ``limit`` bytes of it: a reply far larger than any answer (a runaway stream, a
body that never ends) fails once it passes the limit rather than when memory runs out.

They ask for gzip or deflate only (``ACCEPT_ENCODING``) and the body is decoded here, a piece at
a time and never beyond the limit. httpx would decode each 64 KiB piece it receives whole,
before anything could count it, and it asks for zstd whenever ``zstandard`` is installed (it is
one of Oloproof's own dependencies): a zstd frame of 2 GiB of zeros is 64 KiB, and gzip inside
gzip turns a few KiB into a gigabyte. So a body in a coding not asked for, or in more than one,
is not read at all. Nor is a compressed body that is not what it claims, that stops part way
through its stream, or that goes on after it ended: httpx would pass on what it had decoded
and drop the rest, a partial body read as if it were whole.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

ACCEPT_ENCODING = "gzip, deflate"
"""The ``Accept-Encoding`` both clients send: the codings ``read_body`` decodes."""

MAX_BODY_BYTES = 32 * 1024 * 1024
"""The most of a body either client reads, decoded: far beyond any answer or model reply."""

_CODINGS = {"gzip": "gzip", "x-gzip": "gzip", "deflate": "deflate"}


class UnreadableBody(Exception):
    """A body that was not read; the message completes "answered with a body that ..." or,
    for ``BodyTooLarge``, says how large it got."""


class BodyTooLarge(UnreadableBody):
    """A body larger than the limit; reading stopped there."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"is larger than {limit:,} bytes")
        self.limit = limit


async def read_body(response: httpx.Response, limit: int = MAX_BODY_BYTES) -> bytes:
    """``response``'s body (a streamed response, not yet read), decoded, of at most ``limit``
    bytes; ``UnreadableBody`` (``BodyTooLarge`` past the limit) for a body not read whole."""
    inflate = _inflater(response.headers.get("content-encoding", ""))
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(limit)
    chunks: list[bytes] = []
    size = 0
    async for raw in response.aiter_raw():
        # One more byte than may still come: getting it means the body is over the limit.
        chunk = raw if inflate is None else inflate.feed(raw, limit - size + 1)
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(limit)
        chunks.append(chunk)
    if inflate is not None:
        inflate.finish()
    return b"".join(chunks)


def unreadable_codings(accepted: str) -> list[str]:
    """The codings an ``Accept-Encoding`` value (``br;q=0.5, gzip``) lets a server answer in
    that ``read_body`` does not decode (``*`` is any)."""
    codings = (part.split(";")[0].strip().lower() for part in accepted.split(","))
    return [c for c in codings if c and c != "identity" and c not in _CODINGS]


def _inflater(header: str) -> _Inflater | None:
    codings = [c.strip().lower() for c in header.split(",")]
    codings = [c for c in codings if c not in ("", "identity")]
    if not codings:
        return None
    if len(codings) == 1 and codings[0] in _CODINGS:
        return _Inflater(_CODINGS[codings[0]])
    raise UnreadableBody(
        f"is in Content-Encoding {header.strip()}, which Oloproof does not ask for (it asks "
        "for gzip or deflate)"
    )


class _Inflater:
    """Decodes one gzip or deflate stream, piece by piece, each piece's output bounded."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._started = False
        wbits = zlib.MAX_WBITS | 16 if coding == "gzip" else zlib.MAX_WBITS
        self._zlib = zlib.decompressobj(wbits)

    def feed(self, data: bytes, most: int) -> bytes:
        """What ``data`` decodes to, at most ``most`` bytes of it (the rest is not decoded)."""
        if not data:
            return b""
        try:
            out = self._zlib.decompress(data, most)
        except zlib.error:
            if self.coding != "deflate" or self._started:
                raise UnreadableBody(f"is not the {self.coding} data it says it is") from None
            # Some servers send deflate without the zlib wrapper RFC 9110 asks for; httpx
            # reads both, and so does this (once: started, a second failure is final).
            self._started = True
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
            return self.feed(data, most)
        self._started = True
        if self._zlib.unused_data:
            raise UnreadableBody(f"goes on after the end of its {self.coding} stream")
        return out

    def finish(self) -> None:
        """Raise ``UnreadableBody`` when the stream fed so far stopped before its end."""
        if self._started and not self._zlib.eof:
            raise UnreadableBody(f"stops part way through its {self.coding} stream")
