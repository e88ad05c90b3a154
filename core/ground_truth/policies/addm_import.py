"""Import ADDM policy YAMLs (with their term libraries) as project policies and tasks (SPEC §3.3b).

One ADDM file ``G1/dietary/V2.yaml`` becomes ``policies/G1_dietary_V2.yaml`` in the workspace (the
project's policy format, read by :mod:`core.ground_truth.policies.loader`; the conversion is
:mod:`core.ground_truth.policies.addm_convert`) and its topic becomes the task
``tasks/G1_dietary.yaml``: the judgment fields are the policy's term references (values and
meanings from the term libraries) plus the relevance flag ``is_relevant``, the verdict scale is the
policy's ordered ``decision.verdicts``. Where ADDM's code departs from its policy text the text wins
(see docs/policies.md), unless the import asks for ADDM's code's reading (``addm_code=True``, the CLI's
``--as-addm-code``). Nothing is written for a file that fails. A policy whose id is a built-in one
(ADDM's current ``G1/allergy/V1–V3`` reuse the ids of the built-ins taken from its earlier commit) is
imported and is in force instead of the built-in in this workspace, which the report notes; one whose
content equals the built-in's is not written (a no-op, noted).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from core.base.errors import DataError
from core.base.files import read_yaml_mapping, write_text_atomic
from core.base.settings import require_writable
from core.ground_truth.policies import Policy
from core.ground_truth.policies.addm_convert import RELEVANCE_FIELD, Imported, convert_policy
from core.ground_truth.policies.addm_terms import Terms
from core.ground_truth.policies.loader import builtin_policy_ids, get_policy, load_policy_file
from core.tasks import TASK_ID_RE, load_task_file
from core.workspace import Workspace


def _policy_files(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(x for x in p.rglob("*.yaml") if x.is_file()))
        elif p.exists():
            out.append(p)
        else:
            raise DataError("not found", path=p)
    return out


def task_document(topic: str, items: list[Imported], existing: Mapping[str, Any] | None) -> dict[str, Any]:
    """The task YAML of a topic: the union of its policies' fields, keywords, prompt and scale."""
    fields: dict[str, dict[str, Any]] = {}
    policies: list[str] = list((existing or {}).get("policies") or [])
    keywords: list[str] = list((existing or {}).get("keywords") or [])
    for f in (existing or {}).get("judgment", {}).get("fields") or []:
        fields[f["name"]] = {k: v for k, v in f.items() if k != "name"}
    for item in items:
        for name, spec in item.fields.items():
            fields.setdefault(name, spec)
        policies.append(item.policy_id)
        keywords.extend(item.keywords)
    fields[RELEVANCE_FIELD] = {
        "description": "Whether the review is relevant to this topic at all (only relevant reviews count).",
        "values": {"true": "the review discusses the topic", "false": "the review does not discuss the topic"},
    }
    last = items[-1]
    title = str(last.overview.get("title") or topic)
    m = TASK_ID_RE.match(topic)
    return {
        "task_id": topic, "name": title, "description": str(last.overview.get("purpose") or title).strip(),
        "group": int(m.group(1)) if m else 0, "perspective": f"imported from ADDM ({topic})",
        "keywords": list(dict.fromkeys(keywords)) or [topic.split("_", 1)[1]],
        "judgment": {
            "fields": [{"name": n, **spec} for n, spec in fields.items()],
            "excerpt": 'A verbatim quote from the review supporting the judgment, or "" when nothing is relevant.',
        },
        "prompt_version": "addm-v1",
        "prompt": PROMPT.format(title=title.replace("$", "$$"),
                                definition=str(last.overview.get("incident_definition") or "").strip().replace("$", "$$")),
        "policies": sorted(dict.fromkeys(policies)),
        "verdict_scale": list(last.policy["verdicts"]),
    }


PROMPT = """You are judging ONE customer review of the restaurant "$restaurant_name" (categories: $categories)
for a {title}. Judge only what the review itself says; do not guess.

{definition}

$schema_text

Answer with one JSON object with every field above and an excerpt (verbatim, at most two
sentences, or "").

Review:
\"\"\"
$review_text
\"\"\"
"""


@dataclass
class ImportReport:
    imported: list[str] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    replaces_builtin: list[str] = field(default_factory=list)  # imported ids now in force instead of a built-in
    unchanged: list[str] = field(default_factory=list)  # ids whose content equals the built-in's: not written
    code_differs: dict[str, list[str]] = field(default_factory=dict)  # read as the text: where ADDM's code differs

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document: imported policy ids (those replacing a built-in listed again),
        ids not written because they equal the built-in, where ADDM's code reads a policy otherwise than
        its text (per policy id; empty with ``addm_code``), and errors per file."""
        return {"imported": self.imported, "replaces_builtin": self.replaces_builtin, "unchanged": self.unchanged,
                "code_differs": self.code_differs, "errors": self.errors}


def same_content(a: Policy, b: Policy) -> bool:
    """True when two policies define the same thing (where their files live and came from aside)."""
    def bare(p: Policy) -> Policy:
        return replace(p, source="", origin="", replaces_builtin=False)

    return bare(a) == bare(b)


def import_policies(ws: Workspace, paths: Iterable[str | Path], terms_dir: str | Path, *,
                    addm_code: bool = False) -> ImportReport:
    """Import ADDM policy files (or folders of them) into ``ws``: ``policies/{id}.yaml`` and one
    ``tasks/{topic}.yaml`` per topic. A file that fails is reported and leaves nothing behind.
    ``addm_code``: read each file as ADDM's code computes it rather than as its text says
    (:func:`core.ground_truth.policies.addm_convert.convert_policy`)."""
    require_writable("import policies")

    terms = Terms(terms_dir)
    report = ImportReport()
    by_topic: dict[str, list[Imported]] = {}
    for path in _policy_files(paths):
        try:
            item = convert_policy(path, terms, addm_code=addm_code)
        except DataError as exc:
            report.errors.append({"file": str(path), "error": str(exc)})
            continue
        by_topic.setdefault(item.topic, []).append(item)
        if item.departures and not addm_code:
            report.code_differs[item.policy_id] = item.departures
        report.warnings.extend(item.warnings)
    policy_dir, task_dir = ws.policies_dir, ws.tasks_dir
    builtins = set(builtin_policy_ids())
    for topic, items in by_topic.items():
        task_path = task_dir / f"{topic}.yaml"
        existing = read_yaml_mapping(task_path) if task_path.exists() else None  # depth and aliases bounded
        written: list[Imported] = []
        for item in items:
            target = policy_dir / f"{item.policy_id}.yaml"
            text = f"# Imported from {item.policy['origin']} by `python -m core policies import`.\n" + _dump(item.policy)
            try:
                built = _validate(text, target, load_policy_file)
            except DataError as exc:
                report.errors.append({"file": str(item.policy["origin"]), "error": str(exc)})
                continue
            if item.policy_id in builtins:
                if same_content(built, get_policy(item.policy_id, None)):
                    report.unchanged.append(item.policy_id)
                    continue
                report.replaces_builtin.append(item.policy_id)
            write_text_atomic(target, text)
            written.append(item)
            report.imported.append(item.policy_id)
        if written:
            doc = _dump(task_document(topic, written, existing))
            _validate(doc, task_path, load_task_file)
            write_text_atomic(task_path, doc)
            report.tasks.append(topic)
    return report


class _PlainDumper(yaml.SafeDumper):
    """YAML without anchors/aliases: every list written out where it is used."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _dump(doc: Any) -> str:
    return yaml.dump(doc, Dumper=_PlainDumper, sort_keys=False, allow_unicode=True, width=110)


def _validate(text: str, target: Path, loader: Any) -> Any:
    """Load ``text`` as if it were ``target`` (from a scratch copy) so a bad result is never written;
    returns what ``loader`` made of it."""
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / target.name
        scratch.write_text(text, encoding="utf-8")
        return loader(scratch)
