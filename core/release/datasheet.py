"""The release's datasheet, filled from the workspace's own records (its figures): how the GT was
made, how good the judge is, how sensitive the verdicts are to K, what the runs measured, and the
known limitations.

:func:`datasheet` gives sections of blocks (a paragraph, a list or a table of plain text), which
:func:`to_markdown` writes as ``DATASHEET.md`` (text from data escaped) and the page draws as text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.datasets.review_text import md_escape

Block = dict[str, Any]
OFFLINE_JUDGES = ("heuristic", "offline", "cues")


def _num(x: Any, digits: int = 3) -> str:
    if x is None:
        return "N/A"
    if isinstance(x, bool) or not isinstance(x, int | float):
        return str(x)
    return f"{x:,}" if isinstance(x, int) else f"{x:.{digits}f}"


def _table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Block:
    return {"table": {"columns": list(columns), "rows": [[_num(c) if not isinstance(c, str) else c for c in r] for r in rows]}}


def _gt_section(f: Mapping[str, Any]) -> list[Block]:
    blocks: list[Block] = []
    for t in f["tasks"]:
        blocks.append({"h": f"{t['task']}: {t['name']} (dataset {t['dataset']})"})
        blocks.append({"p": t["description"]})
        blocks.append({"p": f"Keywords (a review is judged when its text contains one): {', '.join(t['keywords'])}."})
        blocks.append({"p": f"Judge: {t['judge']} ({_num(t['judgments'])} judgments, {_num(t['parse_errors'])} parse "
                            f"errors; prompt versions {', '.join(t['prompt_versions']) or 'unknown'}). Fields judged: "
                            f"{', '.join(t['fields'])}. Other judges in the workspace: "
                            f"{', '.join(j for j in t['judges'] if j != t['judge']) or 'none'}."})
        entries = [e for e in f["gt"] if (e["dataset"], e["task"]) == (t["dataset"], t["task"])]
        blocks.append(_table(["definition", "what it computes", "K", "lineage version at the largest K"],
                             [[e["definition"], e["description"], ", ".join(e["ks"]), e["lineage"][e["ks"][-1]]["version"]]
                              for e in entries]))
        overrides = f["overrides"].get(f"{t['dataset']}/{t['task']}") or []
        active = [o for o in overrides if o.get("status") == "active"]
        blocks.append({"p": f"Human overrides: {len(active)} in force, {len(overrides) - len(active)} reverted or replaced. "
                            "An override corrects judgment fields and is applied to GT at every K and definition."})
        if overrides:
            blocks.append(_table(["override", "restaurant", "review idx", "corrected", "by", "reason", "status"],
                                 [[o["override_id"], o["business_id"], _num(o.get("idx")),
                                   ", ".join(f"{k}={v}" for k, v in (o.get("corrected") or {}).items()),
                                   str(o.get("author") or ""), str(o.get("reason") or ""), str(o.get("status") or "")]
                                  for o in overrides]))
    return blocks


def _judge_section(f: Mapping[str, Any]) -> list[Block]:
    blocks: list[Block] = []
    for j in f["judges"]:
        blocks.append({"h": f"{j['other']} against the GT judge {j['gt_judge']} ({j['task']}, {j['dataset']})"})
        blocks.append({"p": f"{_num(j['n_both'])} reviews judged by both; {_num(j['only_gt_judge'])} only by "
                            f"{j['gt_judge']}, {_num(j['only_other'])} only by {j['other']}."})
        blocks.append(_table(["field", "agreement", "Cohen's κ"],
                             [[name, v["agreement"], v["kappa"]] for name, v in j["fields"].items()]))
        blocks.append(_table(["definition", "K", "restaurants", "verdict agreement", "κ", "differing"],
                             [[v["definition"], v["k"], v["n"], v["agreement"], v["kappa"], v["differing"]]
                              for v in j["verdicts"]]))
    if not f["judges"]:
        blocks.append({"p": "No second judge judged the same reviews: the GT judge's agreement with another judge is not measured."})
    for a in f["audits"]:
        blocks.append({"h": f"Audit: {a['title']} ({a['judge']}, {a['task']}, {a['dataset']})"})
        blocks.append(_table(["figure", "value"], [[k, v] for k, v in a["figures"].items()]))
        blocks.extend({"p": n} for n in a["notes"])
    if not f["audits"]:
        blocks.append({"p": "No judge audit is recorded in this workspace (no audit provider contributed one)."})
    return blocks


def _k_section(f: Mapping[str, Any]) -> list[Block]:
    rows = []
    for e in f["gt"]:
        for d in e["distribution"]:
            counts = ", ".join(f"{n} {v}" for v, n in d["counts"].items())
            rows.append([f"{e['task']} · {e['definition']}", d["k"], counts, e["short_of_k"].get(d["k"], 0)])
    flips = [[f"{e['task']} · {e['definition']}", e["flips"]["restaurants_changing"],
              "; ".join(f"{s['from']}→{s['to']}: {s['changes']}" for s in e["flips"]["steps"])] for e in f["gt"]]
    return [{"p": "Verdicts by K (K = the newest reviews a restaurant's GT uses; a restaurant with fewer reviews "
                  "uses the reviews it has, counted as short of K)."},
            _table(["definition", "K", "verdicts", "short of K"], rows),
            {"p": "Verdict flips: restaurants whose verdict is not the same at every K, and the changes between "
                  "neighbouring K."},
            _table(["definition", "restaurants changing", "changes between neighbouring K"], flips)]


def _pct(metric: str, v: Any) -> str:
    if v is None:
        return "N/A"
    return f"{v:.1f}" if metric in ("process_score", "consistency_score") else f"{v:.4f}"


def _runs_section(f: Mapping[str, Any]) -> list[Block]:
    rows = []
    for r in f["runs"]:
        s = r["scores"]
        cells = [f"{_pct(m, s[m]['value'])} [{_pct(m, s[m]['low'])}, {_pct(m, s[m]['high'])}]"
                 for m in ("ordinal_auprc", "process_score", "consistency_score", "accuracy")]
        rows.append([r["run_id"], str(r["method"]), str(r["model"]), _num(r["k"]), _num(r["total"]), *cells,
                     r["gt"]["description"]])
    pairs = [[c["run"], c["baseline"], _num(c["k"]), _num(c["n_common"]),
              f"{_pct('ordinal_auprc', c['differences']['ordinal_auprc']['difference'])} "
              f"[{_pct('ordinal_auprc', c['differences']['ordinal_auprc']['low'])}, "
              f"{_pct('ordinal_auprc', c['differences']['ordinal_auprc']['high'])}]",
              "yes" if c["differences"]["ordinal_auprc"]["excludes_zero"] else "no"] for c in f["comparisons"]]
    return [{"p": "Each run answered every restaurant of its sample from the first K reviews; its answers are scored "
                  "against the GT it kept (ordinal AUPRC and accuracy as shares, process and consistency in points, "
                  "bootstrap 95 % intervals over restaurants)."},
            _table(["run", "method", "model", "K", "restaurants", "ordinal AUPRC", "process", "consistency",
                    "accuracy", "scored against"], rows),
            {"p": "Paired comparisons (run − baseline, paired bootstrap over the restaurants both runs scored with the "
                  "same GT verdict; 'real' = the interval excludes 0):"},
            _table(["run", "baseline", "K", "paired", "ordinal AUPRC difference", "real"], pairs)]


def limitations(f: Mapping[str, Any]) -> list[str]:
    """The known limitations the figures themselves show."""
    out = []
    for t in f["tasks"]:
        if str(t["judge"]).startswith(OFFLINE_JUDGES):
            out.append(f"{t['task']}: the GT judge {t['judge']} is an offline rule system, not a human or an LLM; "
                       "its verdicts are as good as its rules (see the judge's agreement above).")
    if not f["audits"]:
        out.append("No judge audit against human labels is included.")
    for r in f["runs"]:
        if r["gt"]["stale_reasons"]:
            out.append(f"Run {r['run_id']} was scored against a GT that is no longer current: "
                       + "; ".join(r["gt"]["stale_reasons"]) + ". Its scores describe that earlier GT.")
        if r["stored_differs"]:
            out.append(f"Run {r['run_id']}: the scores in its results.json ({', '.join(r['stored_differs'])}) are not "
                       "those recomputed from its answers; the release shows the recomputed ones.")
        out.extend(f"Run {r['run_id']}: {b['metric']}: {b['note']}" for b in r["badges"] if b["note"])
        out.extend(f"Run {r['run_id']}: AP at ≥ {t['level']} is undefined: {t['reason']}" for t in r["thresholds"]
                   if t["reason"])
    for e in f["gt"]:
        short = {k: n for k, n in e["short_of_k"].items() if n}
        if short:
            out.append(f"{e['task']} · {e['definition']}: restaurants short of K: "
                       + ", ".join(f"{n} at K={k}" for k, n in short.items()) + ".")
    out.append("The data folder carries the review texts of the datasets (needed to recompute snippet validity); "
               "the source data's licence applies to them.")
    return out


def datasheet(f: Mapping[str, Any], meta: Mapping[str, Any]) -> dict[str, Any]:
    """The datasheet of a release from its figures and ``release.json`` (title, datasets)."""
    overview = [{"p": f"{meta['title']}: {len(f['runs'])} runs on {', '.join(meta['datasets']) or 'no dataset'}, "
                      f"{len(f['gt'])} ground truths (task × definition, each at several K). Built by Scale Workbench "
                      f"{meta.get('workbench')}."},
                _table(["dataset", "restaurants"], [[d, len(r["business_ids"])] for d, r in f["restaurants"].items()])]
    return {"title": f"Datasheet: {meta['title']}", "sections": [
        {"title": "Overview", "blocks": overview},
        {"title": "How the ground truth was made", "blocks": _gt_section(f)},
        {"title": "How good the judge is", "blocks": _judge_section(f)},
        {"title": "K sensitivity", "blocks": _k_section(f)},
        {"title": "What the runs measured", "blocks": _runs_section(f)},
        {"title": "Known limitations", "blocks": [{"list": limitations(f)}]},
    ]}


def _md_cell(text: str) -> str:
    return md_escape(text).replace("\n", " ")


def to_markdown(sheet: Mapping[str, Any]) -> str:
    """``DATASHEET.md``: every text from data escaped, tables as Markdown tables."""
    lines = [f"# {_md_cell(sheet['title'])}", ""]
    for section in sheet["sections"]:
        lines += [f"## {_md_cell(section['title'])}", ""]
        for block in section["blocks"]:
            if "h" in block:
                lines += [f"### {_md_cell(block['h'])}", ""]
            elif "p" in block:
                lines += [_md_cell(block["p"]), ""]
            elif "list" in block:
                lines += [f"- {_md_cell(item)}" for item in block["list"]] + [""]
            else:
                t = block["table"]
                lines.append("| " + " | ".join(_md_cell(c) for c in t["columns"]) + " |")
                lines.append("|" + "---|" * len(t["columns"]))
                lines += ["| " + " | ".join(_md_cell(str(c)) for c in row) + " |" for row in t["rows"]]
                lines.append("")
    return "\n".join(lines)
