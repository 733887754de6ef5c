"""Addresses, prefixes, ref names, internal keys and ULIDs.

- A public address is ``sha256:`` followed by 64 lowercase hex digits: the SHA-256 of an
  event's canonical bytes. Inside the store it is kept as the 32 raw bytes of the digest.
- On input, any unique prefix of at least ``MIN_PREFIX`` hex digits is accepted, with or
  without ``sha256:`` and in either case, as are ref names.
- ``internal_key`` (blake3) is for fast internal identities such as cache keys; it is never
  shown as an address.
- ``new_ulid`` makes the 26-character ids used in run names (``run_<ULID>``).
"""

from __future__ import annotations

import hashlib
import os
import re
import string
import threading
import time
from collections.abc import Callable

from blake3 import blake3

from ledger.errors import AddressError, AmbiguousAddressError, UnknownAddressError

__all__ = [
    "DIGITS",
    "MIN_PREFIX",
    "PREFIX",
    "REF_NAME_MAX",
    "check_ref_name",
    "digest_of",
    "format_address",
    "hex_prefix",
    "internal_key",
    "is_address",
    "new_ulid",
    "parse_address",
    "resolve_with",
]

PREFIX = "sha256:"
DIGITS = 64  # hex digits in a full address
MIN_PREFIX = 8
REF_NAME_MAX = 200

_ADDRESS = re.compile(rf"sha256:[0-9a-f]{{{DIGITS}}}")
_HEX_PREFIX = re.compile(rf"(?:sha256:)?([0-9a-fA-F]{{{MIN_PREFIX},{DIGITS}}})")
_REF_NAME = re.compile(rf"[A-Za-z0-9_][A-Za-z0-9_.:@+=/-]{{0,{REF_NAME_MAX - 1}}}")
_SHOWN = 10  # candidates listed in an ambiguity error


def digest_of(data: bytes) -> bytes:
    """The raw SHA-256 digest of ``data``."""
    return hashlib.sha256(data).digest()


def format_address(digest: bytes) -> str:
    """The public address of a raw digest."""
    return PREFIX + digest.hex()


def is_address(text: object) -> bool:
    """Whether ``text`` is a well-formed full address."""
    return isinstance(text, str) and _ADDRESS.fullmatch(text) is not None


def parse_address(text: str) -> bytes:
    """The raw digest of a full address; ``AddressError`` if ``text`` is not one."""
    # On every read path, so no regex: fromhex checks the digits and the length check below
    # refuses the spaces it would skip. (Upper-case digits are accepted here.)
    if type(text) is str and len(text) == 71 and text.startswith(PREFIX):
        try:
            digest = bytes.fromhex(text[7:])
        except ValueError:
            pass
        else:
            if len(digest) == 32:
                return digest
    raise AddressError(f"{text!r} is not an address: expected 'sha256:' and 64 hex digits")


def hex_prefix(text: str) -> str | None:
    """The lowercase hex digits of ``text`` if it reads as an address or address prefix."""
    match = _HEX_PREFIX.fullmatch(text)
    return match.group(1).lower() if match else None


def check_ref_name(name: str) -> str:
    """Return ``name`` if it can be a ref name, else raise ``AddressError``.

    A ref name is 1–200 characters of letters, digits and ``_ . : @ + = / -``, starting with a
    letter, digit or underscore. It must not read as an address or a prefix of one, so that
    resolving text is never ambiguous between a name and a prefix.
    """
    if not isinstance(name, str) or _REF_NAME.fullmatch(name) is None:
        raise AddressError(
            f"{name!r} is not a valid ref name: use 1-{REF_NAME_MAX} letters, digits and "
            "_ . : @ + = / -"
        )
    if hex_prefix(name) is not None or name.startswith(PREFIX):
        raise AddressError(f"{name!r} cannot be a ref name: it reads as an address prefix")
    return name


def resolve_with(
    text: str,
    *,
    exact: Callable[[bytes], bool],
    ref: Callable[[str], str | None],
    by_prefix: Callable[[str, int], list[str]],
) -> str:
    """Resolve ``text`` to a full address using a store's three lookups.

    ``exact(digest)`` says whether an event is stored, ``ref(name)`` reads a ref, and
    ``by_prefix(hex, limit)`` lists up to ``limit`` stored addresses starting with ``hex``.
    """
    if not isinstance(text, str):
        raise AddressError(f"cannot resolve {text!r}: expected text")
    text = text.strip()
    hexpart = hex_prefix(text)
    if hexpart is not None and len(hexpart) == 64:
        if exact(bytes.fromhex(hexpart)):
            return PREFIX + hexpart
        raise UnknownAddressError(text, f"no event with address {PREFIX + hexpart} is stored")
    if hexpart is None:
        if _REF_NAME.fullmatch(text) is None:
            raise AddressError(
                f"{text!r} is neither an address, an address prefix of at least "
                f"{MIN_PREFIX} hex digits, nor a ref name"
            )
        target = ref(text)
        if target is not None:
            return target
        bare = text[len(PREFIX) :] if text.startswith(PREFIX) else text
        if bare and all(c in string.hexdigits for c in bare):
            raise UnknownAddressError(
                text,
                f"{text!r} is too short to look up: an address prefix needs at least "
                f"{MIN_PREFIX} hex digits, and no ref has that name",
            )
        raise UnknownAddressError(text, f"no ref named {text!r} exists")
    found = by_prefix(hexpart, _SHOWN + 1)
    if not found:
        raise UnknownAddressError(text, f"no stored event's address starts with {hexpart!r}")
    if len(found) > 1:
        more = len(by_prefix(hexpart, 10_000)) - _SHOWN if len(found) > _SHOWN else 0
        raise AmbiguousAddressError(text, found[:_SHOWN], more)
    return found[0]


def internal_key(data: bytes) -> str:
    """A fast internal identity for ``data`` (blake3, hex); never a public address."""
    return blake3(data).hexdigest()


# ULIDs: 48-bit millisecond time + 80 random bits, Crockford base32. Within one process each id
# is greater than the one before (the random part counts up inside one millisecond).
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_ulid_lock = threading.Lock()
_ulid_last = 0  # the last 128-bit value handed out


def new_ulid() -> str:
    """A new 26-character ULID, greater than every one this process made before."""
    global _ulid_last
    with _ulid_lock:
        now = time.time_ns() // 1_000_000
        value = (now << 80) | int.from_bytes(os.urandom(10), "big")
        if value <= _ulid_last:
            value = _ulid_last + 1
        _ulid_last = value
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))
