"""The embedded demo workspace: deterministic synthetic Yelp-schema data with planted allergy content.

``generate_demo(root)`` writes ``sources/demo/business.json`` and ``review.json`` (Yelp flat
layout, JSONL; SPEC §1.2) from our own templates (no real review text), imports them as dataset
``demo``, writes the planted truth where :func:`default_truth_path` says (the app never reads it;
tests do), then
runs the extra steps of :data:`DEMO_STEPS`. The same seed gives the same bytes. Regenerating drops
the demo dataset's keyword index, judgments and overrides first (they describe the old reviews).

Truth file (Parquet), one row per review that carries planted keyword content:
business_id, review_id, idx, date, stars, useful, kind (see :data:`core.demo.planting.KINDS`),
incident_severity, account_type, safety_interaction (SPEC §2.3: the true G1a labels),
assurance_claim (bool), staff_response (none | accommodating | dismissive | refused), profile.
"mention" rows name allergen dishes or gluten-free menus, "false_friend" rows hit a keyword by
accident ("minutes", "donut", "safe parking", "careful with the hot plate"); both are none/none/none.
Reviews not in the file are none/none/none and contain no G1a keyword.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from core.base.files import atomic_path, remove_tree, write_json_atomic, write_jsonl_atomic
from core.base.progress import Progress, no_progress
from core.base.settings import DEFAULT_WORKSPACE
from core.demo import steps
from core.demo.restaurants import business_record, location, plan_restaurants, restaurant_name, yelp_id
from core.demo.reviews import build_reviews
from core.demo.steps import DEMO_DATASET, DEMO_TASK
from core.demo.topics import plan_topics
from core.workspace import Workspace

GENERATOR_VERSION = 1
MARKER_NAME = "demo.json"

# Extra steps run after the import, in order: ``step(ws, *, seed, progress)``.
DemoStep = Callable[..., Any]
DEMO_STEPS: tuple[DemoStep, ...] = (steps.tasks_step, steps.index_step, steps.judge_step, steps.gt_step,
                                    steps.labels_step, steps.study_step, steps.gold_step, steps.runs_step)

TRUTH_SCHEMA: dict[str, Any] = {
    "business_id": pl.Utf8, "review_id": pl.Utf8, "idx": pl.Int32, "date": pl.Utf8, "stars": pl.Float64,
    "useful": pl.Int64, "kind": pl.Utf8, "incident_severity": pl.Utf8, "account_type": pl.Utf8,
    "safety_interaction": pl.Utf8, "assurance_claim": pl.Boolean, "staff_response": pl.Utf8,
    "profile": pl.Utf8,
}


@dataclass(frozen=True)
class DemoData:
    """The generated records: Yelp business objects, reviews (newest first per business), truth rows."""

    businesses: list[dict[str, Any]]
    reviews: list[dict[str, Any]]
    truth: list[dict[str, Any]]


def default_truth_path(root: Path) -> Path:
    """Where the planted truth goes: somewhere that is clearly the demo's own.

    For the embedded demo workspace (``data/demo``) that is ``data/demo.truth.parquet`` beside it
    (inside the project's ``data/``); for any other folder the user asked ``demo`` to write, it is
    ``sources/demo/planted_truth.parquet`` inside that workspace, next to the generated source
    files (never a file beside a folder the user owns). No page or dataset query reads it.
    """
    root = Path(root).expanduser().resolve()
    if root == DEFAULT_WORKSPACE.resolve():
        return root.parent / f"{root.name}.truth.parquet"
    return Workspace(root).sources_dir(DEMO_DATASET) / "planted_truth.parquet"


def is_demo_workspace(root: Path) -> bool:
    """True for the embedded demo workspace (``data/demo``) or a folder already holding our demo.

    ``make run`` generates the demo only into such a folder: any other workspace is served as it is.
    """
    root = Path(root).expanduser().resolve()
    return root == DEFAULT_WORKSPACE.resolve() or _read_marker(root) is not None


def _check_counts(n_restaurants: int, reviews_per_restaurant: int) -> None:
    if n_restaurants < 1 or reviews_per_restaurant < 1:
        raise ValueError(
            f"need at least 1 restaurant and 1 review per restaurant, got {n_restaurants} and {reviews_per_restaurant}"
        )


def generate_records(*, seed: int = 7, n_restaurants: int = 100, reviews_per_restaurant: int = 200,
                     progress: Progress | None = None) -> DemoData:
    """Generate the demo records in memory (pure: same arguments, same records).

    Args:
        seed: seeds every random stream (``random.Random``; the global generator is never used).
        n_restaurants: restaurants; the special GT profiles come first (see :mod:`core.demo.planting`).
        reviews_per_restaurant: reviews per restaurant, newest first.
        progress: ``(done, total, message)`` callback, once per restaurant.

    Raises:
        ValueError: fewer than one restaurant or review.
    """
    _check_counts(n_restaurants, reviews_per_restaurant)
    progress = progress or no_progress
    businesses: list[dict[str, Any]] = []
    reviews: list[dict[str, Any]] = []
    truth: list[dict[str, Any]] = []
    for position, business, made in iter_restaurants(seed, n_restaurants, reviews_per_restaurant):
        businesses.append(business)
        reviews.extend(made.reviews)
        truth.extend(made.truth)
        progress(position + 1, n_restaurants, business["name"])
    return DemoData(businesses, reviews, truth)


def iter_restaurants(seed: int, n_restaurants: int, reviews_per_restaurant: int) -> Iterator[tuple[int, dict[str, Any], Any]]:
    """``(position, business record, made reviews and truth)`` of each restaurant in order: the
    seeded streams of :func:`generate_records`, one restaurant at a time (bench/scale.py writes
    150,000 restaurants this way without holding them)."""
    user_rng = random.Random(f"scale-workbench-demo:{seed}:users")
    users = [yelp_id(user_rng) for _ in range(max(4 * reviews_per_restaurant, n_restaurants * reviews_per_restaurant // 2))]
    names: set[str] = set()
    for plan in plan_restaurants(n_restaurants):
        rng = random.Random(f"scale-workbench-demo:{seed}:restaurant:{plan.position}")
        business_id, name, place = yelp_id(rng), restaurant_name(rng, plan.cuisine, names), location(rng)
        made = build_reviews(rng, plan, business_id, name, place["city"], reviews_per_restaurant, users)
        taken = {row["idx"] for row in made.truth}
        for idx, plant in plan_topics(seed, plan.position, len(made.reviews), taken).items():
            made.reviews[idx]["text"] = f"{made.reviews[idx]['text']} {plant.text}"
        stars = [int(r["stars"]) for r in made.reviews]
        yield plan.position, business_record(rng, plan, business_id, name, place, stars, made.is_open), made


def write_truth(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write the planted truth rows as Parquet, atomically."""
    frame = pl.DataFrame(rows, schema=TRUTH_SCHEMA, orient="row") if rows else pl.DataFrame(schema=TRUTH_SCHEMA)
    with atomic_path(path, suffix=".parquet") as tmp:
        frame.write_parquet(tmp, compression="zstd", statistics=True)


def _step_name(step: DemoStep) -> str:
    return f"{getattr(step, '__module__', '?')}.{getattr(step, '__qualname__', repr(step))}"


def generator_fingerprint() -> str:
    """sha256 (16 hex) of the generator's own source files: a changed generator means a stale demo."""
    digest = hashlib.sha256(str(GENERATOR_VERSION).encode())
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _read_marker(root: Path) -> dict[str, Any] | None:
    marker = Workspace(Path(root)).sources_dir(DEMO_DATASET) / MARKER_NAME
    try:
        meta = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def demo_is_current(root: Path) -> bool:
    """True when ``root`` holds a finished demo made by this exact generator with the current steps."""
    meta = _read_marker(root)
    return (
        meta is not None
        and meta.get("state") == "done"
        and DEMO_DATASET in Workspace(Path(root)).datasets()
        and meta.get("generator_version") == GENERATOR_VERSION
        and meta.get("fingerprint") == generator_fingerprint()
        and meta.get("steps") == [_step_name(s) for s in DEMO_STEPS]
    )


def foreign_demo_dataset(root: Path) -> bool:
    """True when ``root`` has a dataset named "demo" that this generator did not write."""
    return DEMO_DATASET in Workspace(Path(root)).datasets() and _read_marker(root) is None


def generate_demo(root: Path, *, seed: int = 7, n_restaurants: int = 100, reviews_per_restaurant: int = 200,
                  truth_path: Path | None = None, progress: Progress | None = None) -> dict[str, Any]:
    """Generate the demo workspace at ``root`` (replacing an existing demo dataset).

    Args:
        root: the workspace folder (created if missing).
        seed: the seed of every random choice; the same seed gives the same bytes.
        n_restaurants: restaurants to generate (the planted GT profiles come first).
        reviews_per_restaurant: reviews per restaurant (idx 0 = newest).
        truth_path: where to write the planted truth (default :func:`default_truth_path`).
        progress: ``(done, total, message)`` callback.

    Returns:
        A summary: counts, planted kinds, file paths, seconds per phase and the steps run.
    """
    # deferred: core.datasets pulls in pandas (~500 ms), only needed when generate_demo() runs
    from core.datasets.importer import import_dataset

    _check_counts(n_restaurants, reviews_per_restaurant)
    started = time.perf_counter()
    progress = progress or no_progress
    root = Path(root)
    ws = Workspace(root).ensure(DEMO_DATASET)
    total = n_restaurants + 2 + len(DEMO_STEPS)
    data = generate_records(seed=seed, n_restaurants=n_restaurants, reviews_per_restaurant=reviews_per_restaurant,
                            progress=lambda done, _total, msg: progress(done, total, msg))
    seconds = {"generate": round(time.perf_counter() - started, 3)}
    marker = ws.sources_dir(DEMO_DATASET) / MARKER_NAME
    # written first and last: a half-finished regeneration is ours but never "current"
    write_json_atomic(marker, {"state": "generating", "generator_version": GENERATOR_VERSION}, indent=None)
    _clear_derived(ws)
    business_path, review_path = _write_sources(ws, data)
    truth_path = Path(truth_path) if truth_path is not None else default_truth_path(root)
    write_truth(truth_path, data.truth)
    progress(n_restaurants + 1, total, "importing")
    imported = import_dataset(ws, DEMO_DATASET, review_path, business_path=business_path, replace=True)
    seconds["write_and_import"] = round(time.perf_counter() - started - seconds["generate"], 3)
    step_seconds = _run_steps(ws, seed, lambda i, msg: progress(n_restaurants + 2 + i, total, msg))
    summary = {
        "dataset": DEMO_DATASET, "workspace": str(root), "seed": seed, "generator_version": GENERATOR_VERSION,
        "restaurants": len(data.businesses), "reviews": len(data.reviews), "planted_reviews": len(data.truth),
        "planted_by_kind": dict(sorted(Counter(r["kind"] for r in data.truth).items())),
        "profiles": dict(sorted(Counter(p.profile.name for p in plan_restaurants(n_restaurants)).items())),
        "sources": {"business": str(business_path), "review": str(review_path)},
        "truth_path": str(truth_path), "steps": [_step_name(s) for s in DEMO_STEPS],
        "seconds": {**seconds, "steps": step_seconds, "total": round(time.perf_counter() - started, 3)},
        "import_warnings": imported.get("warnings", []),
    }
    write_json_atomic(marker, {"state": "done", "fingerprint": generator_fingerprint(),
                               **{k: v for k, v in summary.items() if k != "seconds"}})
    progress(total, total, "done")
    return summary


def _clear_derived(ws: Workspace) -> None:
    """Drop the keyword index, judgments and overrides of an earlier demo: they describe other reviews."""
    for folder in (ws.index_dir(DEMO_DATASET), ws.judgments_dir(DEMO_DATASET, DEMO_TASK).parent,
                   ws.overrides_path(DEMO_DATASET, DEMO_TASK).parent):
        remove_tree(folder)  # never through a link below the workspace root (core.base.files)


def _write_sources(ws: Workspace, data: DemoData) -> tuple[Path, Path]:
    source = ws.sources_dir(DEMO_DATASET)
    business_path, review_path = source / "business.json", source / "review.json"
    write_jsonl_atomic(business_path, data.businesses)
    write_jsonl_atomic(review_path, data.reviews)
    return business_path, review_path


def _run_steps(ws: Workspace, seed: int, report: Callable[[int, str], None]) -> dict[str, float]:
    """Run :data:`DEMO_STEPS` in order; each step's own progress shows as a message on the bar."""
    seconds: dict[str, float] = {}
    for i, step in enumerate(DEMO_STEPS):
        name = _step_name(step)
        short = name.rsplit(".", 1)[-1]
        report(i, short)
        started = time.perf_counter()
        step(ws, seed=seed, progress=lambda done, total, msg, i=i, short=short: report(
            i, f"{short} {done}/{total} {msg}".rstrip()))
        seconds[name] = round(time.perf_counter() - started, 3)
    return seconds
