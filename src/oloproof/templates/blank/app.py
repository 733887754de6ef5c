"""The system under test. Oloproof calls `answer` once per case with the case's `input`.

Replace the body with a call to your application (a function, an SDK, an HTTP request) and
return what it answered. Change `version` whenever the application changes.
"""

from oloproof import system

CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi"}


@system(name="my-system", version="1")
def answer(case: dict[str, object]) -> dict[str, str]:
    question = str(case["question"])
    for country, capital in CAPITALS.items():
        if country in question:
            return {"answer": f"The capital of {country} is {capital}."}
    return {"answer": "I do not know."}
