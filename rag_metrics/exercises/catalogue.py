"""The exercises as data: one per function of the lesson, in the lesson's order, English and Danish.

Each exercise names the function the student writes (its name is the exercise's name), the Lesson
step it belongs to, a prompt, a starter, worked examples, graded hints (first = gentlest) and the
lesson's own version of the function (``lesson_code``, shown on the Lesson step; it passes every
check).  The reference solutions are not here: they live in :mod:`rag_metrics.exercises.reference`,
which is never sent to a browser.

The data shapes are the lesson's: ``golden_dataset`` is a list of dicts (``question``,
``relevant_chunk_ids``, ``category``, ...) and ``retriever.retrieve(question, top_k)`` returns the
current system's ranking as ``[{'id': ..., 'score': ...}]``, best first.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from rag_metrics.errors import InputError

__all__ = ["Exercise", "EXERCISES", "exercise", "exercises_for_lesson", "exercises_for_step", "LANGS", "UI_TEXT"]

LANGS = ("en", "da")


@dataclass(frozen=True)
class Exercise:
    """One exercise: the student writes the function ``name`` (see the module docstring).

    ``conventions`` names, per language, the conventions the lesson's code implies (shown beside
    ``lesson_code``); ``extra_functions`` are other functions the checks call (``dcg_at_k``);
    ``lesson``: the key of the course's lesson it belongs to (:data:`rag_metrics.lesson.course.COURSE`;
    ``step`` is a step of that lesson)."""

    name: str
    step: str
    title: Mapping[str, str]
    prompt: Mapping[str, str]
    starter: str
    examples: Mapping[str, tuple[str, ...]]
    hints: Mapping[str, tuple[str, ...]]
    lesson_code: str
    conventions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    extra_functions: tuple[str, ...] = ()
    k: int = 5                      # the cutoff of the check on the current data
    lesson: str = "retrieval"       # the course's lesson (key) the exercise belongs to

    def text(self, what: str, lang: str) -> str:
        """``title`` or ``prompt`` in ``lang`` (English for an unknown language)."""
        table = getattr(self, what)
        return table.get(lang) or table["en"]


def _both(en: str, da: str) -> Mapping[str, str]:
    return MappingProxyType({"en": en, "da": da})


def _many(en: tuple[str, ...], da: tuple[str, ...]) -> Mapping[str, tuple[str, ...]]:
    assert len(en) == len(da)
    return MappingProxyType({"en": en, "da": da})


_DATA_EN = ("`golden_dataset` is a list of dicts with `question`, `relevant_chunk_ids` (a list) and `category`; "
            "`retriever.retrieve(question, top_k=k)` returns the current system's ranking as "
            "`[{'id': ..., 'score': ...}]`, best first.")
_DATA_DA = ("`golden_dataset` er en liste af dicts med `question`, `relevant_chunk_ids` (en liste) og `category`; "
            "`retriever.retrieve(question, top_k=k)` returnerer det aktuelle systems rangering som "
            "`[{'id': ..., 'score': ...}]`, bedste først.")

# ---- hit rate ------------------------------------------------------------------------------------
_HIT_LESSON = '''def hit_rate_at_k(golden_dataset, retriever, k=5):
    """Share of questions with at least one relevant chunk among the top k."""
    hits = 0
    for item in golden_dataset:
        results = retriever.retrieve(item["question"], top_k=k)
        retrieved_ids = [r["id"] for r in results]
        if any(rid in item["relevant_chunk_ids"] for rid in retrieved_ids):
            hits += 1
    return hits / len(golden_dataset)
'''

HIT_RATE = Exercise(
    name="hit_rate_at_k", step="hit_rate",
    title=_both("Hit rate@K", "Hit rate@K"),
    prompt=_both(
        "Write `hit_rate_at_k(golden_dataset, retriever, k=5)`: the share of questions for which at least one "
        "relevant chunk is among the first `k` results.\n\n" + _DATA_EN + "\n\nDivide by **every** question, as "
        "the lesson does: a question with no relevant chunk (out of scope) counts as a miss.",
        "Skriv `hit_rate_at_k(golden_dataset, retriever, k=5)`: andelen af spørgsmål, hvor mindst én relevant "
        "chunk er blandt de første `k` resultater.\n\n" + _DATA_DA + "\n\nDivider med **alle** spørgsmål, som "
        "lektionen gør: et spørgsmål uden relevant chunk (uden for emnet) tæller som en bom."),
    starter='''def hit_rate_at_k(golden_dataset, retriever, k=5):
    """Share of questions with at least one relevant chunk among the top k."""
    ...
''',
    examples=_many(
        ("Relevant `{c2}`, ranking `[c7, c2, c9]`: at k = 1 a miss (0), at k = 2 a hit (1).",
         "Three questions, hits on two of them: hit rate = 2 / 3 = 0.667."),
        ("Relevant `{c2}`, rangering `[c7, c2, c9]`: ved k = 1 en bom (0), ved k = 2 et hit (1).",
         "Tre spørgsmål, hit på to af dem: hit rate = 2 / 3 = 0,667.")),
    hints=_many(
        ("Loop over the questions, count the hits, divide by the number of questions.",
         "Ask the retriever for `top_k=k` results and keep their ids: `[r['id'] for r in results]`.",
         "A hit is `any(rid in item['relevant_chunk_ids'] for rid in retrieved_ids)`."),
        ("Gå spørgsmålene igennem, tæl hits, og divider med antallet af spørgsmål.",
         "Bed retrieveren om `top_k=k` resultater og behold deres id'er: `[r['id'] for r in results]`.",
         "Et hit er `any(rid in item['relevant_chunk_ids'] for rid in retrieved_ids)`.")),
    lesson_code=_HIT_LESSON,
    conventions=_many(
        ("a hit: any of the first k ids is relevant", "the mean divides by every question: out of scope is a miss"),
        ("et hit: et af de første k id'er er relevant", "gennemsnittet deler med alle spørgsmål: uden for emnet er "
         "en bom")),
)

# ---- MRR -----------------------------------------------------------------------------------------
_MRR_LESSON = '''def mean_reciprocal_rank(golden_dataset, retriever, top_k=10):
    """Mean of 1 / rank of the first relevant chunk (0 when none is in the top_k)."""
    reciprocal_ranks = []
    for item in golden_dataset:
        results = retriever.retrieve(item["question"], top_k=top_k)
        score = 0.0
        for rank, r in enumerate(results, start=1):
            if r["id"] in item["relevant_chunk_ids"]:
                score = 1.0 / rank
                break
        reciprocal_ranks.append(score)
    return sum(reciprocal_ranks) / len(reciprocal_ranks)
'''

MRR = Exercise(
    name="mean_reciprocal_rank", step="mrr", k=10,
    title=_both("Mean reciprocal rank (MRR)", "Mean reciprocal rank (MRR)"),
    prompt=_both(
        "Write `mean_reciprocal_rank(golden_dataset, retriever, top_k=10)`: for each question `1 / rank` of the "
        "**first** relevant chunk among the first `top_k` results (rank 1 = the best result), 0 when there is "
        "none; return the mean over **every** question.\n\n" + _DATA_EN,
        "Skriv `mean_reciprocal_rank(golden_dataset, retriever, top_k=10)`: for hvert spørgsmål `1 / rang` af den "
        "**første** relevante chunk blandt de første `top_k` resultater (rang 1 = det bedste resultat), 0 hvis "
        "der ingen er; returner gennemsnittet over **alle** spørgsmål.\n\n" + _DATA_DA),
    starter='''def mean_reciprocal_rank(golden_dataset, retriever, top_k=10):
    """Mean of 1 / rank of the first relevant chunk (0 when none is in the top_k)."""
    ...
''',
    examples=_many(
        ("Relevant `{c2, c9}`, ranking `[c7, c2, c9]`: the first relevant chunk is at rank 2, so 1 / 2 = 0.5.",
         "Reciprocal ranks 1, 0.5 and 0: MRR = 1.5 / 3 = 0.5."),
        ("Relevante `{c2, c9}`, rangering `[c7, c2, c9]`: den første relevante chunk er på rang 2, så 1 / 2 = 0,5.",
         "Reciprokke rang 1, 0,5 og 0: MRR = 1,5 / 3 = 0,5.")),
    hints=_many(
        ("Only the first relevant chunk counts: stop at it.",
         "Ranks start at 1: `enumerate(results, start=1)`.",
         "A question with no relevant chunk in the top_k adds 0, and still counts in the mean."),
        ("Kun den første relevante chunk tæller: stop ved den.",
         "Rang starter ved 1: `enumerate(results, start=1)`.",
         "Et spørgsmål uden relevant chunk i top_k giver 0 og tæller stadig med i gennemsnittet.")),
    lesson_code=_MRR_LESSON,
    conventions=_many(
        ("1 / rank of the first relevant id among the top_k (default 10), else 0",
         "the mean divides by every question"),
        ("1 / rang af det første relevante id blandt de top_k (standard 10), ellers 0",
         "gennemsnittet deler med alle spørgsmål")),
)

# ---- precision -----------------------------------------------------------------------------------
_PREC_LESSON = '''def precision_at_k(golden_dataset, retriever, k=5):
    """Mean share of the first k positions that hold a relevant chunk."""
    precisions = []
    for item in golden_dataset:
        results = retriever.retrieve(item["question"], top_k=k)
        retrieved_ids = [r["id"] for r in results][:k]
        relevant = set(item["relevant_chunk_ids"])
        n_relevant = sum(1 for rid in retrieved_ids if rid in relevant)
        precisions.append(n_relevant / k)
    return sum(precisions) / len(precisions)
'''

PRECISION = Exercise(
    name="precision_at_k", step="precision",
    title=_both("Precision@K", "Precision@K"),
    prompt=_both(
        "Write `precision_at_k(golden_dataset, retriever, k=5)`: for each question the number of positions "
        "among the first `k` that hold a relevant chunk, divided by `k`; return the mean over **every** "
        "question.\n\n" + _DATA_EN + "\n\nThe divisor is `k` even when fewer than `k` results come back, and a "
        "position counts: a relevant chunk listed twice counts twice (the lesson's code).",
        "Skriv `precision_at_k(golden_dataset, retriever, k=5)`: for hvert spørgsmål antallet af positioner "
        "blandt de første `k`, der indeholder en relevant chunk, divideret med `k`; returner gennemsnittet over "
        "**alle** spørgsmål.\n\n" + _DATA_DA + "\n\nDivisoren er `k`, også når der kommer færre end `k` "
        "resultater, og det er positioner, der tælles: en relevant chunk, der står to gange, tæller to gange "
        "(lektionens kode)."),
    starter='''def precision_at_k(golden_dataset, retriever, k=5):
    """Mean share of the first k positions that hold a relevant chunk."""
    ...
''',
    examples=_many(
        ("Relevant `{c2, c9}`, ranking `[c7, c2, c9, c1, c4]`, k = 5: 2 relevant, P@5 = 2 / 5 = 0.4.",
         "Only 3 results came back, 1 relevant, k = 5: P@5 = 1 / 5 = 0.2 (not 1 / 3)."),
        ("Relevante `{c2, c9}`, rangering `[c7, c2, c9, c1, c4]`, k = 5: 2 relevante, P@5 = 2 / 5 = 0,4.",
         "Der kom kun 3 resultater, 1 relevant, k = 5: P@5 = 1 / 5 = 0,2 (ikke 1 / 3).")),
    hints=_many(
        ("Count the relevant ones among the first k ids, then divide by k.",
         "Divide by `k`, not by the number of results and not by the number of relevant chunks.",
         "Every question counts in the mean, also one with no relevant chunk (it scores 0)."),
        ("Tæl de relevante blandt de første k id'er, og divider med k.",
         "Divider med `k`, ikke med antallet af resultater og ikke med antallet af relevante chunks.",
         "Alle spørgsmål tæller med i gennemsnittet, også et uden relevant chunk (det giver 0).")),
    lesson_code=_PREC_LESSON,
    conventions=_many(
        ("relevant positions among the first k, divided by k (even when fewer came back)",
         "a relevant id listed twice counts twice", "the mean divides by every question"),
        ("relevante positioner blandt de første k, divideret med k (også når der kom færre)",
         "et relevant id, der står to gange, tæller to gange", "gennemsnittet deler med alle spørgsmål")),
)

# ---- NDCG ----------------------------------------------------------------------------------------
_NDCG_LESSON = '''import math


def dcg_at_k(relevances, k):
    """Discounted cumulative gain of the first k relevances (position i counts from 0)."""
    return sum(rel / math.log2(i + 2) for i, rel in enumerate(relevances[:k]))


def ndcg_at_k(retrieved_ids, relevant_ids, k):
    """NDCG@k of one question with binary relevance: 1 if a chunk is relevant, else 0."""
    relevant = set(relevant_ids)
    if not relevant:
        return 0.0
    relevances = [1 if rid in relevant else 0 for rid in retrieved_ids[:k]]
    ideal = [1] * min(len(relevant), k)
    return dcg_at_k(relevances, k) / dcg_at_k(ideal, k)


def mean_ndcg_at_k(golden_dataset, retriever, k=5):
    """Mean NDCG@k over every question of the golden set."""
    scores = []
    for item in golden_dataset:
        results = retriever.retrieve(item["question"], top_k=k)
        retrieved_ids = [r["id"] for r in results]
        scores.append(ndcg_at_k(retrieved_ids, item["relevant_chunk_ids"], k))
    return sum(scores) / len(scores)
'''

NDCG = Exercise(
    name="ndcg_at_k", step="ndcg", extra_functions=("dcg_at_k", "mean_ndcg_at_k"),
    title=_both("DCG and NDCG@K", "DCG og NDCG@K"),
    prompt=_both(
        "Write the lesson's three functions.\n\n"
        "- `dcg_at_k(relevances, k)`: `sum(rel_i / log2(i + 2))` over the first `k` relevances, with positions "
        "`i` counted from 0 (so the first result is divided by `log2(2) = 1`).\n"
        "- `ndcg_at_k(retrieved_ids, relevant_ids, k)`: NDCG@k of **one** question: DCG of the first `k` "
        "retrieved ids with binary relevance (1 if the id is in `relevant_ids`, else 0), divided by the DCG of "
        "the ideal list: `min(|R|, k)` ones. A question with no relevant id scores 0.0.\n"
        "- `mean_ndcg_at_k(golden_dataset, retriever, k=5)`: `ndcg_at_k` of every question, and their mean "
        "over **every** question.\n\n"
        + _DATA_EN + "\n\nSome questions also carry `grades` (`{chunk id: grade}`): the lesson's NDCG is "
        "binary and ignores them.",
        "Skriv lektionens tre funktioner.\n\n"
        "- `dcg_at_k(relevances, k)`: `sum(rel_i / log2(i + 2))` over de første `k` relevanser, med positioner "
        "`i` talt fra 0 (så det første resultat divideres med `log2(2) = 1`).\n"
        "- `ndcg_at_k(retrieved_ids, relevant_ids, k)`: NDCG@k for **ét** spørgsmål: DCG af de første `k` "
        "hentede id'er med binær relevans (1 hvis id'et er i `relevant_ids`, ellers 0), divideret med DCG af den "
        "ideelle liste: `min(|R|, k)` ettaller. Et spørgsmål uden relevant id giver 0,0.\n"
        "- `mean_ndcg_at_k(golden_dataset, retriever, k=5)`: `ndcg_at_k` for hvert spørgsmål og deres "
        "gennemsnit over **alle** spørgsmål.\n\n" + _DATA_DA + "\n\nNogle spørgsmål har også `grades` "
        "(`{chunk-id: karakter}`): lektionens NDCG er binær og ser bort fra dem."),
    starter='''import math


def dcg_at_k(relevances, k):
    """Discounted cumulative gain of the first k relevances (position i counts from 0)."""
    ...


def ndcg_at_k(retrieved_ids, relevant_ids, k):
    """NDCG@k of one question with binary relevance: 1 if a chunk is relevant, else 0."""
    ...


def mean_ndcg_at_k(golden_dataset, retriever, k=5):
    """Mean NDCG@k over every question of the golden set."""
    ...
''',
    examples=_many(
        ("`dcg_at_k([1, 0, 1], 3)` = 1 / log2(2) + 0 / log2(3) + 1 / log2(4) = 1 + 0 + 0.5 = 1.5.",
         "Relevant `{a, c}`, ranking `[b, a, d, c]`, k = 3: DCG = 1 / log2(3) = 0.631, ideal DCG = 1 + 0.631 = "
         "1.631, NDCG@3 = 0.387."),
        ("`dcg_at_k([1, 0, 1], 3)` = 1 / log2(2) + 0 / log2(3) + 1 / log2(4) = 1 + 0 + 0,5 = 1,5.",
         "Relevante `{a, c}`, rangering `[b, a, d, c]`, k = 3: DCG = 1 / log2(3) = 0,631, ideel DCG = 1 + 0,631 "
         "= 1,631, NDCG@3 = 0,387.")),
    hints=_many(
        ("Write `dcg_at_k` first and check it on `[1, 0, 1]`: it must give 1.5.",
         "With `enumerate` the first position is `i = 0`, so divide by `math.log2(i + 2)` (log base 2).",
         "The ideal list has `min(len(relevant), k)` ones; NDCG = DCG / ideal DCG, 0.0 when nothing is relevant."),
        ("Skriv `dcg_at_k` først, og tjek den på `[1, 0, 1]`: den skal give 1,5.",
         "Med `enumerate` er den første position `i = 0`, så divider med `math.log2(i + 2)` (logaritme med "
         "grundtal 2).",
         "Den ideelle liste har `min(len(relevant), k)` ettaller; NDCG = DCG / ideel DCG, 0,0 når intet er "
         "relevant.")),
    lesson_code=_NDCG_LESSON,
    conventions=_many(
        ("binary relevance: 1 if relevant, else 0 (grades are ignored)", "discount log2(i + 2), positions from 0",
         "ideal DCG from min(|R|, k) ones; 0.0 for a question with no relevant id",
         "a relevant id listed twice counts at each position", "the mean divides by every question"),
        ("binær relevans: 1 hvis relevant, ellers 0 (karakterer ignoreres)", "rabat log2(i + 2), positioner fra 0",
         "ideel DCG af min(|R|, k) ettaller; 0,0 for et spørgsmål uden relevant id",
         "et relevant id, der står to gange, tæller på hver position", "gennemsnittet deler med alle spørgsmål")),
)

# ---- recall --------------------------------------------------------------------------------------
_RECALL_LESSON = '''def recall_at_k(golden_dataset, retriever, k=5):
    """Mean share of the relevant chunks found in the top k (questions with none are skipped)."""
    recalls = []
    for item in golden_dataset:
        relevant = set(item["relevant_chunk_ids"])
        if not relevant:
            continue
        results = retriever.retrieve(item["question"], top_k=k)
        retrieved = set(r["id"] for r in results[:k])
        recalls.append(len(retrieved & relevant) / len(relevant))
    return sum(recalls) / len(recalls) if recalls else 0.0
'''

RECALL = Exercise(
    name="recall_at_k", step="recall",
    title=_both("Recall@K", "Recall@K"),
    prompt=_both(
        "Write `recall_at_k(golden_dataset, retriever, k=5)`: for each question the share of its relevant chunks "
        "that are among the first `k` results. Take the first `k` ids as a **set** (a chunk listed twice counts "
        "once) and divide by the number of relevant chunks `|R|`. **Skip** questions with no relevant chunk: "
        "the mean is over the others only.\n\n" + _DATA_EN,
        "Skriv `recall_at_k(golden_dataset, retriever, k=5)`: for hvert spørgsmål andelen af dets relevante "
        "chunks, der er blandt de første `k` resultater. Tag de første `k` id'er som en **mængde** (en chunk, der "
        "står to gange, tæller én gang), og divider med antallet af relevante chunks `|R|`. **Spring** spørgsmål "
        "uden relevant chunk **over**: gennemsnittet er kun over de andre.\n\n" + _DATA_DA),
    starter='''def recall_at_k(golden_dataset, retriever, k=5):
    """Mean share of the relevant chunks found in the top k (questions with none are skipped)."""
    ...
''',
    examples=_many(
        ("Relevant `{a, c, e}`, ranking `[a, b, c, d]`, k = 3: found {a, c}, R@3 = 2 / 3 = 0.667.",
         "Recalls 1.0 and 0.5 and one out-of-scope question: R = (1.0 + 0.5) / 2 = 0.75 (it is skipped)."),
        ("Relevante `{a, c, e}`, rangering `[a, b, c, d]`, k = 3: fundet {a, c}, R@3 = 2 / 3 = 0,667.",
         "Recall 1,0 og 0,5 og et spørgsmål uden for emnet: R = (1,0 + 0,5) / 2 = 0,75 (det springes over).")),
    hints=_many(
        ("Recall asks: how many of the relevant chunks did we find?",
         "Divide by `len(relevant)`, not by `k`.",
         "Use sets: `len(set(top_k_ids) & relevant)`; skip a question whose `relevant_chunk_ids` is empty."),
        ("Recall spørger: hvor mange af de relevante chunks fandt vi?",
         "Divider med `len(relevant)`, ikke med `k`.",
         "Brug mængder: `len(set(top_k_ids) & relevant)`; spring et spørgsmål over, hvis dets "
         "`relevant_chunk_ids` er tom.")),
    lesson_code=_RECALL_LESSON,
    conventions=_many(
        ("the first k ids as a set (a duplicate counts once), divided by |R|",
         "questions with no relevant id are skipped: the mean is over the others"),
        ("de første k id'er som en mængde (en dublet tæller én gang), divideret med |R|",
         "spørgsmål uden relevant id springes over: gennemsnittet er over de andre")),
)

# ---- by category ---------------------------------------------------------------------------------
_CAT_LESSON = '''from collections import defaultdict


def evaluate_by_category(golden_dataset, retriever, k=5):
    """Hit rate@k per category: {category: {"hits", "count", "hit_rate"}}."""
    stats = defaultdict(lambda: {"hits": 0, "count": 0})
    for item in golden_dataset:
        category = item.get("category", "unknown")
        results = retriever.retrieve(item["question"], top_k=k)
        retrieved_ids = [r["id"] for r in results]
        stats[category]["count"] += 1
        if any(rid in item["relevant_chunk_ids"] for rid in retrieved_ids):
            stats[category]["hits"] += 1
    report = {}
    for category, s in sorted(stats.items()):
        rate = s["hits"] / s["count"]
        print(f"{category:<15} {rate:.1%} ({s['hits']}/{s['count']})")
        report[category] = {"hits": s["hits"], "count": s["count"], "hit_rate": rate}
    return report
'''

CATEGORIES = Exercise(
    name="evaluate_by_category", step="categories",
    title=_both("Hit rate per category", "Hit rate pr. kategori"),
    prompt=_both(
        "Write `evaluate_by_category(golden_dataset, retriever, k=5)`: the hit rate@k of each category. Return a "
        "dict `{category: {'hits': int, 'count': int, 'hit_rate': float}}` (and print it, as the lesson does: "
        "the share and hits/count). A question without a `category` key belongs to `'unknown'`.\n\n" + _DATA_EN,
        "Skriv `evaluate_by_category(golden_dataset, retriever, k=5)`: hit rate@k for hver kategori. Returner en "
        "dict `{kategori: {'hits': int, 'count': int, 'hit_rate': float}}` (og udskriv den, som lektionen gør: "
        "andelen og hits/antal). Et spørgsmål uden nøglen `category` hører til `'unknown'`.\n\n" + _DATA_DA),
    starter='''from collections import defaultdict


def evaluate_by_category(golden_dataset, retriever, k=5):
    """Hit rate@k per category: {category: {"hits", "count", "hit_rate"}}."""
    ...
''',
    examples=_many(
        ("Two factual questions (one hit) and one comparison question (a hit): "
         "`{'comparison': {'hits': 1, 'count': 1, 'hit_rate': 1.0}, 'factual': {'hits': 1, 'count': 2, "
         "'hit_rate': 0.5}}`.",),
        ("To faktuelle spørgsmål (ét hit) og ét sammenligningsspørgsmål (et hit): "
         "`{'comparison': {'hits': 1, 'count': 1, 'hit_rate': 1.0}, 'factual': {'hits': 1, 'count': 2, "
         "'hit_rate': 0.5}}`.",)),
    hints=_many(
        ("Group the questions by `item.get('category', 'unknown')`, count questions and hits per group.",
         "`collections.defaultdict(lambda: {'hits': 0, 'count': 0})` keeps the counting short.",
         "A hit is the same as in `hit_rate_at_k`; out-of-scope questions count in their own category."),
        ("Grupper spørgsmålene efter `item.get('category', 'unknown')`, og tæl spørgsmål og hits pr. gruppe.",
         "`collections.defaultdict(lambda: {'hits': 0, 'count': 0})` gør optællingen kort.",
         "Et hit er det samme som i `hit_rate_at_k`; spørgsmål uden for emnet tæller i deres egen kategori.")),
    lesson_code=_CAT_LESSON,
    conventions=_many(
        ("hit rate@k per category", "a missing category reads \"unknown\"",
         "out-of-scope questions are misses in their category"),
        ("hit rate@k pr. kategori", "en manglende kategori hedder \"unknown\"",
         "spørgsmål uden for emnet er bomme i deres kategori")),
)

# ---- failures ------------------------------------------------------------------------------------
_FAIL_LESSON = '''def analyze_failures(golden_dataset, retriever, k=5):
    """The questions with no relevant chunk in the top k, with what was expected and retrieved."""
    failures = []
    for item in golden_dataset:
        results = retriever.retrieve(item["question"], top_k=k)
        retrieved_ids = [r["id"] for r in results]
        if not set(retrieved_ids[:k]) & set(item["relevant_chunk_ids"]):
            failures.append({
                "question": item["question"],
                "expected_ids": item["relevant_chunk_ids"],
                "retrieved_ids": retrieved_ids[:k],
                "top_score": results[0]["score"] if results else None,
            })
    return failures
'''

FAILURES = Exercise(
    name="analyze_failures", step="failures",
    title=_both("Failure analysis", "Fejlanalyse"),
    prompt=_both(
        "Write `analyze_failures(golden_dataset, retriever, k=5)`: the list of questions with **no** relevant "
        "chunk among the first `k` results, in the golden set's order. Each failure is a dict with `question`, "
        "`expected_ids` (its relevant chunk ids), `retrieved_ids` (the first `k` ids) and `top_score` (the "
        "score of the best result). An out-of-scope question has no relevant chunk, so it is always "
        "listed.\n\n" + _DATA_EN,
        "Skriv `analyze_failures(golden_dataset, retriever, k=5)`: listen af spørgsmål **uden** relevant chunk "
        "blandt de første `k` resultater, i guldsættets rækkefølge. Hver fejl er en dict med `question`, "
        "`expected_ids` (dets relevante chunk-id'er), `retrieved_ids` (de første `k` id'er) og `top_score` "
        "(scoren for det bedste resultat). Et spørgsmål uden for emnet har ingen relevant chunk, så det kommer "
        "altid med.\n\n" + _DATA_DA),
    starter='''def analyze_failures(golden_dataset, retriever, k=5):
    """The questions with no relevant chunk in the top k, with what was expected and retrieved."""
    ...
''',
    examples=_many(
        ("Relevant `{c2}`, ranking `[c7 (0.81), c9 (0.77)]`, k = 2: a failure, `{'question': ..., "
         "'expected_ids': ['c2'], 'retrieved_ids': ['c7', 'c9'], 'top_score': 0.81}`.",),
        ("Relevant `{c2}`, rangering `[c7 (0,81), c9 (0,77)]`, k = 2: en fejl, `{'question': ..., "
         "'expected_ids': ['c2'], 'retrieved_ids': ['c7', 'c9'], 'top_score': 0.81}`.",)),
    hints=_many(
        ("A failure is the opposite of a hit: no relevant id among the first k.",
         "Keep the golden set's order and only the first k retrieved ids.",
         "`top_score` is `results[0]['score']`, the best score."),
        ("En fejl er det modsatte af et hit: intet relevant id blandt de første k.",
         "Behold guldsættets rækkefølge og kun de første k hentede id'er.",
         "`top_score` er `results[0]['score']`, den bedste score.")),
    lesson_code=_FAIL_LESSON,
    conventions=_many(
        ("a failure: no relevant id among the first k (as a set)", "an out-of-scope question is always listed"),
        ("en fejl: intet relevant id blandt de første k (som mængde)", "et spørgsmål uden for emnet kommer altid "
         "med")),
)

#: The exercises in the course's order: lesson 2's here, then those of the lessons' own modules
#: (:mod:`rag_metrics.exercises.generation`, :mod:`rag_metrics.exercises.system`, added at the end of this module).
EXERCISES: tuple[Exercise, ...] = (HIT_RATE, MRR, PRECISION, NDCG, RECALL, CATEGORIES, FAILURES)


def exercise(name: str) -> Exercise:
    """The exercise ``name``; :class:`InputError` naming the known ones otherwise."""
    for ex in EXERCISES:
        if ex.name == name:
            return ex
    raise InputError(f"unknown exercise {str(name)[:80]!r}; one of {', '.join(e.name for e in EXERCISES)}")


def exercises_for_step(step: str, lesson: str = "retrieval") -> tuple[Exercise, ...]:
    """The exercises of step ``step`` of lesson ``lesson`` (empty for a step with no function)."""
    return tuple(e for e in EXERCISES if e.step == step and e.lesson == lesson)


def exercises_for_lesson(lesson: str) -> tuple[Exercise, ...]:
    """The exercises of the course's lesson ``lesson``, in order."""
    return tuple(e for e in EXERCISES if e.lesson == lesson)


#: Texts around the lesson's code on a Lesson step (``UI_TEXT[key][lang]``).
UI_TEXT: Mapping[str, Mapping[str, str]] = MappingProxyType({
    "lesson_code": _both("The lesson's code", "Lektionens kode"),
    "conventions": _both("Conventions this code implies:", "Konventioner, som koden indebærer:"),
    "open": _both("Write it yourself: open the exercise", "Skriv den selv: åbn øvelsen"),
})


# ---- the other lessons' exercises ---------------------------------------------------------------
def _lesson_exercises(name: str) -> tuple[Exercise, ...]:
    """The exercises module ``rag_metrics.exercises.<name>`` defines (its ``EXERCISES``, else every
    :class:`Exercise` it holds, in the order defined); none when the module does not exist (any other
    error is raised).  The module registers its checks and diagnoses as it loads
    (:data:`rag_metrics.exercises.checks.BUILDERS`, :data:`rag_metrics.exercises.mistakes.DIAGNOSES`)."""
    import importlib

    module = f"rag_metrics.exercises.{name}"
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name == module:
            return ()
        raise
    found = getattr(mod, "EXERCISES", None)
    if found is None:
        found = tuple(v for v in vars(mod).values() if isinstance(v, Exercise))
    return tuple(found)


def _extend() -> tuple[Exercise, ...]:
    out = list(EXERCISES)
    for name in ("generation", "system"):
        for ex in _lesson_exercises(name):
            if any(e.name == ex.name for e in out):
                raise InputError(f"exercise {ex.name!r} is defined twice (rag_metrics.exercises.{name})")
            out.append(ex)
    return tuple(out)


EXERCISES = _extend()
