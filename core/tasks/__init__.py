"""Task registry (SPEC §2.1): tasks are data, one YAML file per task, in ``core/tasks/data/tasks/``
(the package) and in a workspace's ``tasks/`` folder (e.g. written by ``policies import``).

A task id is ``G{1-10}{a-j}`` (SCALE) or a topic id ``G{n}_{topic}`` (ADDM, e.g. ``G1_dietary``).
A task bundles its keyword list (SPEC §2.2), the judgment schema of its per-review judgments
(SPEC §2.3: enum fields with the meaning of every value, plus a verbatim ``excerpt``), the
versioned judgment prompt, the names of its GT formulas and policies, and its verdict scale.
Adding a task means adding ``{task_id}.yaml``; no code changes.

>>> task = get_task("G1a", None)
>>> task.keywords[:3]
('peanut', 'nut', 'nuts')
>>> task.field_names
('incident_severity', 'account_type', 'safety_interaction')
>>> task.validate_fields({"incident_severity": "mild", "account_type": "firsthand",
...                       "safety_interaction": "none", "excerpt": "my lips swelled"})
({'incident_severity': 'mild', 'account_type': 'firsthand', 'safety_interaction': 'none'}, None)
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Any

from core.base.errors import DataError, UnknownNameError
from core.base.files import read_yaml_mapping
from core.base.registry import Registry
from core.base.stamps import folder_stamps

if TYPE_CHECKING:
    from core.workspace import Workspace

TASK_DATA_DIR = Path(__file__).resolve().parent / "data" / "tasks"
TASK_ID_RE = re.compile(r"^G(10|[1-9])(?:([a-j])|_([a-z][a-z0-9_]{0,40}))$")
EXCERPT_FIELD = "excerpt"


def check_task_id(task_id: str) -> str:
    """Validate the form ``G{1-10}{a-j}`` or a topic id ``G{n}_{topic}`` (SPEC §2.1); returns ``task_id``.

    >>> check_task_id("G10j"), check_task_id("G2_business")
    ('G10j', 'G2_business')
    >>> check_task_id("G11a")
    Traceback (most recent call last):
    ...
    ValueError: invalid task id 'G11a': expected G{1-10}{a-j} or G{1-10}_{topic}, e.g. G1a or G1_dietary
    """
    if not isinstance(task_id, str) or not TASK_ID_RE.match(task_id):
        raise ValueError(f"invalid task id {task_id!r}: expected G{{1-10}}{{a-j}} or G{{1-10}}_{{topic}}, e.g. G1a or G1_dietary")
    return task_id


@dataclass(frozen=True)
class JudgmentField:
    """One enum field of a judgment: its allowed values (in order) and what each means."""

    name: str
    description: str
    values: tuple[str, ...]
    meanings: tuple[tuple[str, str], ...]
    cues: tuple[tuple[str, tuple[str, ...]], ...] = ()  # value -> phrases that signal it (offline cue judge)

    def meaning(self, value: str) -> str:
        """The documented meaning of ``value`` (KeyError for a value outside the enum)."""
        return dict(self.meanings)[value]


@dataclass(frozen=True)
class Task:
    """A benchmark task as loaded from its YAML file."""

    task_id: str
    name: str
    description: str
    group: int
    perspective: str
    keywords: tuple[str, ...]
    fields: tuple[JudgmentField, ...]
    excerpt_description: str
    prompt_version: str
    prompt_template: str
    formulas: tuple[str, ...]
    default_formula: str
    policies: tuple[str, ...]
    verdict_scale: tuple[str, ...]
    source: str = ""

    @property
    def field_names(self) -> tuple[str, ...]:
        """Names of the enum fields, in schema order (without ``excerpt``)."""
        return tuple(f.name for f in self.fields)

    def field(self, name: str) -> JudgmentField:
        """The schema field ``name``; UnknownNameError lists the valid ones."""
        for f in self.fields:
            if f.name == name:
                return f
        raise UnknownNameError(f"{self.task_id} judgment field", name, self.field_names)

    def schema_text(self) -> str:
        """The judgment schema as prompt text: every field, its values and their meanings."""
        lines = []
        for f in self.fields:
            lines.append(f"{f.name}: {f.description}")
            lines.extend(f"  - {v}: {m}" for v, m in f.meanings)
        lines.append(f"{EXCERPT_FIELD}: {self.excerpt_description}")
        return "\n".join(lines)

    def render_prompt(self, review_text: str, *, restaurant_name: str = "", categories: str = "") -> str:
        """The judgment prompt for one review (version :attr:`prompt_version`)."""
        return Template(self.prompt_template).substitute(
            review_text=review_text or "",
            restaurant_name=restaurant_name or "",
            categories=categories or "",
            schema_text=self.schema_text(),
        )

    def response_json_schema(self) -> dict[str, Any]:
        """JSON Schema of a structured judge answer: every field an enum, ``excerpt`` a string.

        Strict-mode compatible (all keys required, no additional properties).
        """
        props: dict[str, Any] = {
            f.name: {"type": "string", "enum": list(f.values), "description": f.description} for f in self.fields
        }
        props[EXCERPT_FIELD] = {"type": "string", "description": self.excerpt_description}
        return {
            "type": "object",
            "properties": props,
            "required": [*self.field_names, EXCERPT_FIELD],
            "additionalProperties": False,
        }

    def response_format(self) -> dict[str, Any]:
        """The OpenAI ``response_format`` argument (``json_schema``, strict) for this task."""
        return {
            "type": "json_schema",
            "json_schema": {
                "name": f"{self.task_id}_judgment_{self.prompt_version}",
                "strict": True,
                "schema": self.response_json_schema(),
            },
        }

    def validate_fields(self, answer: Any) -> tuple[dict[str, Any], str | None]:
        """Check a judge's answer against the schema (SPEC §2.3).

        Returns ``(fields, parse_error)``. ``fields`` has every schema field; a value is kept
        as given (only surrounding whitespace and case are normalised, so ``" Mild"`` is
        ``"mild"``); a value outside the enum stays as given and is reported in
        ``parse_error`` (never replaced by an enum value); a missing field is None and reported.
        A non-string ``excerpt``, when present, is reported too. ``parse_error`` is None when
        the answer is valid.
        """
        if not isinstance(answer, dict):
            return {f: None for f in self.field_names}, f"expected a JSON object, got {type(answer).__name__}"
        fields: dict[str, Any] = {}
        problems: list[str] = []
        for f in self.fields:
            value = answer.get(f.name)
            if value is None:
                fields[f.name] = None
                problems.append(f"{f.name}: missing")
                continue
            if isinstance(value, bool):  # a JSON boolean field (e.g. is_relevant) has values true/false
                value = "true" if value else "false"
            norm = value.strip().lower() if isinstance(value, str) else value
            fields[f.name] = norm if norm in f.values else value
            if norm not in f.values:
                problems.append(f"{f.name}: {value!r} not in [{', '.join(f.values)}]")
        excerpt = answer.get(EXCERPT_FIELD)
        if excerpt is not None and not isinstance(excerpt, str):
            problems.append(f"{EXCERPT_FIELD}: expected a string, got {type(excerpt).__name__}")
        return fields, ("; ".join(problems) or None)


def _require(raw: dict[str, Any], key: str, kind: type | tuple[type, ...], path: Path) -> Any:
    if key not in raw:
        raise DataError("missing", path=path, field=key)
    value = raw[key]
    if not isinstance(value, kind) or (isinstance(value, (str, list, dict)) and not value):
        raise DataError(f"expected a non-empty {getattr(kind, '__name__', kind)}", path=path, field=key)
    return value


def _parse_field(raw: Any, i: int, path: Path) -> JudgmentField:
    where = f"judgment.fields[{i}]"
    if not isinstance(raw, dict):
        raise DataError("expected a mapping", path=path, field=where)
    name = _require(raw, "name", str, path)
    values = raw.get("values")
    if not isinstance(values, dict) or not values:
        raise DataError("expected a mapping value -> meaning", path=path, field=f"{where}.values")
    meanings = tuple((_value_id(v), str(m)) for v, m in values.items())
    cues_raw = raw.get("cues") or {}
    if not isinstance(cues_raw, dict) or any(_value_id(v) not in dict(meanings) for v in cues_raw):
        raise DataError("cues must map values of this field to phrases", path=path, field=f"{where}.cues")
    cues = tuple((_value_id(v), tuple(str(c).lower() for c in (p if isinstance(p, list) else [p])))
                 for v, p in cues_raw.items())
    return JudgmentField(name, str(raw.get("description", "")), tuple(v for v, _ in meanings), meanings, cues)


def _value_id(value: Any) -> str:
    """An enum value as stored: YAML's ``true:`` key is the value "true"."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _str_list(raw: dict[str, Any], key: str, path: Path, *, required: bool = True) -> tuple[str, ...]:
    if not required and not raw.get(key):
        return ()
    items = _require(raw, key, list, path)
    if not all(isinstance(x, str) and x for x in items):
        raise DataError("expected a list of non-empty strings", path=path, field=key)
    return tuple(items)


def load_task_file(path: str | Path) -> Task:
    """Parse and validate one task YAML file; DataError names the file and the field."""
    path = Path(path)
    raw = read_yaml_mapping(path)
    task_id = _require(raw, "task_id", str, path)
    try:
        check_task_id(task_id)
    except ValueError as exc:
        raise DataError(str(exc), path=path, field="task_id") from exc
    if path.stem != task_id:
        raise DataError(f"file name must be {task_id}.yaml", path=path, field="task_id")
    judgment = _require(raw, "judgment", dict, path)
    fields = tuple(_parse_field(f, i, path) for i, f in enumerate(_require(judgment, "fields", list, path)))
    keywords = tuple(k.lower() for k in _str_list(raw, "keywords", path))
    formulas = _str_list(raw, "formulas", path, required=False)
    policies = _str_list(raw, "policies", path, required=False)
    if not formulas and not policies:
        raise DataError("a task needs at least one formula or policy", path=path, field="policies")
    default_formula = str(raw.get("default_formula") or (formulas or policies)[0])
    if default_formula not in (*formulas, *policies):
        raise DataError(f"{default_formula!r} is not one of {[*formulas, *policies]}", path=path, field="default_formula")
    return Task(
        task_id=task_id,
        name=_require(raw, "name", str, path),
        description=str(raw.get("description", "")),
        group=int(TASK_ID_RE.match(task_id).group(1)),  # type: ignore[union-attr]
        perspective=str(raw.get("perspective", "")),
        keywords=tuple(dict.fromkeys(keywords)),
        fields=fields,
        excerpt_description=str(judgment.get("excerpt", "verbatim quote from the review, or empty")),
        prompt_version=str(_require(raw, "prompt_version", str, path)),
        prompt_template=_require(raw, "prompt", str, path),
        formulas=formulas,
        default_formula=default_formula,
        policies=policies,
        verdict_scale=_str_list(raw, "verdict_scale", path),
        source=str(path),
    )


@functools.lru_cache(maxsize=64)
def _folder_tasks(folder: Path, stamp: tuple = ()) -> tuple[Task, ...]:
    return tuple(load_task_file(path) for path in sorted(folder.glob("*.yaml"))) if folder.is_dir() else ()


def _stamp(folder: Path) -> tuple:
    return folder_stamps(folder, "*.yaml")




def _sort_key(task_id: str) -> tuple[int, str]:
    m = TASK_ID_RE.match(task_id)
    return (int(m.group(1)), m.group(2) or f"~{m.group(3)}") if m else (99, task_id)


def task_registry(ws: Workspace | None) -> Registry[Task]:
    """Every task, in group then letter order (topics after the letters of their group): the
    package's tasks, then the tasks of ``ws``'s ``tasks/`` folder (a workspace task cannot shadow a
    package one). ``ws=None`` means the package's tasks only: a caller always says which."""
    found: dict[str, Task] = {t.task_id: t for t in _folder_tasks(TASK_DATA_DIR)}
    if ws is not None:
        folder = ws.tasks_dir
        for t in _folder_tasks(folder, _stamp(folder)):
            found.setdefault(t.task_id, t)
    reg: Registry[Task] = Registry("task")
    for task_id in sorted(found, key=_sort_key):
        reg.add(found[task_id], name=task_id)
    return reg


def package_tasks() -> list[Task]:
    """The tasks shipped in ``core/tasks/data/tasks`` (no workspace involved)."""
    return sorted(_folder_tasks(TASK_DATA_DIR), key=lambda t: _sort_key(t.task_id))


def task_ids(ws: Workspace | None) -> list[str]:
    """Every registered task id, in group then letter order (G1a, G1b, …, G1_dietary, G2a, …)."""
    return task_registry(ws).names()


def list_tasks(ws: Workspace | None) -> list[Task]:
    """Every registered task, in group then letter order."""
    return list(task_registry(ws).values())


def get_task(task_id: str, ws: Workspace | None) -> Task:
    """The task ``task_id``; UnknownNameError (listing the valid ids) when it is not registered."""
    return task_registry(ws)[task_id]
