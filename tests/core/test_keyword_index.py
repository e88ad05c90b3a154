"""Keyword index: xnot semantics (substring of lower-cased text, keyword order, text_hash), stats, views."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.base.errors import IndexMissingError, UnknownNameError
from core.cli import main
from core.datasets.db import Database
from core.datasets.importer import import_dataset
from core.tasks import get_task
from core.tasks.keyword_index import (
    build_index,
    index_stats,
    kw_column,
    load_index,
    match_frame,
    matched_reviews,
    text_hash,
    xnot_filename,
)
from tests.helpers.judgments import write_tables

G1A = get_task("G1a", None)


def reference_found(text: str | None, keywords) -> list[str]:
    """The straightforward rule: each keyword, in order, that occurs in text.lower()."""
    return [] if text is None else [kw for kw in keywords if kw in text.lower()]


def frame(texts: list[str | None]) -> pl.DataFrame:
    return pl.DataFrame({"business_id": ["B"] * len(texts), "idx": list(range(len(texts))), "text": texts},
                        schema_overrides={"text": pl.String})


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Best DONUT in town", ["nut"]),  # substring on purpose: "nut" hits "donut" (xnot compatible)
        ("Unsafe for my peanut ALLERGY", ["peanut", "nut", "allergy", "safe", "unsafe"]),  # keyword-list order
        ("risk of cross-contamination", ["cross-contamin", "contamination"]),
        ("Anaphylactic shock, used my EpiPen", ["anaphyl", "epipen"]),
        ("great pasta, friendly staff", []),
        ("", []),
        ("ALMONDS and pistachios, lactose intolerant", ["almond", "pistachio", "intoleran"]),
    ],
)
def test_hand_cases(text, found):
    out = match_frame(frame([text]), [G1A])
    assert out[kw_column("G1a")].to_list() == [found]
    assert found == reference_found(text, G1A.keywords)


def test_text_hash_null_and_unicode():
    texts = [None, "Café — crème brûlée 🥜 peanut", "ÉPIPEN", ""]
    out = match_frame(frame(texts), [G1A])
    assert out["text_hash"].to_list() == [
        None,
        hashlib.sha256(texts[1].encode("utf-8")).hexdigest()[:16],
        hashlib.sha256("ÉPIPEN".encode()).hexdigest()[:16],
        "e3b0c44298fc1c14",  # sha256("") starts e3b0c442 98fc1c14
    ]
    assert out[kw_column("G1a")].to_list() == [[], ["peanut", "nut"], [], []]  # "épipen" is not "epipen"
    assert "text" not in out.columns


def test_more_than_64_keywords_and_several_tasks():
    many = tuple(f"k{i:03d}" for i in range(150))
    big = dataclasses.replace(G1A, task_id="G2a", keywords=many)
    texts = ["k149 k000", "k064 k063 nut", "k100", None, "nothing"]
    out = match_frame(frame(texts), [G1A, big])
    assert out[kw_column("G2a")].to_list() == [reference_found(t, many) for t in texts]
    assert out[kw_column("G2a")].to_list()[:2] == [["k000", "k149"], ["k063", "k064"]]
    assert out[kw_column("G1a")].to_list() == [reference_found(t, G1A.keywords) for t in texts]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(st.sampled_from(
    list("abcdefghilnoprstuwy -ÀÉİßΣ") + ["nut", "Peanut", "SAFE", "allerg", "y ", "ﬃ", "EpIpEn"]),
    max_size=25).map("".join)), max_size=30))
def test_matches_the_reference_loop(texts):
    out = match_frame(frame(texts), [G1A])
    assert out[kw_column("G1a")].to_list() == [reference_found(t, G1A.keywords) for t in texts]
    assert out["text_hash"].to_list() == [text_hash(t) for t in texts]


def test_empty_frame():
    out = match_frame(frame([]), [G1A])
    assert out.height == 0 and out[kw_column("G1a")].dtype == pl.List(pl.String)


@pytest.mark.parametrize(
    ("name", "stem"),
    [("Aladdin Pizzeria & Eatery", "Aladdin_Pizzeria___Eatery"), ("Marmont Steakhouse & Bar", "Marmont_Steakhouse___Bar"),
     ("Hoof + Fin", "Hoof___Fin"), ("Di Bruno Bros.", "Di_Bruno_Bros_"), ("Inchin’s Bamboo Garden", "Inchin_s_Bamboo_Garden"),
     ("  a-b_c  ", "a-b_c"), ("Chu Shang Spicy 厨尚麻辣", "Chu_Shang_Spicy_厨尚麻辣")],
)
def test_xnot_filename(name, stem):
    assert xnot_filename(name) == stem


def _tiny(ws, name="d"):
    write_tables(
        ws, name,
        [{"business_id": "A", "name": "Thai Place", "categories": "Thai"}, {"business_id": "B", "name": "Bakery"},
         {"business_id": "C", "name": "Quiet"}],
        [{"business_id": "A", "review_id": "a0", "idx": 0, "text": "My peanut allergy was handled well"},
         {"business_id": "A", "review_id": "a1", "idx": 1, "text": "Noodles were fine"},
         {"business_id": "A", "review_id": "a2", "idx": 2, "text": None},
         {"business_id": "B", "review_id": "b0", "idx": 0, "text": "Great donuts", "stars": 5.0},
         {"business_id": "C", "review_id": "c0", "idx": 0, "text": "Quiet place"}],
    )


def test_build_index_stats_files_and_view(workspace):
    _tiny(workspace)
    stats = build_index(workspace, "d")
    g = stats["tasks"]["G1a"]
    # 5 reviews; a0 (peanut, nut, allergy) and b0 (nut, nuts in "donuts") match: 2/5 = 40 %, restaurants A and B
    assert (g["reviews"], g["matches"], g["restaurants_with_match"], g["restaurants"]) == (5, 2, 2, 3)
    assert g["match_rate"] == pytest.approx(0.4) and g["match_rate_pct"] == "40.0%"
    assert g["keyword_counts"]["nut"] == 2 and g["keyword_counts"]["nuts"] == 1 and g["keyword_counts"]["safe"] == 0
    assert (stats["total_reviews"], stats["reviews_with_text"], stats["total_restaurants"]) == (5, 4, 3)
    on_disk = json.loads((workspace.index_dir("d") / "stats.json").read_text())
    assert on_disk["tasks"]["G1a"]["matches"] == 2
    assert index_stats(workspace, "d")["current"] is True
    index = load_index(workspace, "d")
    assert index.columns[:5] == ["dataset", "business_id", "review_id", "idx", "text_hash"]
    assert index.height == 5 and index["text_hash"].null_count() == 1
    db = Database(workspace.root)
    rows = db.query("SELECT business_id, idx, kw_G1a FROM keyword_index WHERE dataset = $d AND len(kw_G1a) > 0 "
                    "ORDER BY business_id, idx", {"d": "d"})
    assert rows.rows() == [("A", 0, ["peanut", "nut", "allergy"]), ("B", 0, ["nut", "nuts"])]


def test_matched_reviews(workspace):
    _tiny(workspace)
    build_index(workspace, "d")
    m = matched_reviews(workspace, "d", "G1a")
    assert m.columns == ["business_id", "review_id", "idx", "text_hash", "keywords_found"]
    assert m["review_id"].to_list() == ["a0", "b0"]
    t = matched_reviews(workspace, "d", "G1a", with_text=True)
    assert t["text"].to_list() == ["My peanut allergy was handled well", "Great donuts"]
    assert t["name"].to_list() == ["Thai Place", "Bakery"] and t["stars"].to_list() == [3.0, 5.0]
    with pytest.raises(UnknownNameError):
        matched_reviews(workspace, "d", "G9j")


def test_stale_and_missing_index(workspace):
    _tiny(workspace)
    with pytest.raises(IndexMissingError, match="no keyword index.*python -m core index --dataset d"):
        matched_reviews(workspace, "d", "G1a")
    assert index_stats(workspace, "d") is None
    build_index(workspace, "d")
    # re-import with other reviews: the index no longer describes them
    write_dataset_replace(workspace)
    assert index_stats(workspace, "d")["current"] is False
    with pytest.raises(IndexMissingError, match="out of date"):
        matched_reviews(workspace, "d", "G1a")
    assert build_index(workspace, "d")["tasks"]["G1a"]["matches"] == 1
    with pytest.raises(UnknownNameError, match="unknown dataset 'nope'"):
        build_index(workspace, "nope")


def write_dataset_replace(ws):
    from core.datasets import write_dataset

    write_dataset(ws, "d", pl.DataFrame({"business_id": ["A"], "name": ["Thai Place"]}),
                  pl.DataFrame({"business_id": ["A"], "review_id": ["x"], "idx": [0], "text": ["hives"],
                                "date": ["2021-01-01 00:00:00"], "stars": [1.0]}),
                  sources=[], layout="test", replace=True)


def test_empty_dataset(workspace):
    from core.datasets import REVIEW_SCHEMA, write_dataset

    empty = pl.DataFrame(schema={k: v for k, v in REVIEW_SCHEMA.items() if k != "dataset"})
    write_dataset(workspace, "e", pl.DataFrame({"business_id": ["A"], "name": ["Nobody reviews"]}), empty,
                  sources=[], layout="test")
    stats = build_index(workspace, "e")
    assert stats["tasks"]["G1a"]["reviews"] == 0 and stats["total_restaurants"] == 0
    assert (stats["tasks"]["G1a"]["matches"], stats["tasks"]["G1a"]["match_rate"]) == (0, 0.0)
    assert matched_reviews(workspace, "e", "G1a").height == 0


def test_cli_index(workspace, capsys):
    _tiny(workspace)
    assert main(["--workspace", str(workspace.root), "--json", "index", "--dataset", "d"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tasks"]["G1a"]["matches"] == 2
    assert main(["--workspace", str(workspace.root), "--no-progress", "index", "--dataset", "d"]) == 0
    assert "G1a Peanut Allergy Safety: 2 matches of 5 reviews (40.0%), 2 restaurants" in capsys.readouterr().out
    assert main(["--workspace", str(workspace.root), "index", "--dataset", "zz"]) == 1
    assert "unknown dataset 'zz'" in capsys.readouterr().err


def test_xnot_review_index_equality(workspace, fixtures_dir):
    """Acceptance (issue 3): keywords_found and text_hash equal xnot's review_index for every review."""
    xnot = fixtures_dir / "xnot"
    import_dataset(workspace, "xnot", xnot / "dataset_K25_subset.jsonl")
    stats = build_index(workspace, "xnot")
    index = load_index(workspace, "xnot")
    names = dict(pl.read_parquet(workspace.dataset_dir("xnot") / "restaurants.parquet").select("business_id", "name").rows())
    assert len(names) == 6 and index.height == 150
    compared = 0
    for bid, name in names.items():
        ref = json.loads((xnot / "semantic_gt/review_index" / f"{xnot_filename(name)}.json").read_text())
        assert ref["restaurant"] == name
        expected = {r["idx"]: r for r in ref["reviews"] if r["idx"] < 25}
        got = index.filter(pl.col("business_id") == bid).sort("idx")
        assert got["idx"].to_list() == sorted(expected)
        for row in got.iter_rows(named=True):
            ref_row = expected[row["idx"]]
            assert row["text_hash"] == ref_row["text_hash"], (name, row["idx"])
            assert row["kw_G1a"] == ref_row["task_relevance"]["G1a"]["keywords_found"], (name, row["idx"])
            assert (len(row["kw_G1a"]) > 0) == ref_row["task_relevance"]["G1a"]["keyword_match"]
            compared += 1
    assert compared == 150
    assert stats["tasks"]["G1a"]["matches"] == sum(len(r) > 0 for r in index["kw_G1a"].to_list()) == 25


def test_prefilter_misses_nothing_unicode():
    # The candidate pass is ASCII case-insensitive on the raw text; these characters only match
    # after Unicode lower-casing: the Kelvin sign lowers to "k", "İ" to "i" + combining dot.
    ascii_task = dataclasses.replace(G1A, task_id="G3a", keywords=("kick", "i\u0307x", "nut"))
    accented = dataclasses.replace(G1A, task_id="G3b", keywords=("café", "crème"))
    texts = ["\u212aICK off", "\u0130X marks", "CAFÉ CRÈME", "DONUT", "Café", None, "plain"]
    out = match_frame(frame(texts), [ascii_task, accented])
    assert out[kw_column("G3a")].to_list() == [reference_found(t, ascii_task.keywords) for t in texts]
    assert out[kw_column("G3a")].to_list()[:2] == [["kick"], ["i\u0307x"]]
    assert out[kw_column("G3b")].to_list() == [[], [], ["café", "crème"], [], ["café"], [], []]


def test_special_lower_is_complete():
    from core.tasks.keyword_index import SPECIAL_LOWER

    found = {chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF
             and any(ord(x) < 128 for x in chr(c).lower())}
    assert found == set(SPECIAL_LOWER)


def test_task_subset_rebuild_keeps_other_tasks(workspace, monkeypatch):
    import re

    from core import tasks

    # a second task in the workspace's tasks/ folder (tasks are data: a file, no code)
    text = (tasks.TASK_DATA_DIR / "G1a.yaml").read_text(encoding="utf-8").replace("task_id: G1a", "task_id: G2c")
    (workspace.root / "tasks").mkdir()
    (workspace.root / "tasks" / "G2c.yaml").write_text(
        re.sub(r"keywords: \[.*?\]", "keywords: [quiet, loud]", text, flags=re.S), encoding="utf-8")
    _tiny(workspace)
    stats = build_index(workspace, "d")
    assert sorted(stats["tasks"]) == ["G1a", "G2c"] and stats["tasks"]["G2c"]["matches"] == 1
    hashes_before = load_index(workspace, "d")["text_hash"].to_list()

    def no_rehash(_texts):
        raise AssertionError("a current index's text hashes are reused, not recomputed")

    monkeypatch.setattr("core.tasks.keyword_index.text_hashes", no_rehash)
    rebuilt = build_index(workspace, "d", tasks=["G1a"])
    assert load_index(workspace, "d")["text_hash"].to_list() == hashes_before
    assert sorted(rebuilt["tasks"]) == ["G1a", "G2c"] and rebuilt["tasks"]["G2c"]["matches"] == 1
    index = load_index(workspace, "d")
    assert index.filter(pl.col("business_id") == "C")[kw_column("G2c")].to_list() == [["quiet"]]
    assert matched_reviews(workspace, "d", "G2c")["review_id"].to_list() == ["c0"]


@pytest.mark.parametrize(
    "texts",
    [[None, None], ["", ""], [], ["x" * 5000, None, "ünï", ""], ["a", "b", "peanut", "c", "d"]],
)
def test_text_hashes_vectorised_edge_cases(texts):
    from core.tasks.keyword_index import text_hashes

    series = pl.Series(texts, dtype=pl.String)
    assert text_hashes(series).to_list() == [text_hash(t) for t in texts]
    if len(texts) >= 3:  # a slice: the Arrow array starts at an offset
        assert text_hashes(series.slice(1, 2)).to_list() == [text_hash(t) for t in texts[1:3]]
    chunked = pl.concat([series, series], rechunk=False)
    assert text_hashes(chunked).to_list() == [text_hash(t) for t in texts + texts]


def _store_text_hash(ws, name: str, hashes: list[str | None] | None) -> None:
    """Rewrite the reviews table with ``hashes`` as its text_hash column (None: without the column)
    and re-lock it, as an import that stores text_hash would have written it."""
    from core.base.files import write_json_atomic
    from core.datasets import LOCK_NAME, TABLES, read_lock
    from core.datasets.lock import make_lock

    folder = ws.dataset_dir(name)
    reviews = pl.read_parquet(folder / TABLES[1]).drop("text_hash", strict=False)
    if hashes is not None:
        reviews = reviews.with_columns(pl.Series("text_hash", hashes, dtype=pl.String))
    reviews.write_parquet(folder / TABLES[1])
    lock = read_lock(ws, name)
    write_json_atomic(folder / LOCK_NAME, make_lock(folder, name, lock["layout"], lock["sources"], lock["counts"]))


def test_stored_text_hash_is_used_and_gives_the_same_index(workspace, monkeypatch):
    _tiny(workspace)
    _store_text_hash(workspace, "d", None)
    build_index(workspace, "d")
    computed = load_index(workspace, "d")
    texts = pl.read_parquet(workspace.dataset_dir("d") / "reviews.parquet")["text"].to_list()
    _store_text_hash(workspace, "d", [text_hash(t) for t in texts])

    def no_hashing(_texts):
        raise AssertionError("the reviews table's text_hash column is used, not recomputed")

    monkeypatch.setattr("core.tasks.keyword_index.text_hashes", no_hashing)
    build_index(workspace, "d")
    assert load_index(workspace, "d").equals(computed)
    # the stored column is what the index holds (a marker value shows it is read, not computed)
    _store_text_hash(workspace, "d", [f"stored{i}" for i in range(len(texts))])
    build_index(workspace, "d", tasks=["G1a"])
    assert load_index(workspace, "d")["text_hash"].to_list() == [f"stored{i}" for i in range(len(texts))]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(st.sampled_from(
    list("abkinuts -ÀİK\u212a") + ["nut", "Peanut", "\u212aICK"]), max_size=12).map("".join)), max_size=40),
    st.lists(st.sampled_from(["nut", "peanut", "kick", "i\u0307", "NUT", "", "à", "k", "ts n"]), min_size=1,
             max_size=5, unique=True))
def test_one_pass_over_slices_matches_the_rule(texts, keywords):
    """Any keyword list (capitals, non-ASCII, the empty keyword), texts searched in parallel slices."""
    import core.tasks.keyword_index as kwi

    task = dataclasses.replace(G1A, task_id="G3c", keywords=tuple(keywords))
    original = kwi.SLICE_ROWS
    try:
        kwi.SLICE_ROWS = 3  # several slices even for a few texts
        out = match_frame(frame(texts), [G1A, task])
    finally:
        kwi.SLICE_ROWS = original
    assert out[kw_column("G3c")].to_list() == [reference_found(t, keywords) for t in texts]
    assert out[kw_column("G1a")].to_list() == [reference_found(t, G1A.keywords) for t in texts]
