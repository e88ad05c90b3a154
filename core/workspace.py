"""A workspace: one folder of files. This module names every path in it.

```
workspace.json                            name and format version
datasets/{dataset}/restaurants.parquet    normalised tables (SPEC §1.3), `dataset` column inside
datasets/{dataset}/reviews.parquet
datasets/{dataset}/dataset.lock.json      sha256 of sources and tables (SPEC §1.4)
index/{dataset}/keyword_index.parquet     keyword matches for every task (SPEC §2.2)
index/{dataset}/stats.json
judgments/{dataset}/{task}/{judge}.jsonl  append-only judgment log per judge (SPEC §2.3)
overrides/{dataset}/{task}.jsonl          append-only human overrides (SPEC §2.5)
gt/                                       imported and exported GT files
runs/{run_id}/results.json                method runs (SPEC §4.2)
labels.sqlite                             label store (default; SPEC §6)
labels/{project}/                         label exports: {dataset}_reviews.jsonl, {project}_consensus.jsonl
cache/llm.jsonl                           LLM response cache (core.llm)
sources/{dataset}/                        source files written by the workbench (the demo's business/review.json)
```
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.files import write_json_atomic
from core.settings import workspace_dir

FORMAT_VERSION = 1
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def check_name(kind: str, name: str) -> str:
    """Validate a dataset/task/judge name used as a folder or file name."""
    if not _NAME_RE.match(name or ""):
        raise ValueError(
            f"invalid {kind} name {name!r}: use 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit"
        )
    return name


@dataclass(frozen=True)
class Workspace:
    """Paths inside one workspace folder."""

    root: Path

    @classmethod
    def resolve(cls, explicit: str | Path | None = None) -> Workspace:
        """The workspace from ``explicit``, ``$WORKBENCH_WORKSPACE`` or the demo default."""
        return cls(workspace_dir(explicit))

    def ensure(self, name: str | None = None) -> Workspace:
        """Create the folder and its ``workspace.json`` if missing."""
        self.root.mkdir(parents=True, exist_ok=True)
        meta = self.root / "workspace.json"
        if not meta.exists():
            write_json_atomic(meta, {"name": name or self.root.name, "format_version": FORMAT_VERSION})
        return self

    def exists(self) -> bool:
        """True for a folder with ``workspace.json`` or with datasets (any folder holding datasets is one)."""
        return (self.root / "workspace.json").exists() or bool(self.datasets())

    # datasets
    def dataset_dir(self, dataset: str) -> Path:
        return self.root / "datasets" / check_name("dataset", dataset)

    def datasets(self) -> list[str]:
        base = self.root / "datasets"
        if not base.exists():
            return []
        return sorted(p.name for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))

    def sources_dir(self, dataset: str) -> Path:
        """Source files the workbench generated for ``dataset`` (the demo's Yelp files)."""
        return self.root / "sources" / check_name("dataset", dataset)

    # keyword index
    def index_dir(self, dataset: str) -> Path:
        return self.root / "index" / check_name("dataset", dataset)

    # judgments and overrides
    def judgments_dir(self, dataset: str, task: str) -> Path:
        return self.root / "judgments" / check_name("dataset", dataset) / check_name("task", task)

    def overrides_path(self, dataset: str, task: str) -> Path:
        return self.root / "overrides" / check_name("dataset", dataset) / f"{check_name('task', task)}.jsonl"

    # other areas
    @property
    def gt_dir(self) -> Path:
        return self.root / "gt"

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    @property
    def gold_dir(self) -> Path:
        return self.root / "gold"

    @property
    def cache_dir(self) -> Path:
        """Caches that save paid work (LLM answers, ``cache/llm.jsonl``); safe to delete."""
        return self.root / "cache"

    @property
    def labels_dir(self) -> Path:
        """Exports of the label store (``labels/{project}/``; SPEC §6.5)."""
        return self.root / "labels"
