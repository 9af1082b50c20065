"""Class mode in the app (AppTest): seats from a cookie, private spaces, the teacher's sign-in and the
Class page, and what one student can never reach of another's.

A "browser" is a cookie jar: every AppTest made by it is one of its tabs.  ``ui.identity`` reads
cookies in one function (``read_cookies``) and writes them in one (``write_cookie``); the tests
replace both by the jar of the AppTest's browser (named in its session state), which is what a real
browser does with the cookie script.
"""
from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from loopback import serve_in_thread

from app_helpers import app_golden, edit_table, no_exception, sample_golden
from rag_metrics.server.proof import PROOF_COOKIE, solve
from rag_metrics.server.seats import COOKIE_NAME, TEACHER_COOKIE, SeatRegistry, seat_space
from rag_metrics.systems.store import SystemStore
from rag_metrics.workspace.store import Workspace, space_dir

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = "sample_corpus"
GOLDEN_PAGE = "pages/golden_set.py"
SYSTEMS_PAGE = "pages/systems.py"
ROSTER_PAGE = "pages/roster.py"
KEY = "the teacher's long key 42"
_BROWSER = "_test_browser"


class Class:
    """The class server of one test: browsers (cookie jars) and their tabs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.jars: dict[str, dict[str, str]] = {}

    def tab(self, browser: str, params: dict[str, str] | None = None, *, prove: bool = True):
        """A new tab of ``browser`` (its first run done).  A browser without a seat is first given the
        proof-of-browser challenge: with ``prove`` it solves it as the page's script does (here in
        Python), keeps the answer in its jar and reloads (a new tab), as a real browser does."""
        from streamlit.testing.v1 import AppTest

        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
        at.session_state[_BROWSER] = browser
        jar = self.jars.setdefault(browser, {})
        for k, v in (params or {}).items():
            at.query_params[k] = v
        at.run()
        no_exception(at)
        state = at.session_state
        challenge = state["_identity_challenge"] if "_identity_challenge" in state else None  # noqa: SIM401
        if prove and challenge and "_identity_seat" not in at.session_state:
            jar[PROOF_COOKIE] = solve(challenge)
            return self.tab(browser, params, prove=False)
        return at

    @property
    def registry(self) -> SeatRegistry:
        return SeatRegistry(self.root)


@pytest.fixture
def klass(app_env, monkeypatch):
    import streamlit as st

    from ui import identity

    monkeypatch.setenv("RAG_METRICS_CLASS_MODE", "1")
    monkeypatch.setenv("RAG_METRICS_TEACHER_KEY", KEY)
    monkeypatch.delenv("RAG_METRICS_CONFIG", raising=False)
    c = Class(app_env)

    def jar() -> dict[str, str]:
        return c.jars.setdefault(str(st.session_state.get(_BROWSER, "?")), {})

    monkeypatch.setattr(identity, "read_cookies", lambda: dict(jar()))
    def write(name: str, value: str, max_age: int = 1) -> None:
        if max_age > 0:
            jar()[name] = value
        else:
            jar().pop(name, None)

    monkeypatch.setattr(identity, "write_cookie", write)
    return c


def seat_of(at) -> str:
    return at.session_state["_identity_seat"]


def caller_of(at):
    return at.session_state["_identity_caller"]


def role_of(at) -> str | None:
    """The role of the tab's caller, None when the tab has no seat (the no-seat page)."""
    return at.session_state["_identity_caller"].role if "_identity_caller" in at.session_state else None


def edit_first(at, text: str):
    """Edit the first question's expected answer on the golden set page (autosaved)."""
    at.switch_page(GOLDEN_PAGE).run()
    no_exception(at)
    return edit_table(at, {"edited_rows": {0: {"expected_answer": text}}})


def sign_in(at, key: str):
    at.text_input(key="identity_teacher_key").input(key).run()
    at.button(key="identity_sign_in").click().run()
    no_exception(at)
    return at


def shown_text(at) -> str:
    parts = []
    for kind in ("markdown", "caption", "code", "text", "error", "warning", "success", "info"):
        parts += [str(e.value) for e in getattr(at, kind)]
    return "\n".join(parts)


# ---- seats -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("tabs", [1, 3])
def test_each_browser_gets_a_seat_that_its_tabs_share(klass, tabs):
    first = klass.tab("a")
    seat = seat_of(first)
    secret = klass.jars["a"][COOKIE_NAME]
    assert klass.registry.find(secret).id == seat
    assert caller_of(first).space == seat_space(seat) and caller_of(first).role == "student"
    for _ in range(tabs):
        again = klass.tab("a")  # a reload or a new tab: the cookie names the seat
        assert seat_of(again) == seat
        assert klass.jars["a"][COOKIE_NAME] == secret
    other = klass.tab("b")
    assert seat_of(other) != seat and len(klass.registry) == 2
    for at in (first, other):  # the secret is never in the URL nor shown
        assert all(secret not in str(v) for v in dict(at.query_params).values())
        assert secret not in shown_text(at)
    assert not space_dir(seat_space(seat), klass.root).exists()  # a new seat costs nothing on disk


@pytest.mark.parametrize("ws", ["shared", "team a", "other", "private-deadbeef"])
def test_a_link_never_chooses_the_space(klass, ws):
    other = klass.tab("other")
    target = seat_space(seat_of(other)) if ws == "other" else ws
    at = klass.tab("a", {"ws": target})
    mine = seat_space(seat_of(at))
    assert caller_of(at).space == mine != target
    assert "ws" not in dict(at.query_params)
    assert any("Ignored the workspace in the link" in i.value for i in at.info)
    edit_first(at, "mine")
    assert Workspace(SAMPLE, klass.root, space=mine).load()[0].queries[0].expected_answer == "mine"
    assert not Workspace(SAMPLE, klass.root).path.exists()  # the shared set is untouched
    assert Workspace(SAMPLE, klass.root, space=target).load() is None
    assert "Workspace" not in [s.label for s in at.selectbox]  # no free workspace picker


@pytest.mark.parametrize("n", [2, 4])
def test_students_edit_privately(klass, n):
    tabs = [klass.tab(f"s{i}") for i in range(n)]
    for i, at in enumerate(tabs):
        edit_first(at, f"from student {i}")
    for i, at in enumerate(tabs):
        space = seat_space(seat_of(at))
        assert Workspace(SAMPLE, klass.root, space=space).load()[0].queries[0].expected_answer == f"from student {i}"
        assert app_golden(at).queries[0].expected_answer == f"from student {i}"
        again = klass.tab(f"s{i}")  # a new tab of the same browser sees its own edit, no other
        assert app_golden(again).queries[0].expected_answer == f"from student {i}"
    assert not Workspace(SAMPLE, klass.root).path.exists()
    assert len({seat_of(at) for at in tabs}) == n


@pytest.mark.parametrize("student_first", [False, True])
def test_students_start_from_the_teachers_set_and_never_change_it(klass, student_first):
    if student_first:
        early = klass.tab("s")
    teacher = sign_in(klass.tab("t"), KEY)
    assert caller_of(teacher).role == "teacher"
    edit_first(teacher, "the teacher's answer")
    shared = Workspace(SAMPLE, klass.root)
    before = shared.path.read_bytes()
    at = klass.tab("s")  # a student's session opened after the teacher's change
    if student_first:
        assert seat_of(at) == seat_of(early)
    assert app_golden(at).queries[0].expected_answer == "the teacher's answer"  # read through
    assert not space_dir(seat_space(seat_of(at)), klass.root).exists()  # nothing copied
    edit_first(at, "the student's answer")
    assert shared.path.read_bytes() == before
    assert Workspace(SAMPLE, klass.root, space=seat_space(seat_of(at))).load()[0].queries[0].expected_answer \
        == "the student's answer"
    assert app_golden(klass.tab("t2")).queries[0].expected_answer == "the teacher's answer"  # another student


# ---- the teacher ------------------------------------------------------------------------------------
@pytest.mark.parametrize("wrong", ["", "wrong", KEY + "x", KEY[:-1], KEY.upper(), "' or 1=1 --"])
def test_a_wrong_teacher_key_changes_nothing(klass, wrong):
    at = sign_in(klass.tab("a"), wrong)
    assert caller_of(at).role == "student"
    assert any("not the teacher key" in e.value for e in at.error), shown_text(at)
    edit_first(at, "still a student")
    assert not Workspace(SAMPLE, klass.root).path.exists()


def test_the_right_key_signs_the_teacher_in_and_out(klass):
    at = klass.tab("a")
    seat = seat_of(at)
    sign_in(at, KEY)
    assert caller_of(at).role == "teacher" and caller_of(at).space == "shared"
    assert any("Signed in as the teacher" in s.value for s in at.success)
    edit_first(at, "for everyone")
    assert Workspace(SAMPLE, klass.root).load()[0].queries[0].expected_answer == "for everyone"
    at.button(key="identity_sign_out").click().run()
    no_exception(at)
    # the empty seat this browser got on its first visit was given back at sign-in (issue 27: the
    # teacher's browser is never a seat), and signing out makes none (issue 50): a reload does
    assert role_of(at) is None and klass.registry.get(seat) is None and len(klass.registry) == 0
    assert "signed out as the teacher" in shown_text(at)
    again = klass.tab("a")
    assert role_of(again) == "student" and seat_of(again) != seat
    assert app_golden(again).queries[0].expected_answer == "for everyone"  # read through, read-only


def test_a_sign_in_lasts_for_the_browsers_tabs_until_sign_out(klass, monkeypatch):
    sign_in(klass.tab("t"), KEY)
    assert TEACHER_COOKIE in klass.jars["t"] and KEY not in klass.jars["t"][TEACHER_COOKIE]
    tab = klass.tab("t")  # a reload or another tab of the teacher's browser
    assert caller_of(tab).role == "teacher"
    assert caller_of(klass.tab("s")).role == "student"  # another browser is not
    real = klass.jars["t"][TEACHER_COOKIE]
    klass.jars["s"][TEACHER_COOKIE] = real[:-1] + ("1" if real.endswith("0") else "0")  # a forged token
    assert caller_of(klass.tab("s")).role == "student"
    tab.button(key="identity_sign_out").click().run()
    no_exception(tab)
    assert role_of(tab) is None and TEACHER_COOKIE not in klass.jars["t"]  # signed out: no seat until a reload
    assert caller_of(klass.tab("t")).role == "student"
    sign_in(klass.tab("t"), KEY)
    monkeypatch.setenv("RAG_METRICS_TEACHER_KEY", "a new key for the class")  # a new key ends every sign-in
    assert caller_of(klass.tab("t")).role == "student"


def test_wrong_keys_never_lock_the_right_one_out(klass):
    at = klass.tab("a")
    for _ in range(6):  # issue 50: five wrong keys locked the session out, the right key too
        sign_in(at, "guess")
        assert caller_of(at).role == "student" and any("not the teacher key" in e.value for e in at.error)
    sign_in(at, KEY)
    assert caller_of(at).role == "teacher"


def test_the_class_page_is_the_teachers_only(klass):
    students = [klass.tab(f"s{i}") for i in range(3)]
    klass.registry.rename(seat_of(students[0]), "Ada")
    edit_first(students[1], "work")
    for at in students[:1]:
        at.switch_page(ROSTER_PAGE).run()  # reached by its URL
        no_exception(at)
        assert any("Only the teacher" in e.value for e in at.error)
        assert not at.dataframe
    teacher = sign_in(klass.tab("t"), KEY)
    teacher.switch_page(ROSTER_PAGE).run()
    no_exception(teacher)
    df = teacher.dataframe[0].value
    assert list(df.columns) == ["name", "created", "last seen", "idle (days)", "saved work", "judge calls",
                                "judge tokens", "embedded texts", "corpora", "corpora MB"]
    assert len(df) == 3 and "Ada" in set(df["name"])  # the students only: the teacher's browser is no seat
    assert dict(zip(df["name"], df["saved work"]))[klass.registry.get(seat_of(students[1])).name]
    gone = seat_of(students[1])
    teacher.multiselect(key="class_remove_pick").set_value([gone]).run()
    teacher.button(key="class_remove").click().run()
    no_exception(teacher)
    assert klass.registry.get(gone) is None and not space_dir(seat_space(gone), klass.root).exists()
    assert len(teacher.dataframe[0].value) == 2
    teacher.number_input(key="class_idle_days").set_value(0.0).run()
    teacher.button(key="class_remove_idle").click().run()
    no_exception(teacher)
    assert len(klass.registry) == 0
    back = klass.tab("s1")  # the removed student gets a new seat on the next visit
    assert seat_of(back) != gone and len(klass.registry) == 1


# ---- rejoin and the cap ---------------------------------------------------------------------------------
def _code(at) -> str:
    at.button(key="identity_new_code").click().run()
    no_exception(at)
    return next(c.value for c in at.code).replace(" ", "")


def test_a_rejoin_code_brings_the_seat_to_another_device(klass):
    laptop = klass.tab("laptop")
    edit_first(laptop, "from the laptop")
    code = _code(laptop)
    assert code not in klass.registry.path.read_text()
    phone = klass.tab("phone")
    spare = seat_of(phone)
    for wrong in ("", "AAAA", code[:-1] + ("A" if code[-1] != "A" else "B")):
        phone.text_input(key="identity_rejoin_code").input(wrong).run()
        phone.button(key="identity_rejoin").click().run()
        assert seat_of(phone) == spare and any("not valid" in e.value for e in phone.error)
    phone.text_input(key="identity_rejoin_code").input(code.lower()).run()
    phone.button(key="identity_rejoin").click().run()
    no_exception(phone)
    assert seat_of(phone) == seat_of(laptop)
    assert klass.jars["phone"][COOKIE_NAME] != klass.jars["laptop"][COOKIE_NAME]
    assert klass.registry.get(spare) is None  # the empty seat the phone got first is given back
    assert app_golden(klass.tab("phone")).queries[0].expected_answer == "from the laptop"  # and it stays
    assert seat_of(klass.tab("laptop")) == seat_of(laptop)


def test_wrong_codes_never_lock_the_right_one_out(klass):
    laptop = klass.tab("laptop")
    code = _code(laptop)
    phone = klass.tab("phone")
    for _ in range(6):
        phone.text_input(key="identity_rejoin_code").input("A" * 20).run()
        phone.button(key="identity_rejoin").click().run()
        assert any("not valid" in e.value for e in phone.error)
    phone.text_input(key="identity_rejoin_code").input(code).run()
    phone.button(key="identity_rejoin").click().run()
    assert seat_of(phone) == seat_of(laptop)


@pytest.mark.parametrize("cap", [1, 2])
def test_over_the_cap_a_clear_message_and_the_rejoin_code_still_works(klass, tmp_path, monkeypatch, cap):
    cfg = tmp_path / "lab.toml"
    cfg.write_text(f"[lab]\nmax_private_spaces = {cap}\n")
    monkeypatch.setenv("RAG_METRICS_CONFIG", str(cfg))
    seated = [klass.tab(f"s{i}") for i in range(cap)]
    code = _code(seated[0])
    late = klass.tab("late")
    assert any("the class is full" in e.value and f"all {cap} seats" in e.value for e in late.error)
    assert "_identity_seat" not in late.session_state and len(klass.registry) == cap
    assert not late.selectbox  # nothing of the lab without a seat
    late.text_input(key="identity_rejoin_code").input(code).run()
    late.button(key="identity_rejoin").click().run()
    no_exception(late)
    assert seat_of(late) == seat_of(seated[0]) and not late.error
    teacher = klass.tab("teacher")  # the teacher signs in even in a full class
    sign_in(teacher, KEY)
    assert caller_of(teacher).role == "teacher" and teacher.selectbox


# ---- what a student keeps is theirs ------------------------------------------------------------------------
RUN = "".join(f"{q.id} Q0 {i} {r + 1} {10 - r} mine\n" for q in sample_golden()
              for r, i in enumerate(list(q.relevant)[:3]))


def test_a_students_upload_is_neither_listed_nor_removable_elsewhere(klass):
    one, two = klass.tab("one"), klass.tab("two")
    one.switch_page(SYSTEMS_PAGE).run()
    one.text_input(key="systems_upload_name").input("my run")
    one.file_uploader(key="systems_upload").set_value(("mine.trec", RUN.encode(), "text/plain"))
    next(b for b in one.button if b.label == "Add system").click().run()
    no_exception(one)
    mine = SystemStore.for_corpus(SAMPLE, klass.root, space=seat_space(seat_of(one)))
    assert mine.names() == ["my run"]
    assert SystemStore.for_corpus(SAMPLE, klass.root).names() == []  # not in the shared space
    assert "my run" in one.selectbox(key="system").options[-1]
    assert one.button(key="systems_remove_my run")
    # the other student: not listed, not evaluated, not removable, not selectable by a link
    two.switch_page(SYSTEMS_PAGE).run()
    no_exception(two)
    assert not any("my run" in o for o in two.selectbox(key="system").options)
    assert not any(b.key == "systems_remove_my run" for b in two.button)
    df = next(d.value for d in two.dataframe if "system" in d.value.columns)  # judged@K only when meaningful (issue 19)
    assert list(df["system"]) == ["bundled dense"]
    linked = klass.tab("two", {"system": "my run"})
    assert any("Ignored system=" in w.value for w in linked.warning)
    assert linked.selectbox(key="system").value == "dense"
    assert mine.names() == ["my run"]


def test_the_teachers_systems_are_everyones_read_only(klass):
    SystemStore.for_corpus(SAMPLE, klass.root).add_upload("course run", "c.trec", RUN.encode())
    at = klass.tab("s", {"system": "course run"})
    assert at.selectbox(key="system").value == "course run"
    at.switch_page(SYSTEMS_PAGE).run()
    no_exception(at)
    assert not any(b.key == "systems_remove_course run" for b in at.button)
    assert any("read-only" in c.value for c in at.caption)
    assert SystemStore.for_corpus(SAMPLE, klass.root).names() == ["course run"]


def test_a_students_corpus_is_theirs(klass):
    from app_helpers import load_corpus_files
    from rag_metrics.workspace.corpora import load_corpus

    one, two = klass.tab("one", {"system": "bm25"}), klass.tab("two", {"system": "bm25"})  # no model to load
    load_corpus_files(one, [("notes.md", b"# Notes\n\nPrivate notes of one student.\n", "text/markdown")],
                      name="notes")
    assert any("notes" in o for o in one.selectbox(key="corpus").options)
    from rag_metrics.workspace.corpora import stored_corpora

    assert [c.name for c in stored_corpora(klass.root, space=seat_space(seat_of(one)))] == ["notes"]
    assert stored_corpora(klass.root) == []
    two.run()
    assert not any("notes" in o for o in two.selectbox(key="corpus").options)
    linked = klass.tab("two", {"corpus": "notes", "system": "bm25"})
    assert any("Ignored corpus=" in w.value for w in linked.warning)
    assert linked.selectbox(key="corpus").value == SAMPLE
    assert any("notes" in o for o in klass.tab("one", {"system": "bm25"}).selectbox(key="corpus").options)  # kept
    # a student's corpus named like the teacher's is kept under another name; the teacher's is unchanged
    teacher = sign_in(klass.tab("t", {"system": "bm25"}), KEY)
    load_corpus_files(teacher, [("c.md", b"# Course\n\nThe course text.\n", "text/markdown")], name="course")
    load_corpus_files(one, [("c.md", b"# Mine\n\nNot the course.\n", "text/markdown")], name="course")
    assert [c.name for c in stored_corpora(klass.root)] == ["course"]
    assert {c.name for c in stored_corpora(klass.root, space=seat_space(seat_of(one)))} == {"notes", "course (mine)"}
    assert "The course text" in load_corpus("course", klass.root)[0].documents[0].text


class _Recorder(BaseHTTPRequestHandler):
    questions: list[str] = []

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).questions.append(str(body.get("query")))
        data = b"[]"
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_a_students_live_system_never_hears_another_students_questions(klass):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    serve_in_thread(srv)
    _Recorder.questions = []
    try:
        one = klass.tab("one")
        SystemStore.for_corpus(SAMPLE, klass.root, space=seat_space(seat_of(one))).add_connection(
            "my endpoint", "http", {"url": f"http://127.0.0.1:{srv.server_address[1]}/search", "headers": []})
        assert "Yours: my endpoint" in klass.tab("one").selectbox(key="system").options  # its owner sees it
        two = klass.tab("two")
        assert not any("my endpoint" in o for o in two.selectbox(key="system").options)
        edit_first(two, "two's private answer")
        for page in (SYSTEMS_PAGE, "pages/compare.py", "pages/dashboard.py"):
            two.switch_page(page).run()
            no_exception(two)
        klass.tab("two", {"system": "my endpoint"})
        assert _Recorder.questions == []  # nothing of student two's session reached student one's endpoint
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_students_rag_log_answers_are_theirs_on_the_answers_page(klass):
    """One upload, everything (issue 20) inside a student's space: the Answers page of that student
    judges the stored export; another student's page neither lists it nor reads it."""
    from tests.test_app_traces import _chunks, _export

    one, two = klass.tab("one"), klass.tab("two")
    data = _export(_chunks())
    mine = SystemStore.for_corpus(SAMPLE, klass.root, space=seat_space(seat_of(one)))
    spec, rep = mine.add_upload("my traces", "phoenix_spans.jsonl", data.encode(), _chunks())
    assert spec is not None, rep.lines()
    one = klass.tab("one", {"system": "my traces"})
    one.switch_page("pages/answers.py").run()
    no_exception(one)
    assert one.radio(key="answers_source").value == "A system added on Systems"
    assert one.selectbox(key="answers_system").value == "my traces"
    two.switch_page("pages/answers.py").run()
    no_exception(two)
    assert "A system added on Systems" not in two.radio(key="answers_source").options
