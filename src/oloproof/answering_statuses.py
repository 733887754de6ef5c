"""The HTTP statuses whose body is the finished answer to a POST, and what the others mean.

200, 201 (something was made; the body describes it) and 203 (a 200 a proxy rewrote) carry
it. Every other 2xx says, by its own definition, that its body is not that answer: a 202's body
is a ticket to poll, a 206's a part of one. An HTTP system's output and a model's reply (to a
judge or a model system) are read only from the first three.
"""

from __future__ import annotations

from typing import Final

ANSWERED: Final = frozenset({200, 201, 203})
NOT_ANSWERED: Final = {
    202: "Accepted: the work was queued, not done",
    204: "No Content",
    205: "Reset Content",
    206: "Partial Content: a part of a body",
    207: "Multi-Status: the statuses of several operations",
    208: "Already Reported",
    226: "IM Used: changes to an earlier body",
}


def meaning(status: int) -> str:
    """What a 2xx other than those in ``ANSWERED`` means, for an error that names it."""
    return NOT_ANSWERED.get(status, "a status with no registered meaning")
