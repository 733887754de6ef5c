"""A tiny help-desk assistant whose answers an LLM judge checks for groundedness.

``answer`` is the system under test. It finds the passage of a small invented knowledge base that
shares the most words with the question, records it as the context it answers from, and answers
with that passage's first sentence. When no passage matches it does what careless assistants do:
it guesses, and the guess is not grounded in anything it was given. It is deterministic, so the
example needs no model; the judge is the only thing that is asked over HTTP.
"""

import re

from oloproof import Context, ContextItem, current_case, system

KNOWLEDGE_BASE = {
    "kb-01": "Notes sync across devices every five minutes. A note edited offline syncs as soon"
    " as the device is back online.",
    "kb-02": "Deleted notes stay in the trash for thirty days. After thirty days they are removed"
    " for good.",
    "kb-03": "The free plan includes three notebooks. The pro plan includes unlimited notebooks.",
    "kb-04": "Shared notebooks can be edited by every member. Only the owner can delete a shared"
    " notebook.",
    "kb-05": "Notes can be exported as Markdown or as plain text. Exports include attachments.",
    "kb-06": "The pro plan costs four euros a month. Yearly billing saves two months.",
}

# What the assistant says when nothing matches: a confident guess, grounded in nothing.
GUESS = "Yes, that is included in every plan at no extra cost."

STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it many my of on or the to what"
    " when which who will with".split()
)


def words(text: str) -> set[str]:
    """The content words of a text, lower-cased."""
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


def best_passage(question: str) -> str | None:
    """The id of the passage sharing the most words with the question (two at least)."""
    asked = words(question)
    scored = [(len(asked & words(text)), doc_id) for doc_id, text in KNOWLEDGE_BASE.items()]
    shared, doc_id = max(scored, key=lambda pair: pair[0])
    return doc_id if shared >= 2 else None


@system(name="notes-helpdesk", version="1", records=["context/v1"])
def answer(case_input: dict) -> dict:
    doc_id = best_passage(case_input["question"])
    items = [] if doc_id is None else [ContextItem(doc_id=doc_id, text=KNOWLEDGE_BASE[doc_id])]
    current_case().context(Context(items=tuple(items)))
    if doc_id is None:
        return {"answer": GUESS}
    first = re.split(r"(?<=[.!?])\s+", KNOWLEDGE_BASE[doc_id], maxsplit=1)[0]
    return {"answer": first}
