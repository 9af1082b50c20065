"""Seats of a class (rag_metrics.server.seats), who sees what (rag_metrics.server.access,
rag_metrics.systems.ownership) and
copy-on-write private spaces (rag_metrics.workspace.store.read_through): the library, without Streamlit."""
from __future__ import annotations

import json
import threading

import pytest

from rag_metrics.config import class_start_problem, parse_server_config
from rag_metrics.errors import InputError
from rag_metrics.server.access import OPERATOR, STUDENT, TEACHER, Caller
from rag_metrics.server.seats import (
    CODE_CHARS,
    MAX_DEVICES,
    ClassFull,
    SeatRegistry,
    check_teacher_key,
    normalize_code,
    seat_caller,
    seat_space,
)
from rag_metrics.systems.ownership import corpus_space, own_name, system_store, visible_corpora, visible_systems
from rag_metrics.systems.store import SystemStore
from rag_metrics.types import Corpus, Document, GoldenQuery, GoldenSet
from rag_metrics.workspace.corpora import load_corpus, save_corpus, stored_corpora
from rag_metrics.workspace.store import DEFAULT_SPACE, Workspace, choose_space, read_through, space_dir

pytestmark = pytest.mark.usefixtures("class_state_backend")  # files and PostgreSQL (issue 52)

A = GoldenSet((GoldenQuery("q1", "a?", "", {"d#0": 1}),))
B = GoldenSet((GoldenQuery("q1", "b?", "", {"d#0": 2}),))
RUN = b"q1 Q0 d#0 1 1.0 x\n"


# ---- seats -----------------------------------------------------------------------------------------
def test_a_seat_is_found_by_its_secret_and_only_a_hash_is_stored(tmp_path):
    reg = SeatRegistry(tmp_path)
    seat, secret = reg.create(cap=5)
    assert len(secret) >= 43  # 32 random bytes, URL-safe base64: 256 bits
    assert reg.find(secret) == seat
    text = reg.state.read("seats.json")  # what is stored (the file, or the PostgreSQL row)
    assert secret not in text and seat.id in text
    assert secret not in seat.space and seat.space == seat_space(seat.id)
    assert reg.path == tmp_path / ".class" / "seats.json"


@pytest.mark.parametrize("bad", [None, "", "x", "a" * 43, "' OR 1=1 --", "é" * 43, "a" * 5000, 42])
def test_unknown_or_malformed_secrets_find_no_seat(tmp_path, bad):
    reg = SeatRegistry(tmp_path)
    reg.create(cap=5)
    assert reg.find(bad) is None


def test_seats_are_distinct_and_numbered(tmp_path):
    reg = SeatRegistry(tmp_path)
    made = [reg.create(cap=10) for _ in range(4)]
    assert len({s.id for s, _ in made}) == 4 and len({x for _, x in made}) == 4
    assert [s.name for s, _ in made] == ["Seat 1", "Seat 2", "Seat 3", "Seat 4"]
    assert all(reg.find(x) == s for s, x in made)


@pytest.mark.parametrize("cap", [1, 2, 5])
def test_the_cap_is_kept(tmp_path, cap):
    reg = SeatRegistry(tmp_path)
    for _ in range(cap):
        reg.create(cap=cap)
    with pytest.raises(ClassFull, match=f"all {cap} seats are taken"):
        reg.create(cap=cap)
    assert len(reg) == cap


def test_at_the_cap_unused_seats_are_reclaimed(tmp_path):
    reg = SeatRegistry(tmp_path)
    (named, _), (coded, _), (worked, _), (unused, _) = (reg.create(cap=4, now=0.0) for _ in range(4))
    reg.rename(named.id, "Ada")
    reg.new_rejoin_code(coded.id)
    Workspace("c", tmp_path, space=worked.space).save(A, None)
    with pytest.raises(ClassFull):
        reg.create(cap=4, now=3000.0)  # not idle long enough
    seat, _ = reg.create(cap=4, now=4000.0)
    assert {s.id for s in reg.seats()} == {named.id, coded.id, worked.id, seat.id}  # only the unused one went
    with pytest.raises(ClassFull):
        reg.create(cap=4, now=5000.0)  # the new one is recent; the others were used


def test_concurrent_seat_creation_loses_none(tmp_path):
    reg = SeatRegistry(tmp_path)
    out: list = []
    errors: list = []

    def one() -> None:
        try:
            out.append(SeatRegistry(tmp_path).create(cap=100))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=one) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(out) == 12
    assert {s.id for s in reg.seats()} == {s.id for s, _ in out}
    assert all(reg.find(x) is not None for _, x in out)


@pytest.mark.parametrize("name,shown", [("Ada", "Ada"), ("  Ada   Lovelace ", "Ada Lovelace"), ("名前", "名前")])
def test_rename(tmp_path, name, shown):
    reg = SeatRegistry(tmp_path)
    seat, _ = reg.create(cap=5)
    assert reg.rename(seat.id, name).name == shown
    assert reg.get(seat.id).name == shown


@pytest.mark.parametrize("bad", ["", "   ", "x" * 41, "a\x00b", "bell\x07"])
def test_rename_refuses_bad_names(tmp_path, bad):
    reg = SeatRegistry(tmp_path)
    seat, _ = reg.create(cap=5)
    with pytest.raises(InputError):
        reg.rename(seat.id, bad)
    assert reg.get(seat.id).name == "Seat 1"


def test_rejoin_code_gives_another_device_the_same_seat(tmp_path):
    reg = SeatRegistry(tmp_path)
    seat, secret = reg.create(cap=5)
    code = reg.new_rejoin_code(seat.id)
    assert len(code) == CODE_CHARS and code not in reg.state.read("seats.json")
    for typed in (code, code.lower(), " ".join(code[i:i + 4] for i in range(0, CODE_CHARS, 4)),
                  "-".join(code[i:i + 5] for i in range(0, CODE_CHARS, 5))):
        got = reg.rejoin(typed)
        assert got is not None and got[0].id == seat.id
        assert got[1] != secret and reg.find(got[1]).id == seat.id
    assert reg.find(secret).id == seat.id  # the first device keeps its seat


def test_a_new_code_replaces_the_old_and_devices_are_capped(tmp_path):
    reg = SeatRegistry(tmp_path)
    seat, first = reg.create(cap=5)
    old = reg.new_rejoin_code(seat.id)
    new = reg.new_rejoin_code(seat.id)
    assert reg.rejoin(old) is None and reg.rejoin(new) is not None
    secrets_ = [reg.rejoin(new)[1] for _ in range(MAX_DEVICES)]
    assert reg.find(first) is None  # the oldest device was forgotten
    assert all(reg.find(x) is not None for x in secrets_)


@pytest.mark.parametrize("bad", ["", "A" * CODE_CHARS, "A" * (CODE_CHARS - 1), "0" * CODE_CHARS, "not a code",
                                 "A" * 1000])
def test_wrong_rejoin_codes_join_nothing(tmp_path, bad):
    reg = SeatRegistry(tmp_path)
    seat, _ = reg.create(cap=5)
    reg.new_rejoin_code(seat.id)
    assert reg.rejoin(bad) is None


def test_a_seat_without_a_code_cannot_be_rejoined(tmp_path):
    reg = SeatRegistry(tmp_path)
    reg.create(cap=5)
    assert reg.rejoin(normalize_code("ABCD" * 5)) is None


def test_remove_and_remove_idle_take_the_space_with_them(tmp_path):
    reg = SeatRegistry(tmp_path)
    (a, _), (b, _), (c, _) = (reg.create(cap=5, now=t) for t in (0.0, 0.0, 0.0))
    for s in (a, b, c):
        Workspace("c", tmp_path, space=s.space).save(A, None)
    reg.touch(c.id, now=20 * 86400.0)
    assert {r.seat: r.has_work for r in reg.roster(now=20 * 86400.0)} == {a.id: True, b.id: True, c.id: True}
    assert reg.remove(a.id) and not reg.remove(a.id)
    assert not space_dir(a.space, tmp_path).exists()
    assert reg.remove_idle(14, now=20 * 86400.0) == [b.id]
    assert not space_dir(b.space, tmp_path).exists() and space_dir(c.space, tmp_path).exists()
    assert [s.id for s in reg.seats()] == [c.id]
    assert Workspace("c", tmp_path).load() is None  # the shared space is never touched


def test_roster_rows(tmp_path):
    reg = SeatRegistry(tmp_path)
    a, _ = reg.create(cap=5, now=100.0)
    reg.rename(a.id, "Ada")
    (row,) = reg.roster(now=100.0 + 2 * 86400)
    assert (row.name, row.created, row.last_seen, row.idle_days, row.has_work) == ("Ada", 100.0, 100.0, 2.0, False)
    assert row.as_dict()["seat"] == a.id


@pytest.mark.parametrize("class_state_backend", ["files"], indirect=True)  # a file's own damage
def test_a_damaged_registry_is_kept_aside(tmp_path):
    reg = SeatRegistry(tmp_path)
    reg.path.parent.mkdir(parents=True)
    reg.path.write_text("{not json")
    assert reg.seats() == []
    seat, secret = reg.create(cap=5)
    assert reg.find(secret) == seat
    assert list(reg.path.parent.glob("seats.damaged-*.json"))


def test_touch_is_rate_limited(tmp_path):
    reg = SeatRegistry(tmp_path)
    seat, _ = reg.create(cap=5, now=0.0)
    reg.touch(seat.id, now=10.0)
    assert reg.get(seat.id).last_seen == 0.0
    reg.touch(seat.id, now=1000.0)
    assert reg.get(seat.id).last_seen == 1000.0


@pytest.mark.parametrize("given,ok", [("the right key 123", True), (" the right key 123 ", True),
                                      ("the right key 12", False), ("THE RIGHT KEY 123", False), ("", False),
                                      (None, False), ("the right key 1234", False)])
def test_teacher_key(given, ok):
    assert check_teacher_key(given, "the right key 123") is ok
    assert check_teacher_key(given, None) is False


def test_teacher_tokens():
    from rag_metrics.server.seats import check_teacher_token, teacher_token

    key = "the right key 123"
    tok = teacher_token(key, now=1000.0, ttl=60)
    assert check_teacher_token(tok, key, now=1059.0) and key not in tok
    assert not check_teacher_token(tok, key, now=1060.0)  # expired
    assert not check_teacher_token(tok, "another key 456", now=1000.0)  # the key changed
    assert not check_teacher_token(tok, None, now=1000.0)
    expiry, nonce, mac = tok.split(".")
    for forged in (f"{int(expiry) + 9999}.{nonce}.{mac}", f"{expiry}.x{nonce}.{mac}", f"{expiry}.{nonce}.{'0' * 64}",
                   f"{expiry}.{nonce}", "", "a.b.c", f"-1.{nonce}.{mac}", tok + ".x", "9" * 300, None):
        assert not check_teacher_token(forged, key, now=1000.0), forged
    assert teacher_token(key) != teacher_token(key)


@pytest.mark.parametrize("env,problem", [({}, "no teacher key"), ({"RAG_METRICS_TEACHER_KEY": "short"}, "12"),
                                         ({"RAG_METRICS_TEACHER_KEY": "a long enough key"}, None)])
def test_class_start_problem(tmp_path, monkeypatch, env, problem):
    monkeypatch.chdir(tmp_path)
    out = class_start_problem({"RAG_METRICS_CONFIG": "", **env})
    assert (out is None) if problem is None else (problem in out)


def test_class_start_problem_reads_the_config_file(tmp_path):
    cfg = tmp_path / "lab.toml"
    cfg.write_text('[lab]\nteacher_key = "from the file 123"\nmax_private_spaces = 3\n')
    assert class_start_problem({"RAG_METRICS_CONFIG": str(cfg)}) is None
    assert parse_server_config({"lab": {"max_private_spaces": 3}}, env={}).max_private_spaces == 3


# ---- who sees what ---------------------------------------------------------------------------------
def test_reads_and_writes_by_role():
    s = seat_caller(_seat("0123456789abcdef"))
    assert s.role == STUDENT and s.reads == (s.space, DEFAULT_SPACE) and s.writes_to == s.space
    assert s.may_read(DEFAULT_SPACE) and not s.may_write(DEFAULT_SPACE) and s.may_write(s.space)
    other = seat_space("fedcba9876543210")
    assert not s.may_read(other) and not s.may_write(other)
    for role in (TEACHER, OPERATOR):
        c = Caller(role)
        assert c.reads == (DEFAULT_SPACE,) and c.may_write(DEFAULT_SPACE) and not c.may_read(s.space)


def _seat(seat_id: str):
    from rag_metrics.server.seats import Seat

    return Seat(seat_id, "x", 0.0, 0.0)


def _corpus(name: str) -> Corpus:
    return Corpus((Document("d", "text of d"),), name=name)


@pytest.mark.parametrize("n", [2, 4])
def test_students_see_the_shared_corpora_and_their_own_only(tmp_path, n):
    students = [seat_caller(_seat(f"{i:016x}")) for i in range(n)]
    save_corpus("course", _corpus("course"), root=tmp_path)  # the teacher's
    for i, s in enumerate(students):
        save_corpus(f"mine {i}", _corpus(f"mine {i}"), root=tmp_path, space=s.writes_to)
    for i, s in enumerate(students):
        assert set(visible_corpora(s, tmp_path)) == {"course", f"mine {i}"}
        assert corpus_space(s, "course", tmp_path) == DEFAULT_SPACE
        assert corpus_space(s, f"mine {i}", tmp_path) == s.space
        for j in range(n):
            if j != i:
                assert corpus_space(s, f"mine {j}", tmp_path) is None
        load_corpus(f"mine {i}", tmp_path, space=s.space)
    assert [c.name for c in stored_corpora(tmp_path)] == ["course"]  # nothing of theirs in the shared space
    assert set(visible_corpora(Caller(TEACHER), tmp_path)) == {"course"}


@pytest.mark.parametrize("n", [2, 4])
def test_students_see_the_shared_systems_and_their_own_only(tmp_path, n):
    students = [seat_caller(_seat(f"{i:016x}")) for i in range(n)]
    SystemStore.for_corpus("c", tmp_path).add_upload("teacher run", "t.trec", RUN)
    for i, s in enumerate(students):
        SystemStore.for_corpus("c", tmp_path, space=s.writes_to).add_upload(f"run {i}", "r.trec", RUN)
    for i, s in enumerate(students):
        assert visible_systems(s, "c", tmp_path) == [(f"run {i}", s.space), ("teacher run", DEFAULT_SPACE)]
        assert system_store(s, "c", "teacher run", tmp_path) is not None
        for j in range(n):
            assert (system_store(s, "c", f"run {j}", tmp_path) is not None) is (i == j)
    assert SystemStore.for_corpus("c", tmp_path).names() == ["teacher run"]


@pytest.mark.parametrize("name,taken,want", [("x", set(), "x"), ("x", {"x"}, "x (mine)"),
                                              ("x", {"x", "x (mine)"}, "x (mine 2)"), ("y", {"x"}, "y")])
def test_own_name(name, taken, want):
    assert own_name(seat_caller(_seat("0" * 16)), name, taken) == want
    assert own_name(Caller(TEACHER), name, taken) == name


# ---- copy-on-write --------------------------------------------------------------------------------
def test_a_private_space_reads_the_shared_one_until_its_first_change(tmp_path):
    space = seat_space("0" * 16)
    shared = Workspace("c", tmp_path)
    shared.save(A, None)
    shared.save_settings(chunk_size=300, chunk_overlap=30)
    src = read_through("c", space, tmp_path)
    assert src.space == DEFAULT_SPACE and src.load()[0].queries == A.queries
    assert read_through("c", space, tmp_path, settings=True).load_settings()["chunk_size"] == 300
    assert not space_dir(space, tmp_path).exists()  # a new seat costs nothing on disk
    own = Workspace("c", tmp_path, space=space)
    own.save_settings(chunk_size=200, chunk_overlap=0)  # a private chunking: the golden set still reads through
    assert read_through("c", space, tmp_path, settings=True).load_settings()["chunk_size"] == 200
    assert read_through("c", space, tmp_path).space == DEFAULT_SPACE
    own.save(B, None)
    assert read_through("c", space, tmp_path).space == space
    assert shared.load()[0].queries == A.queries and own.load()[0].queries == B.queries
    assert read_through("c", DEFAULT_SPACE, tmp_path).space == DEFAULT_SPACE


@pytest.mark.parametrize("requested", [None, "", "shared", "team a", seat_space("1" * 16), "private-abcd"])
def test_in_class_mode_a_link_never_chooses_the_space(tmp_path, requested):
    space, warn = choose_space(requested, "tok", class_mode_on=True, root=tmp_path)
    assert space == "private-tok"
    assert (warn is not None) is bool(requested)
    assert not space_dir(space, tmp_path).exists()  # made lazily, on the first change


def test_registry_file_is_plain_json(tmp_path):
    reg = SeatRegistry(tmp_path)
    seat, _ = reg.create(cap=5)
    data = json.loads(reg.state.read("seats.json"))
    assert data["version"] == 1 and data["seats"][0]["id"] == seat.id and data["seats"][0]["code"] is None
