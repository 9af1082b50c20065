"""The sidebar's conventions expander reaches every peer convention (issue 19): each widget gives the
library's own numbers under the matching EvalOptions; a bad gain text is one message, no traceback."""
from __future__ import annotations

from app_helpers import expected_cards, library_result, no_exception, shown_cards


def test_peer_conventions_in_the_sidebar_follow_the_library(app):
    lib = library_result("dense")
    assert shown_cards(app) == expected_cards(lib, 5)  # all off by default
    app.checkbox(key="judged_only").check().run()
    no_exception(app)
    assert shown_cards(app) == expected_cards(lib.with_options(judged_only=True), 5)
    assert shown_cards(app) != expected_cards(lib, 5)
    app.checkbox(key="judged_only").uncheck().run()
    app.radio(key="mrr_rule").set_value("granular").run()
    no_exception(app)
    assert shown_cards(app) == expected_cards(lib.with_options(mrr="granular"), 5)
    app.radio(key="mrr_rule").set_value("first").run()
    app.text_input(key="ndcg_gains").input("1=10,2=5,3=1").run()
    no_exception(app)
    assert shown_cards(app) == expected_cards(lib.with_options(gains={1: 10, 2: 5, 3: 1}), 5)
    assert shown_cards(app)["NDCG@5"] != expected_cards(lib, 5)["NDCG@5"]
    app.text_input(key="ndcg_gains").input("2=oops").run()
    no_exception(app)
    assert any("GRADE=GAIN" in e.value for e in app.error)
    assert shown_cards(app) == expected_cards(lib, 5)
    app.text_input(key="ndcg_gains").input("").run()
    app.radio(key="nonpositive_scores").set_value("not_retrieved").run()
    no_exception(app)
    assert shown_cards(app) == expected_cards(lib.with_options(nonpositive_scores="not_retrieved"), 5)
