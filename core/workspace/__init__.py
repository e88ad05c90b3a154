"""A workspace: one folder of files. This module names every path in it.

```
workspace.json                            name and format version
datasets/{dataset}/restaurants.parquet    normalised tables (SPEC §1.3), `dataset` column inside
datasets/{dataset}/reviews.parquet
datasets/{dataset}/dataset.lock.json      sha256 of sources and tables (SPEC §1.4)
index/{dataset}/keyword_index.parquet     keyword matches for every task (SPEC §2.2)
index/{dataset}/stats.json
judgments/{dataset}/{task}/{judge}.jsonl  append-only judgment log per judge (SPEC §2.3; file name:
                                          core.judgments.judge_file of the judge id)
judgments/{dataset}/{task}/_retired/      stale judgments moved there by `judgments prune`
overrides/{dataset}/{task}.jsonl          append-only human overrides (SPEC §2.5)
gt/                                       imported and exported GT files
gt/variants/{name}.json                   saved what-if variants of a formula or policy
tasks/{task}.yaml, policies/{id}.yaml     the workspace's own tasks and policies (beside the built-ins)
runs/{run_id}/results.json                method runs (SPEC §4.2; core.runs.records owns a run's files)
jobs/{job_id}/                            background jobs: spec, status, log (core.jobs)
studies/{study}/runs/{run}/run.jsonl      perspective-study responses (SPEC §7)
scorers/{name}/                           trained scorers: parameters and manifest
gold/                                     gold sets, answers and reports (SPEC §8)
labels.sqlite                             label store (default; SPEC §6)
labels/{project}/                         label exports: {dataset}_reviews.jsonl, {project}_consensus.jsonl
cache/llm.jsonl                           LLM response cache (core.llm)
sources/{dataset}/                        source files written by the workbench (the demo's business/review.json)
.staging/{kind}.{name}/                   folders an import or index build is writing (cleaned up on start)
.locks/{kind}.{name}.lock                 flock files of running imports and judge runs (core.workspace.locks)
```

Every name that becomes part of a path goes through :func:`check_name`, and every path is built by
a method here that goes through :meth:`Workspace.path_inside`, which refuses a path resolving
outside the root (a ``..``, an absolute path, a symlink pointing out). That is the early check;
the wall is at the moment of writing: a Workspace registers its root with
:func:`core.base.files.confine`, and every write, append, folder made or file deleted below it
(:mod:`core.base.files`) reaches its folder from the root without following a link, so a link planted
anywhere below the root, including below an area folder, never redirects a write.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from core.base.files import confine, write_json_atomic

FORMAT_VERSION = 1
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
STAGING = ".staging"  # import staging folders (outside datasets/, so no reader's glob sees them)
LOCKS = ".locks"  # lock files of imports and judge runs (core.workspace.locks)


def check_name(kind: str, name: object) -> str:
    r"""Validate a name that becomes a folder or file name (dataset, project, task, judge, run,
    variant, export names): THE one validator for them.

    1-64 characters of letters, digits, ``_``, ``-`` and ``.``, starting with a letter or digit;
    the whole string must match (a trailing newline is refused).

    >>> check_name("dataset", "demo-1.v2")
    'demo-1.v2'
    >>> check_name("dataset", "demo\n")
    Traceback (most recent call last):
    ...
    ValueError: invalid dataset name 'demo\n': use 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit
    """
    if not isinstance(name, str) or _NAME_RE.fullmatch(name) is None:
        shown = repr(name) if not isinstance(name, str) or len(name) <= 80 else repr(name[:80]) + "…"
        raise ValueError(
            f"invalid {kind} name {shown}: use 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit"
        )
    return name


def is_valid_name(name: object) -> bool:
    """True when :func:`check_name` accepts ``name``."""
    return isinstance(name, str) and _NAME_RE.fullmatch(name) is not None


def is_inside(path: str | Path, root: str | Path) -> bool:
    """True when ``path`` resolves (symlinks followed) to ``root`` or below it."""
    try:
        return Path(path).resolve().is_relative_to(Path(root).resolve())
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL byte
        return False


@dataclass(frozen=True)
class Workspace:
    """Paths inside one workspace folder."""

    root: Path

    def __post_init__(self) -> None:
        if not isinstance(self.root, Path):
            object.__setattr__(self, "root", Path(self.root))
        confine(self.root)  # writes below the root never follow a link (core.base.files)

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

    def require(self) -> Workspace:
        """This workspace if it exists; a read never creates one (a mistyped path is an error)."""
        if not self.exists():
            raise FileNotFoundError(f"no workspace at {self.root} (no workspace.json); check --workspace")
        return self

    def path_inside(self, *parts: str | Path) -> Path:
        """``root/parts…``, refused unless it resolves (symlinks included) inside the workspace.

        Every path the workbench writes to is built by this workspace's methods, which go through
        here; a name is checked with :func:`check_name` first, so this is the second wall.
        """
        path = self.root.joinpath(*parts)
        if not is_inside(path, self.root):
            raise ValueError(f"refusing to use {path}: it resolves outside the workspace {self.root}")
        return path

    # datasets
    def dataset_dir(self, dataset: str) -> Path:
        return self.path_inside("datasets", check_name("dataset", dataset))

    @property
    def staging_dir(self) -> Path:
        """Where imports build a dataset before it replaces ``datasets/{name}`` (hidden, outside datasets/)."""
        return self.path_inside(STAGING)

    @property
    def locks_dir(self) -> Path:
        """Lock files of running imports and judge runs (:mod:`core.workspace.locks`)."""
        return self.path_inside(LOCKS)

    def files_stamp(self, areas: tuple[str, ...]) -> tuple[tuple[str, int, int], ...]:
        """(path, mtime_ns, size) of every file under the folders ``areas`` of the root (hidden ones
        skipped): a cache key that changes when any of them is written, added or removed.

        >>> import tempfile
        >>> ws = Workspace(Path(tempfile.mkdtemp()))
        >>> _ = (ws.root / "gt").mkdir(), (ws.root / "gt" / "a.json").write_text("{}")
        >>> [(Path(p).name, size) for p, _, size in ws.files_stamp(("gt", "runs"))]
        [('a.json', 2)]
        """
        out: list[tuple[str, int, int]] = []
        stack = [str(self.root / area) for area in areas]
        while stack:
            try:
                entries = list(os.scandir(stack.pop()))
            except OSError:
                continue  # not there (yet), or gone meanwhile
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    else:
                        st = entry.stat()
                        out.append((entry.path, st.st_mtime_ns, st.st_size))
                except OSError:
                    continue
        return tuple(sorted(out))

    def datasets(self) -> list[str]:
        base = self.root / "datasets"
        if not base.exists():
            return []
        return sorted(p.name for p in base.iterdir() if p.is_dir() and _NAME_RE.fullmatch(p.name))

    def sources_dir(self, dataset: str) -> Path:
        """Source files the workbench generated for ``dataset`` (the demo's Yelp files)."""
        return self.path_inside("sources", check_name("dataset", dataset))

    # keyword index
    def index_dir(self, dataset: str) -> Path:
        return self.path_inside("index", check_name("dataset", dataset))

    # judgments and overrides
    def judgments_dir(self, dataset: str, task: str) -> Path:
        return self.path_inside("judgments", check_name("dataset", dataset), check_name("task", task))

    def overrides_path(self, dataset: str, task: str) -> Path:
        return self.path_inside("overrides", check_name("dataset", dataset), f"{check_name('task', task)}.jsonl")

    # other areas
    @property
    def gt_dir(self) -> Path:
        return self.path_inside("gt")

    @property
    def runs_dir(self) -> Path:
        return self.path_inside("runs")

    def run_dir(self, run_id: str) -> Path:
        """``runs/{run_id}/`` (the name checked)."""
        return self.path_inside("runs", check_name("run", run_id))

    @property
    def gold_dir(self) -> Path:
        return self.path_inside("gold")

    @property
    def tasks_dir(self) -> Path:
        """The workspace's own tasks (``tasks/{task}.yaml``, e.g. written by ``policies import``)."""
        return self.path_inside("tasks")

    @property
    def policies_dir(self) -> Path:
        """The workspace's own policies (``policies/{policy}.yaml``); one may replace a built-in of the same id."""
        return self.path_inside("policies")

    @property
    def jobs_dir(self) -> Path:
        """Background job records (``jobs/{job_id}.json``, :mod:`core.jobs`)."""
        return self.path_inside("jobs")

    @property
    def studies_dir(self) -> Path:
        """Perspective studies (``studies/{study}/``: grid and runs)."""
        return self.path_inside("studies")

    @property
    def scorers_dir(self) -> Path:
        """Trained scorers (``scorers/{name}/``)."""
        return self.path_inside("scorers")

    @property
    def variants_dir(self) -> Path:
        """Saved what-if variants of formulas and policies (``gt/variants/{name}.json``)."""
        return self.path_inside("gt", "variants")

    @property
    def cache_dir(self) -> Path:
        """Caches that save paid work (LLM answers, ``cache/llm.jsonl``); safe to delete."""
        return self.path_inside("cache")

    @property
    def labels_dir(self) -> Path:
        """Exports of the label store (``labels/{project}/``; SPEC §6.5)."""
        return self.path_inside("labels")

    def labels_export_dir(self, project: str) -> Path:
        """``labels/{project}/`` (the name checked)."""
        return self.path_inside("labels", check_name("project", project))
