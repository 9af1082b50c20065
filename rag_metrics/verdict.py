"""THE rule for "no verdict": when an evaluation's numbers are no result at all.

Every view (the Bring your system page, Dashboard, Compare, Failures, Presenter, the HTML report)
and every CLI command (``evaluate``, ``compare``, ``gate``) asks :func:`no_verdict` (or
:attr:`rag_metrics.evaluation.EvaluationResult.no_verdict`, the same answer) and, when it holds,
shows its one sentence instead of any number.  It holds when, checked in this order:

1. **nothing matched**: no question of the system's file or run is a golden question (by id or by
   question text), so every golden question is "not in the log";
2. **no retrieval**: the file holds no retrieved context at all (a trace export whose retriever
   steps returned nothing, rows with empty contexts);
3. **none answered**: the run answers none of the golden questions the means are over (its
   results are only for out-of-scope questions);
4. **unlocated**: more than :data:`rag_metrics.metrics.evidence.UNLOCATED_LIMIT` of the retrieved contexts
   could not be located in the corpus ("not comparable", :class:`rag_metrics.metrics.evidence.LocateReport`).

A golden set with no question in the means (nothing labelled yet) is not this rule's business:
the pages say "label at least one" and the CLI refuses such a set as bad input.

>>> from rag_metrics import GoldenSet, Run, evaluate
>>> golden = GoldenSet.from_qrels({"q1": {"a": 1}, "q2": {"b": 1}})
>>> evaluate(golden, Run.from_rankings({"other": ["a"]})).no_verdict.kind
'nothing_matched'
>>> evaluate(golden, Run.from_rankings({"q1": ["a"]})).no_verdict is None
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

__all__ = ["NO_VERDICT_KINDS", "NoVerdict", "no_verdict"]

NoVerdictKind = Literal["nothing_matched", "no_retrieval", "none_answered", "unlocated"]
#: The four cases, in the order they are checked.
NO_VERDICT_KINDS: tuple[NoVerdictKind, ...] = ("nothing_matched", "no_retrieval", "none_answered", "unlocated")


@dataclass(frozen=True)
class NoVerdict:
    """Why an evaluation is no verdict: ``kind`` (one of :data:`NO_VERDICT_KINDS`), ``what``
    happened and the ``fix``, both plain sentences without a final full stop."""

    kind: NoVerdictKind
    what: str
    fix: str

    def line(self) -> str:
        """The one sentence every view and the CLI show ("Not comparable: ..." for unlocated
        contexts, the evidence rule's own words; "No verdict: ..." otherwise)."""
        if self.kind == "unlocated":
            return f"Not comparable: {self.what}; {self.fix}"
        return f"No verdict: {self.what}; {self.fix}"

    def cli_line(self, name: str = "") -> str:
        """The CLI's last line: the same sentence, its head in capitals so CI logs show it."""
        head, _, rest = self.line().partition(": ")
        return f"{name + ': ' if name else ''}{head.upper()}: {rest}"


def no_verdict(result: Any) -> NoVerdict | None:
    """None when ``result``'s numbers are a verdict, else why not (the module's rule).  ``result`` is an
    :class:`~rag_metrics.evaluation.EvaluationResult` (not imported here: that module imports this one)."""
    scope = result._scope
    in_run = result.judged.in_run
    n_scope = int(scope.sum())
    if n_scope == 0:  # nothing to average: not this rule's case (see the module notes)
        return None
    run = result.run
    golden_ids = set(result.golden.ids)
    run_qids = {str(q) for q in run.factorized_qids()[1].tolist()} if len(run) else set()
    foreign = len(run_qids - golden_ids)
    unmatched = int(result.unmatched_rows) + foreign
    if not in_run.any():
        if unmatched:
            return NoVerdict(
                "nothing_matched",
                f"no golden question is in the system's results: its {unmatched} question(s) match none of the "
                f"{len(golden_ids)} golden questions (by id or by question text)",
                "evaluate it against the golden set its questions come from, or add its questions to this golden set "
                "(Golden set page; CLI: --qrels), and check that the ids or question texts are the same")
        return NoVerdict(
            "no_retrieval",
            "the system's results hold no retrieved context for any golden question (a trace export without a "
            "retrieval step, or rows whose contexts are empty)",
            "export the retrieval step with its documents (a RETRIEVER span, observation or run) or fill the "
            "contexts column, then bring the file in again")
    answered = int(np.count_nonzero(scope & in_run))
    if answered == 0:
        return NoVerdict(
            "none_answered",
            f"the system's results answer none of the {n_scope} golden question(s) the means are over (only "
            f"{int(in_run.sum())} out-of-scope question(s))",
            "bring the results for the in-scope golden questions, or check that the golden set is the one the system "
            "was run on")
    located = result.located
    if located is not None and not located.comparable:
        head, _, fix = located.line().removeprefix("Not comparable: ").rpartition("; ")
        return NoVerdict("unlocated", head, fix)
    return None
