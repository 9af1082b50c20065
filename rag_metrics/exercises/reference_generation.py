"""Reference solutions of lesson 3's exercises (:mod:`rag_metrics.exercises.generation`): **server only**, never
sent to a browser.  Source text run by the tests through the same harness as a student's code; expected values
never come from here (the lab's judge computes them)."""
from __future__ import annotations

__all__ = ["REFERENCE"]

REFERENCE: dict[str, str] = {
    "faithfulness": '''
def faithfulness(claims, supports):
    if len(claims) == 0:
        return None
    return sum(1 for c in claims if max(supports[c], default=0) > 0) / len(claims)
''',
    "unsupported_claims": '''
def unsupported_claims(claims, supports):
    out = []
    for c in claims:
        if sum(supports[c]) == 0:
            out.append(c)
    return out
''',
    "answer_relevancy": '''
from math import sqrt


def answer_relevancy(question_vector, generated_vectors, noncommittal):
    if not generated_vectors or all(noncommittal):
        return 0.0
    qn = sqrt(sum(x * x for x in question_vector))
    total = 0.0
    for g in generated_vectors:
        gn = sqrt(sum(x * x for x in g))
        total += sum(a * b for a, b in zip(question_vector, g)) / (qn * gn)
    return total / len(generated_vectors)
''',
}
