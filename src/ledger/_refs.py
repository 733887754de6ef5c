"""Refs, the movable names, and ``resolve``: text (an address, a prefix or a ref) to an address.

Refs are the one table that is not derived from the events: nothing can rebuild them, so a
change is a compare-and-swap when the caller asks for one, and inside a batch the swap is
checked again when the batch commits.
"""

from __future__ import annotations

from typing import Literal

from ledger._pending import ANY, _Pending, _RefOp, _Whatever
from ledger._writes import _address_or_none, _Writer
from ledger.address import check_ref_name, format_address, parse_address, resolve_with
from ledger.errors import MissingEventError, RefConflictError


class _Refs(_Writer):
    """Refs and resolving text to an address (see the module)."""

    # -- resolving text --------------------------------------------------------------------

    def resolve(self, text: str) -> str:
        """Turn a full address, a unique prefix of ≥ 8 hex digits, or a ref name into an address."""
        return resolve_with(
            text,
            exact=lambda d: d in self._pending.data or self._committed(d),
            ref=self.get_ref,
            by_prefix=self._by_prefix,
        )

    def _by_prefix(self, hexpart: str, limit: int) -> list[str]:
        pending = list(self._pending.data)
        found = {format_address(d) for d in pending if d.hex().startswith(hexpart)}
        even = hexpart[: len(hexpart) // 2 * 2]
        start = bytes.fromhex(even)
        with self._reading() as txn:
            for run in self._run_set(txn).runs:  # each run's first ``limit`` in digest order
                taken = 0
                for digest in run.addr_keys(txn, start):
                    hexed = digest.hex()
                    if not hexed.startswith(even) or taken >= limit:
                        break
                    if hexed.startswith(hexpart):
                        found.add(format_address(digest))
                        taken += 1
        return sorted(found)[:limit]

    # -- refs ------------------------------------------------------------------------------

    def get_ref(self, name: str) -> str | None:
        """The address a ref points at, or ``None`` when no ref has that name."""
        raw = check_ref_name(name).encode()
        for op in reversed(self._pending.refs):
            if op.name == raw:
                return format_address(op.digest)
        with self._reading() as txn:
            digest = txn.get(raw, db=self._refs)
        return None if digest is None else format_address(digest)

    def set_ref(
        self, name: str, address: str, *, expected: str | Literal[_Whatever.ANY] | None = ANY
    ) -> None:
        """Point ref ``name`` at the stored event ``address``.

        With ``expected`` (an address, or ``None`` for "must not exist yet") the change is a
        compare-and-swap: ``RefConflictError`` if the ref holds anything else. Inside a batch
        the ref changes when the batch commits, and the swap is checked again then.
        """
        raw = check_ref_name(name).encode()
        digest = parse_address(address)
        want = expected if expected is ANY or expected is None else parse_address(expected)
        with self._lock:
            if not (digest in self._pending.data or self._committed(digest)):
                raise MissingEventError(address, f"ref {name!r} cannot point at it")
            op = _RefOp(raw, digest, want)
            if self._depth:
                if want is not ANY:
                    current = self.get_ref(name)
                    current_digest = None if current is None else parse_address(current)
                    if current_digest != want:
                        raise RefConflictError(name, _address_or_none(want), current)
                self._pending.refs.append(op)
            else:
                one = _Pending()
                one.refs.append(op)
                self._commit(one)

    def refs(self, prefix: str = "") -> list[tuple[str, str]]:
        """Every ``(name, address)`` ref whose name starts with ``prefix``, sorted by name."""
        found: dict[str, str] = {}
        start = prefix.encode()
        with self._reading() as txn:
            cursor = txn.cursor(db=self._refs)
            if cursor.set_range(start) if start else cursor.first():
                for name, digest in cursor:
                    if not name.startswith(start):
                        break
                    found[name.decode()] = format_address(digest)
        for op in self._pending.refs:
            if op.name.startswith(start):
                found[op.name.decode()] = format_address(op.digest)
        return sorted(found.items())
