"""A staged support assistant: Oloproof runs its retrieval and generation as separate stages.

Oloproof calls ``retrieve`` for the ranked candidates, assembles the context itself (the first
``top_k`` candidates that fit ``token_budget``, counted with ``count_tokens``), and then calls
``generate`` with that context. Because the stages are separate, ``oloproof diagnose`` can give
``generate`` a different context (the gold passages, a wider top-k, a reranked list) and see
whether the answer changes.

Both stages are deterministic stand-ins, so the example needs no provider and no credentials:
``retrieve`` ranks a small invented knowledge base by word overlap with the question, and
``generate`` answers with the opening sentence of the first passage it was given. To adapt it,
call your own index in ``retrieve`` and your own model in ``generate``.
"""

import re

from oloproof import Context, Passage, Retrieval, rag_system

KNOWLEDGE_BASE = (
    (
        "kb-01",
        "Refund requests are reviewed by the billing team within two business days. An approved"
        " refund is paid to the card that was charged, and a credit note is listed beside past"
        " invoices in the admin console. Partial refunds are worked out per remaining full month of"
        " the term, and every workspace owner is told by email.",
    ),
    (
        "kb-02",
        "To ask for a refund on an annual plan, open the Payments page of the admin console. Only"
        " workspace owners see that page.",
    ),
    (
        "kb-03",
        "Team plans include five seats. Extra seats are billed monthly and can be added by"
        " workspace owners.",
    ),
    (
        "kb-04",
        "Past invoices can be downloaded as PDF copies from the admin console. Each invoice is"
        " also emailed to the billing contact on the first day of the month.",
    ),
    (
        "kb-05",
        "Moving from a Team plan to a Business plan takes effect at once, and the price difference"
        " is prorated.",
    ),
    (
        "kb-06",
        "Support office hours are 09:00 to 17:00 Central European Time, Monday to Friday. Urgent"
        " incidents on Business plans are answered outside those hours.",
    ),
    (
        "kb-07",
        "A password reset link stays valid for 30 minutes. Request a new link from the sign-in"
        " page if it expires.",
    ),
    (
        "kb-08",
        "Workspace ownership can be transferred to another admin from Settings. The previous owner"
        " keeps admin rights.",
    ),
    (
        "kb-09",
        "Every refund request on an annual plan is logged in the audit trail, and the same request"
        " is listed again on the day it was reviewed and approved.",
    ),
    (
        "kb-10",
        "Security reviews during Enterprise onboarding include an access review and a written"
        " summary for the customer, and every review is scheduled with the customer success manager"
        " in the first month of the contract.",
    ),
    (
        "kb-11",
        "A security review for a new Enterprise customer is completed within three weeks of the"
        " signed order form. The review covers single sign-on, two-factor authentication, data"
        " residency and the subprocessor list, and questions from the customer's security team are"
        " answered in writing. A penetration test report is shared when asked, under a"
        " non-disclosure agreement.",
    ),
    (
        "kb-12",
        "An admin can enforce two-factor authentication for the whole workspace. Members then sign"
        " in with an authenticator app or a hardware key.",
    ),
    (
        "kb-13",
        "Idle sessions end after 12 hours. Admins can shorten the session timeout to as little as"
        " 15 minutes.",
    ),
    (
        "kb-14",
        "Failed webhook deliveries are retried five times over 24 hours, with a growing delay"
        " between attempts.",
    ),
    (
        "kb-15",
        "The public API accepts 600 requests per minute for each workspace. Requests over that"
        " rate limit receive a 429 status.",
    ),
    (
        "kb-16",
        "Incident alerts from the Slack integration go to the channel picked during setup. Only"
        " one channel per workspace is supported.",
    ),
    (
        "kb-17",
        "Workspace data can be exported as CSV or JSON from Settings. Large exports arrive by"
        " email as a zip archive.",
    ),
    (
        "kb-18",
        "Deleted projects are kept for 30 days before they are removed for good. Backups of"
        " workspace data are kept for 90 days.",
    ),
    (
        "kb-19",
        "Webhook payloads are signed with the workspace secret, and the delivery log in Settings"
        " lists every failed attempt with its response code for the last two weeks.",
    ),
)

STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it its long many my of on or"
    " the there to what when where which who why with".split()
)

# A passage must share at least this many content words with the question to be retrieved.
MIN_SHARED_WORDS = 2

NOT_FOUND = "I could not find that in the knowledge base."


def words(text: str) -> set[str]:
    """The distinct content words of a text, lower-cased, without stopwords."""
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if word not in STOPWORDS}


def first_sentence(text: str) -> str:
    """The text up to and including its first full stop (or question or exclamation mark)."""
    return re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)[0]


@rag_system(
    name="support-rag",
    version="slice-b-example",
    depth=6,
    top_k=2,
    token_budget=40,
    index_version="kb-2026-09-16",
)
class SupportRag:
    def retrieve(self, input: dict, depth: int) -> Retrieval:
        """Rank passages by how many of the question's words they share; return the best ``depth``.

        Oloproof records the candidates in this order (position 1 first) and never re-ranks them.
        """
        asked = words(input["question"])
        scored = []
        for doc_id, text in KNOWLEDGE_BASE:
            shared = len(asked & words(text))
            if shared >= MIN_SHARED_WORDS:
                scored.append(Passage(doc_id=doc_id, score=float(shared), text=text))
        scored.sort(key=lambda passage: -passage.score)  # a stable sort: ties keep KB order
        passages = scored[:depth]
        return Retrieval(query=input["question"], depth=depth, candidates=tuple(passages))

    def generate(self, input: dict, context: Context) -> dict:
        """A stand-in for the model: answer with the first sentence of the first passage given.

        ``context.items`` holds the passages that reached the model, in order. Under diagnosis
        they may be the case's gold passages instead of the retrieved ones.
        """
        if not context.items:
            return {"answer": NOT_FOUND, "citations": []}
        best = context.items[0]
        return {"answer": first_sentence(best.text or ""), "citations": [best.doc_id]}

    def count_tokens(self, passage: Passage) -> int:
        """How Oloproof measures a passage against ``token_budget``: here, in words."""
        return len((passage.text or "").split())
