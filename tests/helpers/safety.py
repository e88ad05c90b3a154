"""Helpers of the safety tests (issue 9): flat Yelp files of any size, CLI runs in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


def write_flat(folder: Path, n_restaurants: int, n_reviews: int, *, text: str = "peanut allergy text") -> Path:
    """``review.json`` + ``business.json`` (flat layout) with ``n_reviews`` reviews per restaurant."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "business.json", "w", encoding="utf-8") as fh:
        for b in range(n_restaurants):
            fh.write(json.dumps({"business_id": f"b{b:05d}", "name": f"Place {b}", "categories": "Thai, Restaurants",
                                 "city": "Philadelphia", "stars": 4.0, "review_count": n_reviews}) + "\n")
    with open(folder / "review.json", "w", encoding="utf-8") as fh:
        for b in range(n_restaurants):
            for r in range(n_reviews):
                fh.write(json.dumps({
                    "review_id": f"r{b:05d}-{r:05d}", "business_id": f"b{b:05d}", "user_id": "u", "stars": 4.0,
                    "useful": 0, "funny": 0, "cool": 0, "text": f"{text} {b} {r}",
                    "date": f"20{10 + r % 10}-01-{1 + r % 28:02d} 10:00:{r % 60:02d}"}) + "\n")
    return folder


def cli(*args: str, **kwargs) -> subprocess.Popen:
    """Start ``python -m core ARGS`` in the project root (stdout and stderr piped)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([PYTHON, "-m", "core", "--no-progress", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def snapshot(folder: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path under ``folder`` with its mode and (for files) bytes."""
    out = {}
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(folder))] = (st.st_mode, p.read_bytes() if p.is_file() and not p.is_symlink() else None)
    return out
