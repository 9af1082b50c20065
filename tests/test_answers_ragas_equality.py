"""Same canned model replies to ragas 0.4.3 and to our judge: equal scores, identical prompts.

ragas runs in a throwaway environment (tests/answers_ragas_env.py) against the same loopback
OpenAI-compatible server (tests/answers_server.py), through its own openai client and instructor.
"""
from __future__ import annotations

import json
import subprocess

import pytest
from answers_ragas_env import ragas_python
from answers_server import JudgeServer, Scenario

from rag_metrics.answers.data import load_sample_answers
from rag_metrics.answers.llm import JudgeConfig, LLMJudge
from rag_metrics.answers.llm_cache import JudgeCache
from rag_metrics.answers.prompts import (
    QUESTION_GEN,
    STATEMENTS,
    VERDICTS_NLI,
    AnswerRelevanceInput,
    NLIStatementInput,
    StatementGeneratorInput,
    render,
)

pytestmark = pytest.mark.slow

RAGAS_SCRIPT = r'''
import asyncio, json, sys
from openai import AsyncOpenAI
from ragas.llms.base import llm_factory
from ragas.embeddings.base import embedding_factory
from ragas.metrics.collections import Faithfulness, AnswerRelevancy
from ragas.metrics.collections.faithfulness.util import (StatementGeneratorPrompt, StatementGeneratorInput,
    NLIStatementPrompt, NLIStatementInput)
from ragas.metrics.collections.answer_relevancy.util import AnswerRelevancePrompt, AnswerRelevanceInput

base_url, path = sys.argv[1], sys.argv[2]
items = json.load(open(path))
client = AsyncOpenAI(base_url=base_url, api_key="test", max_retries=0)
llm = llm_factory("canned-chat", client=client)
emb = embedding_factory("openai", model="canned-embed", client=client)
faith = Faithfulness(llm=llm)
rel = AnswerRelevancy(llm=llm, embeddings=emb, strictness=3)

async def main():
    out = {}
    for it in items:
        f = await faith.ascore(user_input=it["question"], response=it["answer"], retrieved_contexts=it["contexts"])
        r = await rel.ascore(user_input=it["question"], response=it["answer"])
        out[it["id"]] = {"faithfulness": f.value, "answer_relevancy": r.value}
    it = items[0]
    out["_prompts"] = {
        "statements": StatementGeneratorPrompt().to_string(
            StatementGeneratorInput(question=it["question"], answer=it["answer"])),
        "verdicts": NLIStatementPrompt().to_string(
            NLIStatementInput(context="\n".join(it["contexts"]), statements=["a", "b"])),
        "questions": AnswerRelevancePrompt().to_string(AnswerRelevanceInput(response=it["answer"])),
    }
    print(json.dumps(out))

asyncio.run(main())
'''


def test_ragas_and_ours_give_equal_scores(tmp_path):
    py = ragas_python()
    items, labels = load_sample_answers()
    # a careful and a sloppy answer per question for 6 questions; the canned judge marks the
    # sentences people labelled unsupported as unsupported and the noncommittal answers as such
    chosen = [it for it in items if it.question_id in {"q001", "q003", "q010", "q024", "q030", "q041"}]
    sc = Scenario(unsupported={t for i in chosen for t, lab in labels[i.id].sentences if lab == "unsupported"},
                  noncommittal={i.answer for i in chosen if labels[i.id].relevancy == "noncommittal"})
    path = tmp_path / "items.json"
    path.write_text(json.dumps([{"id": i.id, "question": i.question, "answer": i.answer,
                                 "contexts": list(i.contexts)} for i in chosen]))
    script = tmp_path / "run_ragas.py"
    script.write_text(RAGAS_SCRIPT)
    with JudgeServer(sc) as srv:
        proc = subprocess.run([str(py), str(script), srv.base_url, str(path)], capture_output=True, text=True,
                              timeout=900, check=False)
        assert proc.returncode == 0, proc.stderr[-3000:]
        theirs = json.loads(proc.stdout.strip().splitlines()[-1])
        ours = LLMJudge(JudgeConfig(srv.base_url, "canned-chat", "canned-embed"), cache=JudgeCache(None)).judge(chosen)
    prompts = theirs.pop("_prompts")
    it = chosen[0]
    assert render(STATEMENTS, StatementGeneratorInput(question=it.question, answer=it.answer)) == prompts["statements"]
    assert render(VERDICTS_NLI, NLIStatementInput(context="\n".join(it.contexts), statements=["a", "b"])) == \
        prompts["verdicts"]
    assert render(QUESTION_GEN, AnswerRelevanceInput(response=it.answer)) == prompts["questions"]
    assert set(theirs) == {i.id for i in chosen}
    values = set()
    for j in ours:
        for m in ("faithfulness", "answer_relevancy"):
            assert j.scores[m].ok, (j.item_id, m, j.scores[m].message)
            assert j.scores[m].value == pytest.approx(theirs[j.item_id][m], abs=1e-12), (j.item_id, m)
            values.add(round(theirs[j.item_id][m], 6))
    # the comparison is not vacuous: faithfulness below 1 and relevancy 0 occur
    assert any(theirs[i.id]["faithfulness"] < 1 for i in chosen)
    assert any(theirs[i.id]["answer_relevancy"] == 0 for i in chosen)
    assert len(values) >= 4
