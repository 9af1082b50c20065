"""The tutor's guard (issue 48): replies that give the exercise away are caught (verbatim, renamed, reformatted,
a comprehension for the loop, the body without its def, a key line, an expected value in English or Danish
form), and replies that only look similar pass (a smaller example on another function, a loop skeleton,
pseudo-code of one step, the hints' own code, the student's code quoted back, numbers that are not expected
values): a guard that withholds every reply would make the tutor useless."""
from __future__ import annotations

import pytest

from rag_metrics.exercises.catalogue import exercise
from rag_metrics.exercises.reference import REFERENCE
from rag_metrics.tutor.guard import check_reply, code_pieces, numbers_in

HIT = "hit_rate_at_k"
HIT_VALUE = 0.7236842105263158  # 55 / 76, as the hidden expected value of the check on the class's data


def fenced(code: str, lang: str = "python") -> str:
    return f"Here is how it could look:\n\n```{lang}\n{code.strip()}\n```\n\nTry it."


LEAKS = {
    "lesson code verbatim": (HIT, fenced(exercise(HIT).lesson_code)),
    "reference verbatim": (HIT, fenced(REFERENCE[HIT])),
    "renamed variables": (HIT, fenced('''
def my_rate(data, r, n=5):
    count = 0
    for q in data:
        res = r.retrieve(q["question"], top_k=n)
        ids = [x["id"] for x in res]
        if any(i in q["relevant_chunk_ids"] for i in ids):
            count += 1
    return count / len(data)
''')),
    "reformatted, comments, other quotes": (HIT, fenced('''
def hit_rate_at_k(golden_dataset, retriever, k = 5):
    # nothing to count
    if not golden_dataset: return 0
    hits = 0
    for item in golden_dataset:
        top = {r['id']
               for r in retriever.retrieve(item['question'], top_k=k)[:k]}   # the top k ids
        hits = hits + bool(top & set(item['relevant_chunk_ids']))
    return hits / len(golden_dataset)
''')),
    "a comprehension for the loop": (HIT, fenced('''
def hit_rate_at_k(golden_dataset, retriever, k=5):
    if not golden_dataset:
        return 0.0
    hits = sum(bool({r["id"] for r in retriever.retrieve(item["question"], top_k=k)[:k]}
                    & set(item["relevant_chunk_ids"])) for item in golden_dataset)
    return hits / len(golden_dataset)
''')),
    "the body without its def, indented": (HIT, "Your loop should read:\n\n"
                                               "    hits = 0\n    for item in golden_dataset:\n"
                                               "        results = retriever.retrieve(item['question'], top_k=k)\n"
                                               "        retrieved_ids = [r['id'] for r in results]\n"
                                               "        if any(rid in item['relevant_chunk_ids'] for rid in "
                                               "retrieved_ids):\n            hits += 1\n"
                                               "    return hits / len(golden_dataset)\n\nThen run it."),
    "unfenced code in prose": (HIT, "Write this:\n"
                                    "for item in golden_dataset:\n"
                                    "    top = {r['id'] for r in retriever.retrieve(item['question'], top_k=k)[:k]}\n"
                                    "    hits += bool(top & set(item['relevant_chunk_ids']))\n"),
    "the key line inline": (HIT, "Just use `hits += bool(top & set(item['relevant_chunk_ids']))` in the loop."),
    "MRR's key line": ("mean_reciprocal_rank", "The line you need: `total += next((1.0 / (i + 1) for i, c in "
                                               "enumerate(ids) if c in relevant), 0.0)`."),
    "precision's key line": ("precision_at_k", "Add `sum(c in relevant for c in ids) / k` for each question."),
    "dcg pasted": ("ndcg_at_k", fenced("def dcg(rels, k):\n    return sum(r / math.log2(j + 2) for j, r in "
                                       "enumerate(rels[:k]))")),
    "ndcg's return": ("ndcg_at_k", "End with `return dcg_at_k(relevances, k) / dcg_at_k([1] * min(len(relevant), "
                                   "k), k)`."),
    "unsupported claims in one line": ("unsupported_claims",
                                       "`return [c for c in claims if not any(supports[c])]`"),
    "faithfulness's lesson code": ("faithfulness", fenced(exercise("faithfulness").lesson_code)),
    "faithfulness reference": ("faithfulness", fenced(
        "def faithfulness(claims, supports):\n    if len(claims) == 0:\n        return None\n"
        "    return sum(1 for c in claims if max(supports[c], default=0) > 0) / len(claims)")),
    "recall as a loop body in a tilde fence": ("recall_at_k", "~~~\nfor item in golden_dataset:\n"
                                               "    relevant = set(item['relevant_chunk_ids'])\n"
                                               "    if relevant:\n        top = {r['id'] for r in "
                                               "retriever.retrieve(item['question'], top_k=k)[:k]}\n"
                                               "        values.append(len(top & relevant) / len(relevant))\n~~~"),
    "an unclosed fence": (HIT, "```python\n" + REFERENCE[HIT].strip()),
}


@pytest.mark.parametrize("name,reply", list(LEAKS.values()), ids=list(LEAKS))
def test_a_reply_giving_the_code_away_is_caught(name, reply):
    got = check_reply(reply, exercise=name)
    assert got.leaked and got.reason in ("code matching the reference solution", "code matching the lesson's code",
                                         "a key line of the solution"), got


@pytest.mark.parametrize("written", ["0.7237", "0,7237", "0.72", "0,724", "72.37 %", "72.4%", "0.723684",
                                     "55/76", "55 / 76"])
def test_an_expected_value_in_english_or_danish_form_is_caught(written):
    got = check_reply(f"Your hit rate should come out at {written} on the class's data.", exercise=HIT,
                      hidden_values=[HIT_VALUE, 5, {"hits": 55}])
    assert got.leaked and got.reason == "an expected value" and got.detail, written
    nested = check_reply(f"It is {written}.", exercise=None, hidden_values=[{"a": [0.1, HIT_VALUE]}])
    assert nested.leaked


LOOK_ALIKES = {
    "a smaller example on another function": (HIT, fenced('''
def share_of_even(numbers):
    count = 0
    for n in numbers:
        if n % 2 == 0:
            count += 1
    return count / len(numbers)
''')),
    "a loop skeleton": (HIT, fenced('''
def hit_rate_at_k(golden_dataset, retriever, k=5):
    hits = 0
    for item in golden_dataset:
        results = retriever.retrieve(item["question"], top_k=k)
        ...  # is this question a hit?
    return hits / len(golden_dataset)
''')),
    "pseudo-code of one step": (HIT, "For one question:\n\n```\nfor each question:\n    take the first k ids\n"
                                     "    if one of them is relevant: count 1 (only once!)\n```"),
    "the hints' own code": (HIT, "Keep the ids with `[r['id'] for r in results]`; a hit is "
                                 "`any(rid in item['relevant_chunk_ids'] for rid in retrieved_ids)`, then "
                                 "`if any(...): hits += 1`."),
    "a filter example for unsupported claims": ("unsupported_claims", fenced(
        "def positives(xs):\n    out = []\n    for x in xs:\n        if x > 0:\n            out.append(x)\n"
        "    return out")),
    "a cosine of other vectors, in words": ("answer_relevancy", "The cosine of (1, 0) and (1, 1) is 1 / sqrt(2) = "
                                                                "0.707: divide the dot product by both lengths."),
    "an MRR example with numbers": ("mean_reciprocal_rank", "If the first relevant chunk is at rank 3, the "
                                                            "reciprocal rank is 1/3 = 0.333; at rank 1 it is 1.0."),
    "a counting example for faithfulness": ("faithfulness", fenced(
        "def share_positive(values):\n    if not values:\n        return None\n    n = 0\n    for v in values:\n"
        "        if v > 0:\n            n += 1\n    return n / len(values)")),
    "prose only": (HIT, "Look at the line that adds to `hits`. How much can one question add? What should it add "
                        "when two relevant chunks are in the top k?"),
}


@pytest.mark.parametrize("name,reply", list(LOOK_ALIKES.values()), ids=list(LOOK_ALIKES))
def test_a_reply_that_only_looks_similar_passes(name, reply):
    got = check_reply(reply, exercise=name, hidden_values=[HIT_VALUE, 0.5])
    assert not got.leaked, got


def test_the_students_own_code_quoted_back_passes():
    wrong = REFERENCE[HIT].replace("top_k=k)[:k]", "top_k=k + 1)[:k + 1]")  # one slip from the reference
    assert wrong != REFERENCE[HIT]
    quoted = fenced(wrong) + "\n\nLook at `[:k + 1]`: how many results does that keep?"
    assert check_reply(quoted, exercise=HIT, student_code=wrong).leaked is False
    assert check_reply(quoted, exercise=HIT).leaked  # the same code, not the student's: it gives the rest away


@pytest.mark.parametrize("old,new", [("top_k=k)", "top_k=k - 1)"),  # the fix is a changed line
                                     ("        results = ", "        if not item['relevant_chunk_ids']:\n"
                                                         "            continue\n        results = ")])  # deleted lines
def test_the_corrected_function_leaks_even_to_a_student_who_has_most_of_it(old, new):
    lesson = exercise(HIT).lesson_code
    wrong = lesson.replace(old, new)
    assert wrong != lesson
    got = check_reply(fenced(lesson), exercise=HIT, student_code=wrong)
    assert got.leaked and got.reason == "code matching the lesson's code", got
    assert not check_reply(fenced(wrong), exercise=HIT, student_code=wrong).leaked  # theirs, quoted back


def test_numbers_that_are_not_expected_values_pass():
    reply = "With k = 5 and 76 questions, 2 / 3 = 0.667 of the examples hit; 1.0 is the best."
    assert not check_reply(reply, exercise=HIT, hidden_values=[HIT_VALUE, 76, 5, 1.0]).leaked
    # whole numbers and one decimal are too common to withhold on
    assert not check_reply("0.7 or 72 %", exercise=HIT, hidden_values=[HIT_VALUE]).leaked


def test_a_value_the_exercise_shows_anyway_is_not_hidden():
    # ndcg_at_k's example works out "NDCG@3 = 0.387", which is also what its check "ndcg_one" expects
    one = 0.38685280723454163
    assert not check_reply("As in the example, NDCG@3 = 0.387.", exercise="ndcg_at_k", hidden_values=[one]).leaked
    assert check_reply("As in the example, NDCG@3 = 0.387.", exercise=None, hidden_values=[one]).leaked
    ex = "mean_reciprocal_rank"
    assert not check_reply("Two thirds: 0.6667, a half: 1/2 = 0.50.", exercise=ex, hidden_values=[2 / 3, 0.5]).leaked
    assert check_reply("It is 0.4167.", exercise=ex, hidden_values=[5 / 12]).leaked  # not a simple fraction


def test_code_pieces_and_numbers_are_read_from_markdown():
    blocks, spans = code_pieces("Text `a + b` here.\n\n```py\nx = 1\n```\n\n    y = 2\n\nmore")
    assert [b.strip() for b in blocks[:2]] == ["x = 1", "y = 2"] and spans == ["a + b"]
    assert [(v, d) for v, d, _ in numbers_in("0,724 and 0.5 and 12.5 % but not 1,2,3")][:3] == [
        (0.724, 3), (0.5, 1), (0.125, 3)]


def test_a_lesson_step_without_an_exercise_checks_only_values():
    assert not check_reply(fenced(REFERENCE[HIT]), exercise=None).leaked
    assert not check_reply("anything", exercise="no_such_exercise").leaked
