"""The prompts and reply schemas of ragas 0.4.3's faithfulness and answer relevancy
(``ragas.metrics.collections``), reproduced so that our judge asks exactly what ragas asks.

The instructions, few-shot examples, output models (their JSON schema is part of the prompt, so
class and field names matter) and :func:`render` (``ragas.prompt.metrics.base_prompt.BasePrompt.
to_string``) are copied from ragas 0.4.3 (Apache License 2.0, (c) Exploding Gradients).  A test
checks that :func:`render` gives the same string as ragas for the same input.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import BaseModel, Field

__all__ = [
    "QUESTION_GEN",
    "RAGAS_VERSION",
    "STATEMENTS",
    "VERDICTS_NLI",
    "AnswerRelevanceInput",
    "AnswerRelevanceOutput",
    "NLIStatementInput",
    "NLIStatementOutput",
    "PromptSpec",
    "StatementFaithfulnessAnswer",
    "StatementGeneratorInput",
    "StatementGeneratorOutput",
    "render",
]

#: The ragas version whose prompts these are.
RAGAS_VERSION = "0.4.3"


# ---- faithfulness: statements --------------------------------------------------------------------
class StatementGeneratorInput(BaseModel):
    """Input model for statement generation."""

    question: str = Field(..., description="The question being answered")
    answer: str = Field(
        ..., description="The answer text to break down into statements"
    )


class StatementGeneratorOutput(BaseModel):
    """Structured output for statement generation."""

    statements: list[str] = Field(
        ..., description="The generated statements from the answer"
    )


# ---- faithfulness: verdicts ----------------------------------------------------------------------
class StatementFaithfulnessAnswer(BaseModel):
    """Individual statement with reason and verdict for NLI evaluation."""

    statement: str = Field(..., description="the original statement, word-by-word")
    reason: str = Field(..., description="the reason of the verdict")
    verdict: int = Field(..., description="the verdict(0/1) of the faithfulness")


class NLIStatementInput(BaseModel):
    """Input model for NLI statement evaluation."""

    context: str = Field(..., description="The context to evaluate statements against")
    statements: list[str] = Field(
        ..., description="The statements to judge for faithfulness"
    )


class NLIStatementOutput(BaseModel):
    """Structured output for NLI statement evaluation."""

    statements: list[StatementFaithfulnessAnswer] = Field(
        ..., description="Evaluated statements with verdicts"
    )


# ---- answer relevancy: question generation -------------------------------------------------------
class AnswerRelevanceInput(BaseModel):
    """Input model for answer relevance evaluation."""

    response: str = Field(
        ..., description="The response/answer to generate questions from"
    )


class AnswerRelevanceOutput(BaseModel):
    """Structured output for answer relevance question generation."""

    question: str = Field(
        ..., description="Question that can be answered from the response"
    )
    noncommittal: int = Field(
        ...,
        description="1 if the response is evasive/vague, 0 if it is substantive",
    )


@dataclass(frozen=True)
class PromptSpec:
    """One prompt: its name, instruction, input and output models, few-shot examples."""

    name: str
    instruction: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    examples: tuple[tuple[BaseModel, BaseModel], ...]


STATEMENTS = PromptSpec(
    "statements",
    """Given a question and an answer, analyze the complexity of each sentence in the answer. Break down each sentence into one or more fully understandable statements. Ensure that no pronouns are used in any statement.""",
    StatementGeneratorInput, StatementGeneratorOutput,
    ((
        StatementGeneratorInput(
            question="Who was Albert Einstein and what is he best known for?",
            answer="He was a German-born theoretical physicist, widely acknowledged to be one of the greatest and most influential physicists of all time. He was best known for developing the theory of relativity, he also made important contributions to the development of the theory of quantum mechanics.",
        ),
        StatementGeneratorOutput(
            statements=[
                "Albert Einstein was a German-born theoretical physicist.",
                "Albert Einstein is recognized as one of the greatest and most influential physicists of all time.",
                "Albert Einstein was best known for developing the theory of relativity.",
                "Albert Einstein made important contributions to the development of the theory of quantum mechanics.",
            ]
        ),
    ),),
)

VERDICTS_NLI = PromptSpec(
    "verdicts",
    """Your task is to judge the faithfulness of a series of statements based on a given context. For each statement you must return verdict as 1 if the statement can be directly inferred based on the context or 0 if the statement can not be directly inferred based on the context.""",
    NLIStatementInput, NLIStatementOutput,
    ((
        NLIStatementInput(
            context="John is a student at XYZ University. He is pursuing a degree in Computer Science. He is enrolled in several courses this semester, including Data Structures, Algorithms, and Database Management. John is a diligent student and spends a significant amount of time studying and completing assignments. He often stays late in the library to work on his projects.",
            statements=[
                "John is majoring in Biology.",
                "John is taking a course on Artificial Intelligence.",
                "John is a dedicated student.",
                "John has a part-time job.",
            ],
        ),
        NLIStatementOutput(
            statements=[
                StatementFaithfulnessAnswer(
                    statement="John is majoring in Biology.",
                    reason="John's major is explicitly stated as Computer Science, not Biology.",
                    verdict=0,
                ),
                StatementFaithfulnessAnswer(
                    statement="John is taking a course on Artificial Intelligence.",
                    reason="The context mentions courses in Data Structures, Algorithms, and Database Management, but does not mention Artificial Intelligence.",
                    verdict=0,
                ),
                StatementFaithfulnessAnswer(
                    statement="John is a dedicated student.",
                    reason="The context states that John is a diligent student who spends a significant amount of time studying and completing assignments.",
                    verdict=1,
                ),
                StatementFaithfulnessAnswer(
                    statement="John has a part-time job.",
                    reason="There is no information in the context about John having a part-time job.",
                    verdict=0,
                ),
            ]
        ),
    ),),
)

QUESTION_GEN = PromptSpec(
    "questions",
    """Generate a question for the given answer and identify if the answer is noncommittal.
Give noncommittal as 1 if the answer is noncommittal (evasive, vague, or ambiguous) and 0 if the answer is substantive.
Examples of noncommittal answers: "I don't know", "I'm not sure", "It depends".""",
    AnswerRelevanceInput, AnswerRelevanceOutput,
    (
        (
            AnswerRelevanceInput(response="Albert Einstein was born in Germany."),
            AnswerRelevanceOutput(question="Where was Albert Einstein born?", noncommittal=0),
        ),
        (
            AnswerRelevanceInput(
                response="The capital of France is Paris, a city known for its architecture and culture."
            ),
            AnswerRelevanceOutput(question="What is the capital of France?", noncommittal=0),
        ),
        (
            AnswerRelevanceInput(
                response="I don't know about the groundbreaking feature of the smartphone invented in 2023 as I am unaware of information beyond 2022."
            ),
            AnswerRelevanceOutput(
                question="What was the groundbreaking feature of the smartphone invented in 2023?",
                noncommittal=1,
            ),
        ),
    ),
)


def _examples(spec: PromptSpec) -> str:
    if not spec.examples:
        return ""
    parts = [f"Example {i + 1}\n"
             f"Input: {inp.model_dump_json(indent=4)}\n"
             f"Output: {out.model_dump_json(indent=4)}" for i, (inp, out) in enumerate(spec.examples)]
    return "--------EXAMPLES-----------\n" + "\n\n".join(parts)


def render(spec: PromptSpec, data: BaseModel) -> str:
    """The full prompt string, exactly as ragas 0.4.3 ``BasePrompt.to_string`` builds it."""
    output_schema = json.dumps(spec.output_model.model_json_schema())
    input_json = data.model_dump_json(indent=4, exclude_none=True)
    return f"""{spec.instruction}
Please return the output in a JSON format that complies with the following schema as specified in JSON Schema:
{output_schema}Do not use single quotes in your response but double quotes,properly escaped with a backslash.

{_examples(spec)}
-----------------------------

Now perform the same with the following input
input: {input_json}
Output: """
