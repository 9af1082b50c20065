"""Every text of the lesson in English and Danish: one table, one key per text.

``TEXTS[key][lang]`` with ``lang`` in :data:`LANGUAGES`.  Placeholders (``{k}``, ``{n}``) are the
same in both languages (a test checks it); :func:`text` fills them.  Step, task and quiz texts
follow the key scheme ``step.<step>.title|body``, ``task.<task>.prompt|hint|ok`` and
``opt.<task>.<option>``; ``ui.*`` are the Lesson page's own labels.
"""
from __future__ import annotations

from rag_metrics.errors import InputError

__all__ = ["LANGUAGES", "TEXTS", "teacher_change_text", "text"]

#: Language code -> its name in that language (what the switch shows).
LANGUAGES = {"en": "English", "da": "Dansk"}

_T: dict[str, tuple[str, str]] = {
    # ---- the page ------------------------------------------------------------------------------
    "ui.title": ("Lesson: measuring retrieval", "Lektion: at måle retrieval"),
    "ui.intro": (
        "Eleven short steps, in the lesson's order. Each step explains one idea, shows the live numbers of "
        "the corpus and system chosen in the sidebar, and gives you a task that is checked automatically. "
        "Your progress is saved in your workspace.",
        "Elleve korte trin i lektionens rækkefølge. Hvert trin forklarer én idé, viser de aktuelle tal for det "
        "korpus og system, der er valgt i sidepanelet, og giver dig en opgave, som bliver rettet automatisk. "
        "Dine fremskridt gemmes i dit workspace."),
    "ui.language": ("Language", "Sprog"),
    "ui.step_of": ("Step {n} of {total}", "Trin {n} af {total}"),
    "ui.progress": ("{done} of {total} steps done", "{done} af {total} trin klaret"),
    "ui.live": ("Your numbers now", "Dine tal lige nu"),
    "ui.live_caption": ("Corpus {corpus}, system {system}, K = {k}: the same numbers as the Dashboard.",
                        "Korpus {corpus}, system {system}, K = {k}: de samme tal som på Dashboard."),
    "ui.task": ("Task", "Opgave"),
    "ui.check": ("Check", "Tjek"),
    "ui.hint": ("Hint", "Ledetråd"),
    "ui.right": ("Right.", "Rigtigt."),
    "ui.wrong": ("Not yet. Hint: {hint}", "Ikke helt. Ledetråd: {hint}"),
    "ui.previous": ("Previous step", "Forrige trin"),
    "ui.next": ("Next step", "Næste trin"),
    "ui.steps": ("Steps", "Trin"),
    "ui.your_answer": ("Your answer", "Dit svar"),
    "ui.none": ("There is none", "Der er ingen"),
    "ui.move_up": ("Up", "Op"),
    "ui.move_down": ("Down", "Ned"),
    "ui.relevant": ("relevant", "relevant"),
    "ui.not_relevant": ("not relevant", "ikke relevant"),
    "ui.sandbox_mrr": ("MRR of this list: {value}", "MRR for denne liste: {value}"),
    "ui.question": ("Question", "Spørgsmål"),
    "ui.new_k": ("Another K", "En anden K"),
    "ui.will_change": ("Metrics that will change", "Mål, der vil ændre sig"),
    "ui.label_chunk": ("Chunk to label as relevant", "Chunk, der skal markeres som relevant"),
    "ui.label_button": ("Label as relevant", "Markér som relevant"),
    "ui.recall_now": ("Recall@{k} of this question now", "Recall@{k} for dette spørgsmål nu"),
    "ui.reason": ("Why did it fail?", "Hvorfor slog det fejl?"),
    "ui.no_failures": ("No question fails at K = {k}: choose a smaller K in the sidebar.",
                       "Intet spørgsmål fejler ved K = {k}: vælg en mindre K i sidepanelet."),
    "ui.quiz_score": ("Quiz: {right} of {total} right", "Quiz: {right} af {total} rigtige"),
    "ui.finished": ("You have finished the lesson.", "Du har gennemført lektionen."),
    # the course (rag_metrics.lesson.course): the lesson picker, the link on to the next lesson, the URL
    "ui.course": ("The course", "Kurset"),
    "ui.course_button": ("Lesson {n}", "Lektion {n}"),
    "ui.course_pick": ("Lesson", "Lektion"),
    "ui.course_lesson": ("Lesson {n}: {title}", "Lektion {n}: {title}"),
    "ui.course_progress": ("{done} of {total} steps", "{done} af {total} trin"),
    "ui.course_here": ("You are here", "Du er her"),
    "ui.course_next": ("Next: lesson {n}, {title}", "Næste: lektion {n}, {title}"),
    "ui.course_bad_link": ("Ignored lesson={value} from the link: the lessons are {keys}.",
                           "Ignorerede lesson={value} fra linket: lektionerne er {keys}."),
    "ui.course_bad_step": ("Ignored step={value} from the link: this lesson's steps are 1 to {total}.",
                           "Ignorerede step={value} fra linket: denne lektions trin er 1 til {total}."),
    "ui.figures_failed": ("These figures could not be computed: {error}", "Disse tal kunne ikke beregnes: {error}"),
    # the teacher's versioned changes (rag_metrics.workspace.versions), told to the student's open session
    "ui.teacher_reset_progress": (
        "Your teacher reset your progress: the lesson starts again from step 1.",
        "Din lærer har nulstillet dine fremskridt: lektionen starter forfra fra trin 1."),
    "ui.teacher_reset_golden": (
        "Your teacher reset your golden set: you now work on the class's shared set.",
        "Din lærer har nulstillet dit golden set: du arbejder nu på klassens fælles sæt."),
    "ui.teacher_pushed_golden": (
        "Your teacher replaced your golden set with the class's shared set.",
        "Din lærer har erstattet dit golden set med klassens fælles sæt."),
    "ui.teacher_not_saved": ("What you just did was not saved: do it again if you still want it.",
                             "Det, du lige gjorde, blev ikke gemt: gør det igen, hvis du stadig vil."),

    # ---- 1. why rank-aware metrics -----------------------------------------------------------
    "step.why.title": ("Why rank-aware metrics?", "Hvorfor rangfølsomme mål?"),
    "step.why.body": (
        "A RAG system sends only the first few retrieved chunks to the language model. So it is not enough "
        "that a relevant chunk is found somewhere: it has to be near the top. Accuracy-style measures ignore "
        "the order; rank-aware measures reward a relevant chunk more the higher it is ranked.",
        "Et RAG-system sender kun de første få hentede chunks videre til sprogmodellen. Det er derfor ikke nok, "
        "at en relevant chunk bliver fundet et eller andet sted: den skal ligge tæt på toppen. Mål som "
        "accuracy ser bort fra rækkefølgen; rangfølsomme mål belønner en relevant chunk mere, jo højere den "
        "er placeret."),
    "task.why_pick.prompt": (
        "Retriever A always puts the relevant chunk at rank 1, retriever B always at rank 5. Which metric at "
        "K = 5 tells them apart?",
        "Retriever A placerer altid den relevante chunk som nummer 1, retriever B altid som nummer 5. Hvilket "
        "mål ved K = 5 kan skelne dem fra hinanden?"),
    "task.why_pick.hint": (
        "Hit rate@5 only asks whether something relevant is in the top 5. Which metric looks at the rank?",
        "Hit rate@5 spørger kun, om der er noget relevant blandt de 5 første. Hvilket mål ser på placeringen?"),
    "task.why_pick.ok": ("MRR is 1/1 = 1 for A and 1/5 = 0.2 for B; hit rate@5 is 1 for both.",
                         "MRR er 1/1 = 1 for A og 1/5 = 0,2 for B; hit rate@5 er 1 for begge."),
    "opt.why_pick.hit_rate": ("Hit rate@5", "Hit rate@5"),
    "opt.why_pick.mrr": ("MRR", "MRR"),
    "opt.why_pick.recall": ("Recall@5", "Recall@5"),

    # ---- 2. hit rate@K ----------------------------------------------------------------------------
    "step.hit_rate.title": ("Hit rate@K", "Hit rate@K"),
    "step.hit_rate.body": (
        "Hit rate@K is 1 for a question when at least one relevant chunk is among the first K results, "
        "else 0; the mean over the questions is the share that were \"hit\". Compare K = 1, 3, 5 and 10: a "
        "large jump from 1 to 3 means the answer is often found, just not first.",
        "Hit rate@K er 1 for et spørgsmål, når mindst én relevant chunk er blandt de første K resultater, "
        "ellers 0; gennemsnittet over spørgsmålene er andelen, der blev \"ramt\". Sammenlign K = 1, 3, 5 og "
        "10: et stort spring fra 1 til 3 betyder, at svaret tit bliver fundet, bare ikke først."),
    "task.hit_count.prompt": (
        "How many of the {n} questions in the mean have a relevant chunk in the top 10 but not at rank 1?",
        "Hvor mange af de {n} spørgsmål i gennemsnittet har en relevant chunk blandt de 10 første, men ikke "
        "som nummer 1?"),
    "task.hit_count.hint": (
        "Hit rate@K times the number of questions is the number hit at K. Subtract the count at K = 1 from the "
        "count at K = 10.",
        "Hit rate@K gange antallet af spørgsmål er antallet, der rammes ved K. Træk antallet ved K = 1 fra "
        "antallet ved K = 10."),
    "task.hit_count.ok": ("These questions are found, but not first: MRR will show it.",
                          "Disse spørgsmål bliver fundet, men ikke først: det kan MRR vise."),

    # ---- 3. MRR -----------------------------------------------------------------------------------
    "step.mrr.title": ("MRR: how high is the first relevant chunk?",
                       "MRR: hvor højt ligger den første relevante chunk?"),
    "step.mrr.body": (
        "The reciprocal rank of a question is 1 / (the rank of its first relevant chunk): 1 at rank 1, 0.5 at "
        "rank 2, 0.33 at rank 3, and 0 when nothing relevant is found. MRR is the mean over the questions. "
        "Read it with the lesson's table: 1.0 perfect, 0.5 good (around rank 2), 0.33 acceptable, 0.25 "
        "weak, 0.1 poor. The lesson's target is MRR > 0.7.",
        "Den reciprokke rang for et spørgsmål er 1 / (rangen af den første relevante chunk): 1 på plads 1, "
        "0,5 på plads 2, 0,33 på plads 3 og 0, når intet relevant findes. MRR er gennemsnittet over "
        "spørgsmålene. Aflæs det med lektionens tabel: 1,0 perfekt, 0,5 godt (omkring plads 2), 0,33 "
        "acceptabelt, 0,25 svagt, 0,1 dårligt. Lektionens mål er MRR > 0,7."),
    "task.mrr_sandbox.prompt": (
        "The list below has one relevant chunk, at rank 1, so MRR = 1. Move it so that MRR becomes 0.5, then "
        "check.",
        "Listen nedenfor har én relevant chunk, på plads 1, så MRR = 1. Flyt den, så MRR bliver 0,5, og tjek "
        "så."),
    "task.mrr_sandbox.hint": ("MRR = 1 / rank of the first relevant result. Which rank gives 1 / rank = 0.5?",
                              "MRR = 1 / rangen af det første relevante resultat. Hvilken plads giver "
                              "1 / rang = 0,5?"),
    "task.mrr_sandbox.ok": ("At rank 2, 1 / 2 = 0.5: \"good\" in the lesson's table.",
                            "På plads 2 er 1 / 2 = 0,5: \"godt\" i lektionens tabel."),
    "task.mrr_row.prompt": (
        "Your system's MRR (whole ranking) is {mrr}. Which row of the lesson's table describes it?",
        "Dit systems MRR (hele rangeringen) er {mrr}. Hvilken række i lektionens tabel beskriver det?"),
    "task.mrr_row.hint": (
        "Take the row with the largest value that is not above your MRR: 0.5 is still \"good\", 0.49 is "
        "\"acceptable\".",
        "Tag rækken med den største værdi, der ikke er større end din MRR: 0,5 er stadig \"godt\", 0,49 er "
        "\"acceptabelt\"."),
    "task.mrr_row.ok": ("That is the table's reading of your MRR.", "Det er tabellens aflæsning af din MRR."),
    "opt.mrr_row.perfect": ("1.0: perfect", "1,0: perfekt"),
    "opt.mrr_row.good": ("0.5: good, around rank 2", "0,5: godt, omkring plads 2"),
    "opt.mrr_row.acceptable": ("0.33: acceptable, around rank 3", "0,33: acceptabelt, omkring plads 3"),
    "opt.mrr_row.weak": ("0.25: weak, around rank 4", "0,25: svagt, omkring plads 4"),
    "opt.mrr_row.poor": ("0.1: poor, around rank 10", "0,1: dårligt, omkring plads 10"),
    "opt.mrr_row.very_poor": ("below 0.1: very poor", "under 0,1: meget dårligt"),

    # ---- 4. precision@K ---------------------------------------------------------------------------
    "step.precision.title": ("Precision@K", "Precision@K"),
    "step.precision.body": (
        "Precision@K is the share of the first K results that are relevant: 2 relevant chunks in the top 5 "
        "give 2/5 = 0.4. The divisor is K even when fewer results came back. The lesson's target is "
        "P@5 > 0.6, but a question with only 2 relevant chunks can never exceed 0.4 at K = 5: the Dashboard "
        "shows the best value your golden set allows beside each target.",
        "Precision@K er andelen af de første K resultater, der er relevante: 2 relevante chunks blandt de 5 "
        "første giver 2/5 = 0,4. Der divideres med K, også når der kom færre resultater tilbage. Lektionens "
        "mål er P@5 > 0,6, men et spørgsmål med kun 2 relevante chunks kan aldrig komme over 0,4 ved K = 5: "
        "Dashboard-siden viser ved siden af hvert mål den bedste værdi, dit golden set tillader."),
    "task.p5_best.prompt": (
        "What is the best P@5 that any ranking could reach on this golden set (three decimals)?",
        "Hvad er den bedste P@5, nogen rangering kan opnå på dette golden set (tre decimaler)?"),
    "task.p5_best.hint": (
        "Rank every question perfectly: a question with r relevant chunks gets min(r, 5) / 5. Average that "
        "over the questions in the mean, or read \"best possible\" on the Dashboard.",
        "Rangér alle spørgsmål perfekt: et spørgsmål med r relevante chunks får min(r, 5) / 5. Tag "
        "gennemsnittet over spørgsmålene, eller aflæs \"best possible\" på Dashboard-siden."),
    "task.p5_best.ok": ("So the target 0.6 says as much about the golden set as about the retriever.",
                        "Målet på 0,6 siger altså lige så meget om golden set'et som om retrieveren."),

    # ---- 5. DCG and NDCG --------------------------------------------------------------------------
    "step.ndcg.title": ("DCG and NDCG", "DCG og NDCG"),
    "step.ndcg.body": (
        "DCG adds up the relevant results, each discounted by its rank: gain / log2(rank + 1). NDCG divides by "
        "the DCG of the ideal ranking, so 1 means \"as good as possible\". In the lesson's code relevance is "
        "binary (gain 1 for a relevant chunk); trec_eval uses the grades themselves. The switch \"As in the "
        "lesson\" in the sidebar gives the lesson's version.",
        "DCG lægger de relevante resultater sammen, hver nedskrevet efter sin plads: gevinst / log2(plads + 1). "
        "NDCG dividerer med DCG for den ideelle rangering, så 1 betyder \"så godt som muligt\". I lektionens "
        "kode er relevans binær (gevinst 1 for en relevant chunk); trec_eval bruger selve karaktererne. "
        "Valget \"As in the lesson\" i sidepanelet giver lektionens version."),
    "task.ndcg_calc.prompt": (
        "Binary relevance. A question has 2 relevant chunks; the ranking is [not relevant, relevant, not "
        "relevant, relevant]. Compute NDCG@3 (three decimals).",
        "Binær relevans. Et spørgsmål har 2 relevante chunks; rangeringen er [ikke relevant, relevant, ikke "
        "relevant, relevant]. Beregn NDCG@3 (tre decimaler)."),
    "task.ndcg_calc.hint": (
        "Within the top 3 only rank 2 is relevant: DCG = 1 / log2(3). The ideal ranking puts both relevant "
        "chunks first: IDCG = 1 / log2(2) + 1 / log2(3).",
        "Blandt de 3 første er kun plads 2 relevant: DCG = 1 / log2(3). Den ideelle rangering sætter begge "
        "relevante chunks først: IDCG = 1 / log2(2) + 1 / log2(3)."),
    "task.ndcg_calc.ok": ("0.6309 / 1.6309 = 0.387.", "0,6309 / 1,6309 = 0,387."),

    # ---- 6. recall@K and the trade-off ----------------------------------------------------------
    "step.recall.title": ("Recall@K and the precision/recall trade-off",
                          "Recall@K og afvejningen mellem precision og recall"),
    "step.recall.body": (
        "Recall@K is the share of all relevant chunks that are in the top K; chunks that were never retrieved "
        "still count in the divisor. A larger K can only raise recall, while precision usually falls, because "
        "K grows faster than the hits. Recall also depends on the labels: a relevant chunk nobody labelled "
        "counts as a miss.",
        "Recall@K er andelen af alle relevante chunks, der er blandt de K første; chunks, der aldrig blev "
        "hentet, tæller stadig med i nævneren. En større K kan kun hæve recall, mens precision som regel "
        "falder, fordi K vokser hurtigere end antallet af træf. Recall afhænger også af markeringerne: en "
        "relevant chunk, som ingen har markeret, tæller som en fejl."),
    "task.k_predict.prompt": (
        "Pick another K and tick the metrics whose mean will change when you go from K = {k} to it. Then check.",
        "Vælg en anden K, og sæt kryds ved de mål, hvis gennemsnit vil ændre sig, når du går fra K = {k} til "
        "den. Tjek så."),
    "task.k_predict.hint": (
        "Hit rate and recall can only grow with K; precision divides by K; MRR only changes when some question's "
        "first relevant chunk lies between the two K; MAP changes with every relevant chunk in between, and NDCG "
        "also when a question has more relevant chunks than the smaller K (its ideal DCG grows).",
        "Hit rate og recall kan kun vokse med K; precision dividerer med K; MRR ændrer sig kun, når et spørgsmåls "
        "første relevante chunk ligger mellem de to K; MAP ændrer sig med hver relevant chunk imellem, og NDCG "
        "også, når et spørgsmål har flere relevante chunks end den mindste K (dets ideelle DCG vokser)."),
    "task.k_predict.ok": ("Your prediction matches the numbers.", "Din forudsigelse passer med tallene."),
    "task.label_missing.prompt": (
        "Choose a question, label one of its retrieved chunks that is not labelled yet as relevant, and type "
        "the question's recall@{k} afterwards.",
        "Vælg et spørgsmål, markér en af dets hentede chunks, der ikke er markeret endnu, som relevant, og "
        "skriv spørgsmålets recall@{k} bagefter."),
    "task.label_missing.hint": (
        "Recall@K = relevant in the top K / all relevant. A new label adds one to the divisor, and to the "
        "count above it too when the chunk is in the top K. The label must be new compared to the shared "
        "golden set.",
        "Recall@K = relevante blandt de K første / alle relevante. En ny markering lægger én til nævneren og "
        "også til tælleren, når chunken er blandt de K første. Markeringen skal være ny i forhold til det "
        "fælles golden set."),
    "task.label_missing.ok": ("Labels move recall as much as the retriever does.",
                              "Markeringer flytter recall lige så meget som retrieveren."),

    # ---- 7. RAGAS ---------------------------------------------------------------------------------
    "step.ragas.title": ("RAGAS: context and answer metrics", "RAGAS: mål for kontekst og svar"),
    "step.ragas.body": (
        "RAGAS looks at the whole RAG chain. Context precision: are the relevant chunks ranked above the "
        "irrelevant ones? Context recall: does the retrieved context cover what the reference answer needs? "
        "Faithfulness: is every claim in the generated answer supported by the context? Answer relevancy: "
        "does the answer address the question? The first two measure retrieval, the last two the answer.",
        "RAGAS ser på hele RAG-kæden. Context precision: ligger de relevante chunks over de irrelevante? "
        "Context recall: dækker den hentede kontekst det, referencesvaret kræver? Faithfulness: er hver "
        "påstand i det genererede svar understøttet af konteksten? Answer relevancy: svarer svaret på "
        "spørgsmålet? De to første måler retrieval, de to sidste svaret."),
    "task.ragas_claim.prompt": (
        "An answer states a price that no retrieved chunk contains. Which metric catches it?",
        "Et svar nævner en pris, som ingen af de hentede chunks indeholder. Hvilket mål fanger det?"),
    "task.ragas_claim.hint": ("Which metric checks the answer's claims against the context?",
                              "Hvilket mål tjekker svarets påstande mod konteksten?"),
    "task.ragas_claim.ok": ("Faithfulness: the claim is not supported by the context.",
                            "Faithfulness: påstanden er ikke understøttet af konteksten."),
    "task.ragas_order.prompt": (
        "Every relevant chunk is retrieved, but at ranks 8 to 10, below seven irrelevant ones. Which metric is "
        "low?",
        "Alle relevante chunks bliver hentet, men på plads 8 til 10, under syv irrelevante. Hvilket mål er "
        "lavt?"),
    "task.ragas_order.hint": ("Nothing is missing, so recall is fine. Which metric cares about the order?",
                              "Intet mangler, så recall er fint. Hvilket mål går op i rækkefølgen?"),
    "task.ragas_order.ok": ("Context precision rewards relevant chunks ranked early.",
                            "Context precision belønner relevante chunks, der ligger tidligt."),
    "opt.ragas.context_precision": ("Context precision", "Context precision"),
    "opt.ragas.context_recall": ("Context recall", "Context recall"),
    "opt.ragas.faithfulness": ("Faithfulness", "Faithfulness"),
    "opt.ragas.answer_relevancy": ("Answer relevancy", "Answer relevancy"),

    # ---- 8. per category --------------------------------------------------------------------------
    "step.categories.title": ("The per-category breakdown", "Opdelingen efter kategori"),
    "step.categories.body": (
        "One mean hides where a system fails. Split the golden set by question type (factual, how-to, "
        "comparison, ...) and read each category's mean with its number of questions n: a category with "
        "n = 3 can swing a lot by chance.",
        "Ét gennemsnit skjuler, hvor et system fejler. Del golden set'et op efter spørgsmålstype (fakta, "
        "vejledning, sammenligning, ...) og aflæs hver kategoris gennemsnit sammen med antallet af spørgsmål "
        "n: en kategori med n = 3 kan svinge meget ved et tilfælde."),
    "task.weakest_category.prompt": ("Which category has the lowest hit rate@{k}?",
                                     "Hvilken kategori har den laveste hit rate@{k}?"),
    "task.weakest_category.hint": (
        "Open the per-category chart on the Dashboard with the metric Hit rate, or read the table above.",
        "Åbn diagrammet efter kategori på Dashboard-siden med målet Hit rate, eller aflæs tabellen ovenfor."),
    "task.weakest_category.ok": ("That is where to look first.", "Det er der, man skal kigge først."),

    # ---- 9. when metrics disagree ----------------------------------------------------------------
    "step.disagree.title": ("When metrics disagree", "Når målene er uenige"),
    "step.disagree.body": (
        "Each metric answers another question, so they can disagree on the same ranking: hit rate@5 = 1 says "
        "\"something relevant is in the top 5\", while NDCG@5 can still be low when it sits at rank 5 and "
        "other relevant chunks are missing. Report the metric that matches what your system needs.",
        "Hvert mål besvarer et andet spørgsmål, så de kan være uenige om den samme rangering: hit rate@5 = 1 "
        "siger \"der er noget relevant blandt de 5 første\", mens NDCG@5 stadig kan være lav, når det ligger "
        "på plads 5, og andre relevante chunks mangler. Rapportér det mål, der passer til det, dit system "
        "har brug for."),
    "task.hit_not_ndcg.prompt": ("Find a question where hit rate@5 = 1 but NDCG@5 < 0.5.",
                                 "Find et spørgsmål, hvor hit rate@5 = 1, men NDCG@5 < 0,5."),
    "task.hit_not_ndcg.hint": (
        "Look for a question whose first relevant chunk is at rank 3 to 5, or that has several relevant chunks "
        "of which only one is found. The Failures and drill-down page shows each question's metrics.",
        "Kig efter et spørgsmål, hvis første relevante chunk ligger på plads 3 til 5, eller som har flere "
        "relevante chunks, hvoraf kun én bliver fundet. Siden \"Failures and drill-down\" viser hvert spørgsmåls "
        "mål."),
    "task.hit_not_ndcg.ok": ("Hit, yet far from the ideal ranking.", "Ramt, men langt fra den ideelle rangering."),

    # ---- 10. failure analysis -----------------------------------------------------------------
    "step.failures.title": ("Failure analysis", "Fejlanalyse"),
    "step.failures.body": (
        "A failure at K is a question with no relevant chunk in the top K. Look at why: the relevant chunk was "
        "retrieved but ranked below K (a ranking problem), it was not retrieved at all (a recall problem: "
        "chunking, vocabulary, the embedding model), or the question has no relevant label (a golden-set "
        "problem).",
        "En fejl ved K er et spørgsmål uden relevant chunk blandt de K første. Se på hvorfor: den relevante "
        "chunk blev hentet, men placeret under K (et rangeringsproblem), den blev slet ikke hentet (et "
        "recall-problem: chunking, ordvalg, embedding-modellen), eller spørgsmålet har ingen relevant "
        "markering (et problem i golden set'et)."),
    "task.why_failed.prompt": ("Pick a question that fails at K = {k} and say why it failed.",
                               "Vælg et spørgsmål, der fejler ved K = {k}, og sig, hvorfor det fejlede."),
    "task.why_failed.hint": (
        "On the Failures and drill-down page, \"would hit at K\" gives the rank of the first relevant chunk "
        "when it was retrieved below K; empty means it was not retrieved at all.",
        "På siden \"Failures and drill-down\" giver \"would hit at K\" rangen af den første relevante chunk, når "
        "den blev hentet under K; tom betyder, at den slet ikke blev hentet."),
    "task.why_failed.ok": ("That is the diagnosis: now you know what to fix.",
                           "Det er diagnosen: nu ved du, hvad der skal rettes."),
    "opt.why_failed.below_k": ("A relevant chunk was retrieved, but below rank K",
                               "En relevant chunk blev hentet, men under plads K"),
    "opt.why_failed.not_retrieved": ("No relevant chunk was retrieved at all",
                                     "Ingen relevant chunk blev hentet overhovedet"),
    "opt.why_failed.no_relevant_label": ("The question has no relevant label",
                                         "Spørgsmålet har ingen relevant markering"),

    # ---- 11. quick check ----------------------------------------------------------------------
    "step.quiz.title": ("Quick check", "Hurtig test"),
    "step.quiz.body": ("Five questions on the whole lesson. Each one is checked on its own.",
                       "Fem spørgsmål om hele lektionen. Hvert spørgsmål rettes for sig."),
    "task.quiz_mrr.prompt": ("MRR = 0.25. Around which rank is the first relevant chunk on average?",
                             "MRR = 0,25. Omkring hvilken plads ligger den første relevante chunk i "
                             "gennemsnit?"),
    "task.quiz_mrr.hint": ("The typical rank is about 1 / MRR.", "Den typiske plads er cirka 1 / MRR."),
    "task.quiz_mrr.ok": ("1 / 0.25 = 4.", "1 / 0,25 = 4."),
    "opt.quiz_mrr.2": ("Rank 2", "Plads 2"),
    "opt.quiz_mrr.4": ("Rank 4", "Plads 4"),
    "opt.quiz_mrr.25": ("Rank 25", "Plads 25"),
    "task.quiz_precision.prompt": ("2 of the top 5 results are relevant. What is P@5?",
                                   "2 af de 5 første resultater er relevante. Hvad er P@5?"),
    "task.quiz_precision.hint": ("Precision@K = relevant in the top K / K.",
                                 "Precision@K = relevante blandt de K første / K."),
    "task.quiz_precision.ok": ("2 / 5 = 0.4.", "2 / 5 = 0,4."),
    "opt.quiz_precision.0.2": ("0.2", "0,2"),
    "opt.quiz_precision.0.4": ("0.4", "0,4"),
    "opt.quiz_precision.0.5": ("0.5", "0,5"),
    "task.quiz_k.prompt": ("Which metric can never go down when K grows?",
                           "Hvilket mål kan aldrig falde, når K vokser?"),
    "task.quiz_k.hint": ("Its divisor does not depend on K.", "Dets nævner afhænger ikke af K."),
    "task.quiz_k.ok": ("Recall divides by all relevant chunks, whatever K is.",
                       "Recall dividerer med alle relevante chunks, uanset K."),
    "opt.quiz_k.precision": ("Precision@K", "Precision@K"),
    "opt.quiz_k.recall": ("Recall@K", "Recall@K"),
    "opt.quiz_k.ndcg": ("NDCG@K", "NDCG@K"),
    "task.quiz_oos.prompt": (
        "A question the corpus cannot answer (out of scope). Under the lesson's convention (the sidebar's "
        "\"as in the lesson\" preset; the app's default differs): what happens to it in the means?",
        "Et spørgsmål, som korpusset ikke kan besvare (out of scope). Under lektionens konvention (forudindstillingen "
        "\"as in the lesson\" i sidepanelet; appens standard er en anden): hvad sker der med det i "
        "gennemsnittene?"),
    "task.quiz_oos.hint": ("The lesson's code divides by all questions.",
                           "Lektionens kode dividerer med alle spørgsmål."),
    "task.quiz_oos.ok": ("The lesson's convention scores it 0 in every mean; the app's default (like trec_eval) "
                         "leaves it out instead.",
                         "Lektionens konvention giver det 0 i alle gennemsnit; appens standard (som trec_eval) "
                         "udelader det i stedet."),
    "opt.quiz_oos.excluded": ("Leaves it out of the means", "Udelader det af gennemsnittene"),
    "opt.quiz_oos.miss": ("Counts it as a miss (0)", "Tæller det som en fejl (0)"),
    "opt.quiz_oos.hit": ("Counts it as a hit (1)", "Tæller det som et træf (1)"),
    "task.quiz_faith.prompt": ("What does faithfulness measure?", "Hvad måler faithfulness?"),
    "task.quiz_faith.hint": ("It is about the generated answer and the retrieved context.",
                             "Det handler om det genererede svar og den hentede kontekst."),
    "task.quiz_faith.ok": ("A faithful answer says nothing the context does not support.",
                           "Et troværdigt svar siger intet, som konteksten ikke understøtter."),
    "opt.quiz_faith.supported": ("Whether the answer's claims are supported by the retrieved context",
                                 "Om svarets påstande er understøttet af den hentede kontekst"),
    "opt.quiz_faith.retrieved": ("Whether the relevant chunks were retrieved",
                                 "Om de relevante chunks blev hentet"),
    "opt.quiz_faith.question": ("Whether the answer addresses the question", "Om svaret svarer på spørgsmålet"),
}

#: ``TEXTS[key][lang]``.
TEXTS: dict[str, dict[str, str]] = {key: dict(zip(LANGUAGES, pair)) for key, pair in _T.items()}


def text(key: str, lang: str = "en", **values: object) -> str:
    """The text ``key`` in ``lang`` with ``values`` filled in (an unknown key or language raises)."""
    if lang not in LANGUAGES:
        raise InputError(f"unknown lesson language {lang!r}; one of {', '.join(LANGUAGES)}")
    try:
        template = TEXTS[key][lang]
    except KeyError:
        raise InputError(f"the lesson has no text {key!r}") from None
    return template.format(**values) if values else template


def teacher_change_text(what: str, kind: str, lang: str = "en", *, refused: bool = False) -> str:
    """What the student's open session says when it takes a teacher's versioned change
    (:mod:`rag_metrics.workspace.versions`) of their ``what`` (``"progress"`` or ``"golden"``) of
    ``kind`` (``"reset"``, ``"push"``); ``refused``: a save of theirs was refused for it."""
    key = "ui.teacher_pushed_golden" if what == "golden" and kind == "push" else f"ui.teacher_reset_{what}"
    lang = lang if lang in LANGUAGES else "en"
    return text(key, lang) + (" " + text("ui.teacher_not_saved", lang) if refused else "")
