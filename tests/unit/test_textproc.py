"""Text for the keyword index, checked on a real SQLite FTS5 table."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from mnemolayer.text import terms as textproc
from mnemolayer.text.terms import (
    contains_cjk,
    fts_match_expression,
    index_terms,
    is_cjk,
    query_terms,
)

DOCS = {
    1: "我每天早上喝榛子拿铁",
    2: "Alice moved to Porto in 2021 and loves the ocean.",
    3: "毎朝コーヒーを飲みます",
    4: "나는 커피를 좋아해요",
    5: "My sister's name is Maria; she works as a nurse.",
    6: "周末我们去爬山，天气很好。",
    7: "The foo fighters played on Friday.",
    8: "我的猫叫咪咪，它三岁了。",
}


@pytest.fixture
def fts() -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize = 'unicode61')")
    db.executemany(
        "INSERT INTO docs(rowid, body) VALUES (?, ?)",
        [(rowid, index_terms(text)) for rowid, text in DOCS.items()],
    )
    yield db
    db.close()


def search(db: sqlite3.Connection, query: str) -> list[int]:
    expression = fts_match_expression(query_terms(query))
    if expression is None:
        return []
    rows = db.execute(
        "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs)", (expression,)
    )
    return [rowid for (rowid,) in rows]


# ------------------------------------------------------------------------ helpers


@pytest.mark.parametrize(
    ("ch", "expected"),
    [("拿", True), ("コ", True), ("ー", True), ("の", True), ("커", True), ("々", True),
     ("𠀀", True), ("a", False), ("1", False), ("。", False), ("，", False), ("・", False),
     ("", False), ("拿铁", False)],
)  # fmt: skip
def test_is_cjk(ch: str, expected: bool) -> None:
    assert is_cjk(ch) is expected


def test_contains_cjk() -> None:
    assert contains_cjk("order a 拿铁 please")
    assert contains_cjk("ソウル")
    assert not contains_cjk("Porto, 2021!")
    assert not contains_cjk("")


# ------------------------------------------------------------------ segmentation


def test_index_terms_chinese_has_jieba_words_and_bigrams() -> None:
    tokens = index_terms("我每天早上喝榛子拿铁").split()
    assert {"每天", "早上", "榛子"} <= set(tokens)  # jieba words
    assert "拿铁" in tokens  # a bigram: jieba cuts it as 拿 / 铁 here
    assert tokens.count("榛子") == 1  # a bigram jieba already gave is not repeated


def test_index_terms_latin_is_lowercased_nfc_words() -> None:
    assert index_terms("Cafe\u0301 au LAIT, e-mail: 3.5!") == "café au lait e mail 3 5"


def test_index_terms_keeps_combining_marks_inside_words() -> None:
    assert index_terms("हिन्दी भाषा") == "हिन्दी भाषा"


def test_index_terms_japanese_and_korean_are_bigrams() -> None:
    assert index_terms("コーヒー") == "コー ーヒ ヒー"
    assert index_terms("커피를 좋아해") == "커피 피를 좋아 아해"


def test_index_terms_single_cjk_character_and_empty() -> None:
    assert index_terms("猫") == "猫"
    assert index_terms("") == ""
    assert index_terms("?! …") == ""


def test_query_terms_drop_english_stop_words_in_order() -> None:
    assert query_terms("What is the name of my sister's cat?") == ["name", "sister", "cat"]


def test_query_terms_drop_chinese_function_words() -> None:
    terms = query_terms("我的猫叫什么名字吗？")
    assert "名字" in terms
    assert not {"我", "的", "什么", "吗", "我的"} & set(terms)


def test_query_terms_deduplicate() -> None:
    assert query_terms("coffee Coffee COFFEE tea") == ["coffee", "tea"]


def test_query_terms_keep_stop_words_when_nothing_else_is_left() -> None:
    assert query_terms("who am I") == ["who", "am", "i"]
    assert query_terms("你是谁") == ["你", "是", "谁", "你是", "是谁"]


# -------------------------------------------------------------- match expressions


def test_fts_match_expression_quotes_every_term() -> None:
    assert fts_match_expression(["coffee", 'say "hi"']) == '"coffee" OR "say ""hi"""'


@pytest.mark.parametrize("terms", [[], ["*"], ['"', "-", "()"], [" "]])
def test_fts_match_expression_none_without_words(terms: list[str]) -> None:
    assert fts_match_expression(terms) is None


# ---------------------------------------------------------------- real FTS5 search


def test_chinese_word_found_inside_a_sentence(fts: sqlite3.Connection) -> None:
    assert search(fts, "拿铁") == [1]
    assert search(fts, "榛子拿铁") == [1]
    assert search(fts, "爬山") == [6]


def test_chinese_question_matches_by_content_words(fts: sqlite3.Connection) -> None:
    # 我 and 的 would match most Chinese memories; only 猫 / 名字 should count.
    assert search(fts, "我的猫叫什么名字？")[0] == 8
    assert 1 not in search(fts, "我的猫叫什么名字？")


def test_english_query_matches_by_content_words(fts: sqlite3.Connection) -> None:
    assert search(fts, "Where did Alice move to?") == [2]
    assert search(fts, "What is the name of my sister?") == [5]


def test_japanese_and_korean(fts: sqlite3.Connection) -> None:
    assert search(fts, "コーヒー") == [3]
    assert search(fts, "커피") == [4]


def test_fts5_syntax_in_a_query_is_literal(fts: sqlite3.Connection) -> None:
    assert search(fts, "-foo") == [7]  # a word, not "NOT foo"
    assert search(fts, "foo*") == [7]  # no prefix query: the word foo
    assert search(fts, "fo*") == []


@pytest.mark.parametrize(
    "query",
    ["' OR '1'='1' --", 'x") or true or ("', "NEAR(a b)", '"', "*", "-foo", "col:val",
     "body:alice", "^porto", "a AND b", "NOT x", "(((", '""""', "\x00", "🙂", "OR"],
)  # fmt: skip
def test_injection_like_queries_never_raise_or_match_everything(
    fts: sqlite3.Connection, query: str
) -> None:
    found = search(fts, query)
    assert len(found) < len(DOCS)
    expression = fts_match_expression(query_terms(query))
    if expression is not None:  # also straight from the raw words, stop words kept
        fts.execute("SELECT rowid FROM docs WHERE docs MATCH ?", (expression,)).fetchall()


def test_column_filter_syntax_is_not_honoured(fts: sqlite3.Connection) -> None:
    # "body:alice" must search the words body and alice, not the column body.
    assert query_terms("body:alice") == ["body", "alice"]
    assert search(fts, "body:alice") == [2]


# ----------------------------------------------------------------- cost and loading


def test_twenty_thousand_words_index_quickly() -> None:
    english = " ".join(["Alice", "drank", "coffee", "in", "Porto", "yesterday"] * 3400)
    chinese = "，".join(["我每天早上喝榛子拿铁", "周末我们去爬山"] * 2000)  # ~20k jieba words
    index_terms("预热")  # load jieba outside the timing
    for text in (english, chinese):
        start = time.perf_counter()
        index_terms(text)
        assert time.perf_counter() - start < 5.0


def test_jieba_loads_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real_load = textproc._load_jieba

    def slow_load() -> object:
        calls.append(1)
        time.sleep(0.05)  # widen the race window
        return real_load()

    monkeypatch.setattr(textproc, "_jieba", None)
    monkeypatch.setattr(textproc, "_load_jieba", slow_load)
    results: list[str] = []
    threads = [
        threading.Thread(target=lambda: results.append(index_terms("榛子拿铁"))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert len(set(results)) == 1 and "拿铁" in results[0].split()


def test_jieba_is_quiet_and_caches_in_the_user_cache_dir(tmp_path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "HOME": str(tmp_path)}
    code = "from mnemolayer.text.terms import index_terms; print(index_terms('拿铁'))"
    run = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    assert run.stdout.split() == ["拿", "铁", "拿铁"] or "拿铁" in run.stdout.split()
    assert list(tmp_path.rglob("jieba*.cache")), "jieba's dictionary cache was not written"
