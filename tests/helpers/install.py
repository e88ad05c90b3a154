"""A workbench installed the way a user installs it (a venv with the project), and a small Yelp-scale file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from core.base.settings import PROJECT_ROOT


def small_scale_file(path: Path, n_restaurants: int = 2, n_reviews: int = 3) -> Path:
    """A SCALE-layout JSONL (one restaurant per line, reviews newest first), built from code."""
    lines = []
    for b in range(n_restaurants):
        bid = f"biz{b:019d}"
        reviews = [{"review_id": f"r{b}x{i:018d}", "user_id": "u" * 22, "business_id": bid, "stars": 4.0,
                    "useful": 0, "funny": 0, "cool": 0, "text": f"review {i} of {b}",
                    "date": f"2020-01-{28 - i:02d} 10:00:00"} for i in range(n_reviews)]
        lines.append(json.dumps({"business_id": bid, "business": {
            "business_id": bid, "name": f"Place {b}", "address": "", "city": "X", "state": "PA", "postal_code": "1",
            "latitude": 0.0, "longitude": 0.0, "stars": 4.0, "review_count": n_reviews, "is_open": 1,
            "attributes": {}, "categories": "Restaurants, Thai", "hours": {}}, "reviews": reviews}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def install_workbench(venv: Path) -> Path:
    """`pip install -e .` of this checkout into a throwaway venv whose dependencies come from the running
    one (never into the shared venv); returns the installed `workbench` command."""
    subprocess.run([PY, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    shared = [p for p in sys.path if p.endswith("site-packages")]
    (site / "shared.pth").write_text("\n".join(shared) + "\n")
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                           "--no-deps", "-e", str(PROJECT_ROOT)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return venv / "bin" / "workbench"




PY = sys.executable
