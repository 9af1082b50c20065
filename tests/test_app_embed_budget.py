"""CPU as a budget in the app (issue 50): a student's corpus upload within the size limit is refused when
its embedding would pass the seat's budget, corpora per seat are bounded, a re-chunking pays for its new
texts, and the teacher's Class page shows what each seat embedded and keeps."""
from __future__ import annotations

from app_helpers import goto, load_corpus_files, no_exception
from rag_metrics.server.budgets import EmbedLedger
from rag_metrics.server.seats import seat_space
from rag_metrics.types import Corpus, Document
from rag_metrics.workspace.corpora import save_corpus, stored_corpora_usage
from tests.test_app_class import KEY, klass, shown_text, sign_in  # noqa: F401 - klass is a fixture
from tests.test_app_class_budgets import budgets  # noqa: F401 - a fixture

DOC = ("# Notes\n\n" + "A sentence about refunds, invoices and the support plans of the shop. " * 40).encode()


def shown(at) -> str:
    return shown_text(at).replace("\\", "")  # markdown's escapes


def test_a_corpus_whose_embedding_passes_the_seats_budget_is_refused_unsaved(klass, budgets):  # noqa: F811
    budgets(embed_texts_per_seat=3)
    at = load_corpus_files(klass.tab("s"), [("a.md", DOC, "text/markdown"), ("b.md", DOC, "text/markdown")])
    text = shown(at)
    assert "lab.budgets.embed_texts_per_seat" in text and "0 of 3 texts used" in text, text
    assert stored_corpora_usage(klass.root, seat_space(at.session_state["_identity_seat"])) == (0, 0)


def test_a_seat_keeps_a_bounded_number_of_corpora(klass, budgets):  # noqa: F811
    budgets(corpora_per_seat=1)
    at = klass.tab("s")
    space = seat_space(at.session_state["_identity_seat"])
    save_corpus("kept", Corpus((Document("d1", "one kept document"),), name="kept"), root=klass.root, space=space)
    load_corpus_files(at, [("a.md", b"# A\n\nshort", "text/markdown")], name="second")
    assert "lab.budgets.corpora_per_seat = 1" in shown(at)
    assert stored_corpora_usage(klass.root, space)[0] == 1


def test_a_rechunking_pays_for_its_new_texts_before_embedding(klass, budgets):  # noqa: F811
    budgets(embed_texts_per_seat=5)
    at = klass.tab("s")
    goto(at, "pages/corpus_explorer.py")
    at.number_input(key="chunk_size_in").set_value(333)
    at.number_input(key="chunk_overlap_in").set_value(33)
    next(b for b in at.button if "Re-chunk" in str(b.label)).click().run()
    no_exception(at)
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any("new texts is over this seat's embedding budget" in e for e in errors), shown(at)


def test_the_class_page_shows_embedding_and_corpora_per_seat(klass, budgets):  # noqa: F811
    budgets(embed_texts_per_class=900)
    at = klass.tab("s")
    seat = at.session_state["_identity_seat"]
    EmbedLedger(klass.root).spend([(f"seat:{seat}", 100), ("class", 900)], 42, 3600)
    save_corpus("kept", Corpus((Document("d1", "one kept document"),), name="kept"), root=klass.root,
                space=seat_space(seat))
    teacher = sign_in(klass.tab("t"), KEY)
    teacher.switch_page("pages/roster.py").run()
    row = teacher.dataframe[0].value.set_index("name").loc[klass.registry.get(seat).name]
    assert (row["embedded texts"], row["corpora"]) == (42, 1)
    assert "the class embedded 42 new texts" in shown(teacher) and "of 900" in shown(teacher)
