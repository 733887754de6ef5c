"""A support assistant you already have, evaluated as a black box.

``support_api`` stands in for an existing application: it searches a small invented knowledge
base, builds a prompt from the best sources that fit a word budget, answers and cites. It is
deterministic (a word-overlap search, and an "answer" that is the opening sentence of the first
source in the prompt), so the example runs without a model or credentials.

``run`` is the adapter Oloproof calls for each case. It leaves ``support_api`` unchanged and maps
its response onto the three artifacts the retrieval and citation evaluators read. To evaluate your
own application, replace the body of ``support_api`` with a call to it and keep ``run``.
"""

import re

from oloproof import (
    Context,
    ContextItem,
    DroppedItem,
    Passage,
    Retrieval,
    current_case,
    system,
)

SEARCH_DEPTH = 6  # how many sources the search returns
TOP_K = 2  # how many of them may go into the prompt
PROMPT_WORD_BUDGET = 40  # and how many words they may take together

# The candidate change of the tutorial: expand the question with synonyms before searching.
EXPAND_QUERY = False

# A word the users say -> the word the knowledge base uses (only used when EXPAND_QUERY is True).
SYNONYMS = {
    "money back": "refund",
    "claim": "ask",
    "yearly": "annual",
    "subscription": "plan",
}

# ---------------------------------------------------------------------------------------------
# The application. Oloproof never looks inside it; it only sees what `support_api` returns.
# ---------------------------------------------------------------------------------------------

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

# A passage must share at least this many content words with the query to be retrieved.
MIN_SHARED_WORDS = 2

NOT_FOUND = "I could not find that in the knowledge base."


def words(text: str) -> set[str]:
    """The distinct content words of a text, lower-cased, without stopwords."""
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if word not in STOPWORDS}


def first_sentence(text: str) -> str:
    """The text up to and including its first full stop (or question or exclamation mark)."""
    return re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)[0]


def expand(question: str) -> str:
    """Append the knowledge base's word for every synonym the question uses."""
    lowered = question.lower()
    extra = [word for phrase, word in SYNONYMS.items() if phrase in lowered]
    return " ".join([question, *extra])


def search(query: str, depth: int) -> list[dict]:
    """Rank passages by how many of the query's words they share; keep the best ``depth``."""
    asked = words(query)
    sources = []
    for doc_id, text in KNOWLEDGE_BASE:
        shared = len(asked & words(text))
        if shared >= MIN_SHARED_WORDS:
            sources.append({"id": doc_id, "score": float(shared), "text": text})
    sources.sort(key=lambda source: -source["score"])  # a stable sort: ties keep KB order
    return sources[:depth]


def support_api(question: str) -> dict:
    """Search, fill the prompt, answer and cite; the response says what was done at each step."""
    query = expand(question) if EXPAND_QUERY else question
    sources = search(query, SEARCH_DEPTH)

    prompt_sources, skipped, used = [], [], 0
    for rank, source in enumerate(sources, start=1):
        tokens = len(source["text"].split())
        if rank > TOP_K:
            skipped.append({"id": source["id"], "rank": rank, "why": "top_k"})
        elif used + tokens > PROMPT_WORD_BUDGET:  # smaller sources further down may still fit
            skipped.append({"id": source["id"], "rank": rank, "why": "token_budget"})
        else:
            used += tokens
            prompt_sources.append({**source, "rank": rank, "tokens": tokens})

    if prompt_sources:
        best = prompt_sources[0]
        answer, cited = first_sentence(best["text"]), [best["id"]]
    else:
        answer, cited = NOT_FOUND, []
    return {
        "answer": answer,
        "cited": cited,
        "sources": sources,
        "prompt_sources": prompt_sources,
        "skipped": skipped,
    }


# ---------------------------------------------------------------------------------------------
# The adapter: call the application unchanged and record what it did as typed artifacts.
# ---------------------------------------------------------------------------------------------


@system(
    name="support-rag-blackbox",
    version="tutorial",
    records=("retrieval/v1", "context/v1", "citations/v1"),
)
def run(case):
    response = support_api(str(case["question"]))
    recorder = current_case()
    recorder.retrieval(
        Retrieval(
            query=case["question"],
            depth=SEARCH_DEPTH,
            candidates=tuple(
                Passage(doc_id=s["id"], score=s["score"], text=s["text"])
                for s in response["sources"]
            ),
        )
    )
    recorder.context(
        Context(
            items=tuple(
                ContextItem(doc_id=i["id"], position=i["rank"], tokens=i["tokens"], text=i["text"])
                for i in response["prompt_sources"]
            ),
            dropped=tuple(
                DroppedItem(doc_id=i["id"], position=i["rank"], reason=i["why"])
                for i in response["skipped"]
            ),
            token_budget=PROMPT_WORD_BUDGET,
        )
    )
    recorder.citations(response["cited"])
    return {"answer": response["answer"], "citations": response["cited"]}
