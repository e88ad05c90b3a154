"""Gold sets (SPEC §8): items, their validation, and a set's scoring configuration.

An item is one JSON object per line: ``{messages: [system, user, assistant "EXPECTED_ANSWER"],
metadata: {domain, task, source_ids, locale, split}, expected_output, eval_criteria:
{must_include, citation_required, max_tokens}}``. Blank lines and ``#`` lines are skipped. Items
get ``sample_id = {task}_{n}``, ``n`` counting every item of the evaluation in file order (as
the reference harness does), so the order of the files given is the order of the ids.

A bad line raises :class:`core.base.errors.DataError` naming the file, the line and the field; a load
either returns every item or raises, it never returns part of a file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.base.errors import DataError
from core.base.files import jsonl_objects

EVAL_GLOB = "*_eval.jsonl"  # the files an eval folder contributes (the reference harness's glob)
DEFAULT_MAX_TOKENS = 300


@dataclass(frozen=True)
class GoldItem:
    """One gold question with its expected answer and criteria."""

    sample_id: str
    messages: tuple[dict[str, str], ...]
    domain: str
    task: str
    expected_output: str
    must_include: tuple[str, ...] = ()
    citation_required: bool = True
    max_tokens: int = DEFAULT_MAX_TOKENS
    source_ids: tuple[str, ...] = ()
    locale: str | None = None
    split: str | None = None
    file: str = ""
    line: int = 0
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def question(self) -> str:
        """The first user message (the reference harness's ``question``)."""
        return next((m["content"] for m in self.messages if m["role"] == "user"), "")

    @property
    def prompt_messages(self) -> list[dict[str, str]]:
        """The messages sent to a model: all but a trailing assistant message (the placeholder answer)."""
        msgs = list(self.messages)
        if msgs and msgs[-1]["role"] == "assistant":
            msgs = msgs[:-1]
        return [dict(m) for m in msgs]


def _need(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], *, path: Path, line: int,
          prefix: str = "", required: bool = True, default: Any = None) -> Any:
    name = f"{prefix}{key}"
    if key not in obj or obj[key] is None:
        if required:
            raise DataError("missing", path=path, line=line, field=name)
        return default
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        want = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise DataError(f"expected {_article(want)}, got {type(value).__name__}", path=path, line=line, field=name)
    return value


def _article(word: str) -> str:
    names = {"str": "a string", "list": "a list", "dict": "an object", "bool": "a boolean", "int": "an integer"}
    return names.get(word, word)


def _strings(values: list[Any], *, path: Path, line: int, field: str) -> tuple[str, ...]:
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise DataError(f"expected a string, got {type(value).__name__}", path=path, line=line, field=f"{field}[{i}]")
    return tuple(values)


def parse_item(obj: Any, *, path: Path, line: int, sample_id: str = "") -> GoldItem:
    """Validate one parsed line into a :class:`GoldItem` (``sample_id`` is filled in by the loader)."""
    if not isinstance(obj, dict):
        raise DataError(f"expected a JSON object, got {type(obj).__name__}", path=path, line=line)
    messages = _need(obj, "messages", list, path=path, line=line)
    if not messages:
        raise DataError("needs at least one message", path=path, line=line, field="messages")
    clean = []
    for i, msg in enumerate(messages):
        where = f"messages[{i}]."
        if not isinstance(msg, dict):
            raise DataError("expected an object", path=path, line=line, field=f"messages[{i}]")
        role = _need(msg, "role", str, path=path, line=line, prefix=where)
        content = _need(msg, "content", str, path=path, line=line, prefix=where)
        if role not in ("system", "user", "assistant"):
            raise DataError(f"unknown role {role!r}; valid: assistant, system, user", path=path, line=line,
                            field=f"{where}role")
        clean.append({"role": role, "content": content})
    if not any(m["role"] == "user" for m in clean):
        raise DataError("no user message (the question)", path=path, line=line, field="messages")
    meta = _need(obj, "metadata", dict, path=path, line=line)
    domain = _need(meta, "domain", str, path=path, line=line, prefix="metadata.")
    task = _need(meta, "task", str, path=path, line=line, prefix="metadata.")
    source_ids = _strings(_need(meta, "source_ids", list, path=path, line=line, prefix="metadata.", required=False,
                                default=[]), path=path, line=line, field="metadata.source_ids")
    locale = _need(meta, "locale", str, path=path, line=line, prefix="metadata.", required=False)
    split = _need(meta, "split", str, path=path, line=line, prefix="metadata.", required=False)
    expected = _need(obj, "expected_output", str, path=path, line=line)
    criteria = _need(obj, "eval_criteria", dict, path=path, line=line, required=False, default={})
    must = _strings(_need(criteria, "must_include", list, path=path, line=line, prefix="eval_criteria.",
                          required=False, default=[]), path=path, line=line, field="eval_criteria.must_include")
    citation = _need(criteria, "citation_required", bool, path=path, line=line, prefix="eval_criteria.",
                     required=False, default=True)
    max_tokens = _need(criteria, "max_tokens", int, path=path, line=line, prefix="eval_criteria.",
                       required=False, default=DEFAULT_MAX_TOKENS)
    if max_tokens < 1:
        raise DataError(f"must be a positive integer, got {max_tokens}", path=path, line=line,
                        field="eval_criteria.max_tokens")
    return GoldItem(
        sample_id=sample_id, messages=tuple(clean), domain=domain, task=task, expected_output=expected,
        must_include=must, citation_required=citation, max_tokens=max_tokens, source_ids=source_ids,
        locale=locale, split=split, file=str(path), line=line,
    )


def read_items_file(path: str | Path) -> list[tuple[int, GoldItem]]:
    """(line, item) for every item of one file, ids not yet assigned; raises on the first bad line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"gold file not found: {path}")
    return [(n, parse_item(obj, path=path, line=n)) for n, obj in jsonl_objects(path)]


def load_gold_files(paths: Sequence[str | Path]) -> list[GoldItem]:
    """Every item of ``paths`` in order, with ``sample_id = {task}_{n}`` (n over all files).

    Raises:
        DataError: a bad line (file, line, field); nothing is returned then.
        FileNotFoundError: a missing file.
    """
    parsed = [item for path in paths for _, item in read_items_file(path)]
    return [_with_id(item, f"{item.task}_{n}") for n, item in enumerate(parsed)]


def _with_id(item: GoldItem, sample_id: str) -> GoldItem:
    return replace(item, sample_id=sample_id)


def eval_files_in(folder: str | Path) -> list[Path]:
    """The ``*_eval.jsonl`` files of a folder, sorted by name (a stable order of sample ids)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"eval folder not found: {folder}")
    return sorted(folder.glob(EVAL_GLOB))


def resolve_eval_files(files: Iterable[str | Path] = (), folder: str | Path | None = None) -> list[Path]:
    """``files`` if given (in the order given), else the eval files of ``folder``."""
    chosen = [Path(f) for f in files]
    if not chosen and folder is not None:
        chosen = eval_files_in(folder)
    if not chosen:
        raise ValueError("no eval files: give --eval-files, or an --eval-dir holding *_eval.jsonl files")
    return chosen
