/* The release's pages, drawn from window.RELEASE (release-data.js) with vegaEmbed (vega.js).
   Every text from data goes into the page as a text node (never as HTML). Nothing is fetched. */
(function () {
  "use strict";
  const R = window.RELEASE, F = R.figures, META = R.meta;
  const PAGES = [["results", "Results"], ["gt", "Ground truth"], ["judges", "Judges and audits"],
                 ["claims", "Claims"], ["datasheet", "Datasheet"], ["files", "Files"]];
  const METRICS = [["ordinal_auprc", "ordinal AUPRC"], ["process_score", "process"],
                   ["consistency_score", "consistency"], ["accuracy", "accuracy"]];
  const PERCENT = {process_score: true, consistency_score: true};
  const drawn = {};

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "onclick") node.addEventListener("click", v);
      else if (k === "text") node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined) continue;
      node.appendChild(typeof kid === "string" || typeof kid === "number" ? document.createTextNode(String(kid)) : kid);
    }
    return node;
  }
  function fmt(metric, v) {
    if (v === null || v === undefined) return "N/A";
    return PERCENT[metric] ? v.toFixed(1) : v.toFixed(4);
  }
  function num(v, d) { return v === null || v === undefined ? "N/A" : (typeof v === "number" && !Number.isInteger(v) ? v.toFixed(d === undefined ? 3 : d) : String(v)); }
  function table(columns, rows, numeric) {
    return el("table", {}, el("thead", {}, el("tr", {}, columns.map(c => el("th", {}, c)))),
      el("tbody", {}, rows.map(r => el("tr", {}, r.map((c, i) => el("td", numeric && numeric[i] ? {class: "num"} : {}, c))))));
  }
  function chart(spec, key) {
    const box = el("div", {class: "chart", "data-chart": key});
    box._spec = spec;
    return box;
  }
  function drawCharts(section) {
    for (const box of section.querySelectorAll(".chart")) {
      if (box._drawn || !box._spec) continue;
      box._drawn = true;
      window.vegaEmbed(box, box._spec, {actions: false, renderer: "svg"}).then(() => box.setAttribute("data-drawn", "1"))
        .catch(e => { box.textContent = "chart error: " + e; console.error(e); });
    }
  }
  function copyBox(label, text) {
    const area = el("textarea", {readonly: "readonly"}); area.value = text;
    const button = el("button", {onclick: () => {
      area.select();
      const done = () => { button.textContent = "Copied"; };
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, () => { document.execCommand("copy"); done(); });
      else { document.execCommand("copy"); done(); }
    }}, label);
    return el("div", {}, button, area);
  }

  function scoreCell(run, m, status) {
    const s = run.scores[m];
    if (s.value === null) return el("td", {class: "num"}, "N/A");
    const value = m === "ordinal_auprc" ? run.auprc_text : fmt(m, s.value);
    return el("td", {class: "num"}, `${value} ${status || ""}`, el("br"),
      el("span", {class: "muted"}, `[${fmt(m, s.low)}, ${fmt(m, s.high)}]`));
  }
  function gtShort(r) {
    const stale = r.gt.stale_reasons.length ? " · STALE" : "";
    return el("span", {title: r.gt.description}, `${r.gt.origin || "none"} · version ${r.gt.version || "?"}${stale}`);
  }
  function resultsPage(root) {
    root.append(el("h2", {}, "Runs"), el("p", {class: "muted"},
      "Each run's scores recomputed from its answers and the GT it kept (ordinal AUPRC and accuracy as shares, process and consistency in points), with bootstrap 95 % intervals over restaurants and their badges (✓ above 75 %, ✗ at or below, ⚠ degenerate). Hover the GT for its lineage."));
    const t = table(["run", "method", "model", "K", "restaurants", ...METRICS.map(m => m[1]), "GT it was scored against"], []);
    t.setAttribute("id", "runs-table");
    for (const r of F.runs) {
      const status = {}; r.badges.forEach((b, i) => { status[METRICS[i][0]] = b.status; });
      t.querySelector("tbody").append(el("tr", {"data-run": r.run_id}, el("td", {class: "nowrap"}, r.run_id), el("td", {}, String(r.method)),
        el("td", {}, String(r.model)), el("td", {class: "num"}, num(r.k)), el("td", {class: "num"}, num(r.total)),
        METRICS.map(([m]) => scoreCell(r, m, status[m])), el("td", {}, gtShort(r))));
    }
    root.append(t);
    for (const r of F.runs) {
      const notes = [...r.gt.stale_reasons.map(x => "GT stale: " + x), ...r.badges.filter(b => b.note).map(b => b.metric + ": " + b.note),
        ...(r.stored_differs.length ? ["stored scores differ from the recomputed: " + r.stored_differs.join(", ")] : [])];
      if (notes.length) root.append(el("div", {class: "warn"}, el("b", {}, r.run_id + ": "), notes.join(" · ")));
    }
    for (const g of F.run_charts) {
      root.append(el("h3", {}, `${g.task} · ${g.policy} · ${g.dataset}: scores with 95 % intervals`), chart(g.scores, "scores"));
      if (g.k) root.append(el("h3", {}, "Each score against K per method"), chart(g.k, "k"));
      if (g.paired) root.append(el("h3", {}, "Paired differences to each K's baseline (points)"), chart(g.paired, "paired"));
    }
    root.append(el("h2", {}, "Paired comparisons"), el("p", {class: "muted"},
      "Run − baseline on the restaurants both scored with the same GT verdict; 'real' when the 95 % interval excludes 0. The per-restaurant tables are in tables/paired/ (CSV and Parquet)."));
    const claimBy = {};
    for (const c of F.claims) if (c.claim.kind === "paired") claimBy[c.claim.runs.join("|")] = c;
    for (const c of F.comparisons) {
      const rows2 = METRICS.map(([m, label]) => { const d = c.differences[m];
        return [label, fmt(m, d.a), fmt(m, d.b), fmt(m, d.difference), `[${fmt(m, d.low)}, ${fmt(m, d.high)}]`, d.low === null ? "N/A" : (d.excludes_zero ? "yes" : "no")]; });
      const base = `tables/paired/${c.run}__vs__${c.baseline}`;
      root.append(el("h3", {}, `${c.run} vs ${c.baseline} (K=${c.k}, ${c.n_common} paired, ${c.n_gt_differs} left out: GT differs)`),
        table(["metric", "baseline", "run", "difference", "95 % interval", "real"], rows2, [0, 1, 1, 1, 1, 0]),
        el("p", {class: "muted"}, Object.entries(c.buckets).map(([k, v]) => `${k} ${v}`).join(" · "), " · ",
          el("a", {href: base + ".csv"}, "CSV"), " ", el("a", {href: base + ".parquet"}, "Parquet")));
      const claim = claimBy[c.baseline + "|" + c.run];
      if (claim) root.append(claimBlock(claim));
    }
  }

  function claimBlock(c) {
    const base = String(META.base_url || "").replace(/\/$/, "");
    const md = `${c.statement} ([check this claim](${base}/results?claim=${c.token}))`;
    return el("div", {class: "claim"}, el("div", {}, c.statement),
      el("p", {class: "muted"}, "Check it: ", el("code", {}, "workbench claim check " + c.token.slice(0, 24) + "…")),
      copyBox("Copy claim", md));
  }
  function claimsPage(root) {
    root.append(el("h2", {}, "Claims"), el("p", {class: "muted"},
      "Each claim pins its inputs (the runs' answers, the GT's sha256 and version). `workbench claim check CLAIM` recomputes it in a workspace (this release's data/ folder is one) and says holds, changed or inputs changed; `workbench release verify` checks them all."));
    F.claims.forEach(c => root.append(claimBlock(c)));
  }

  function gtPage(root) {
    root.append(el("h2", {}, "Ground truth"));
    if (!F.gt.length) { root.append(el("p", {}, "No ground truth in this release.")); return; }
    const pick = el("select", {id: "gt-pick"});
    F.gt.forEach((e, i) => pick.append(el("option", {value: String(i)}, `${e.task} · ${e.definition} (${e.dataset})`)));
    const body = el("div", {});
    pick.addEventListener("change", () => showGT(body, F.gt[+pick.value]));
    root.append(el("label", {}, "Task and definition ", pick), body);
    showGT(body, F.gt[0]);
  }
  function lineageRows(e) {
    return e.ks.map(k => { const l = e.lineage[k];
      return [k, `${l.definition.name} (${l.definition.kind}, sha256 ${l.definition.sha256.slice(0, 12)}…)`,
        `${l.judge} (${l.n_judgments} judgments, sha256 ${l.judgments_sha256.slice(0, 12)}…)`,
        `${l.n_overrides} (${l.override_ids.join(", ") || "none"})`, l.version, e.verdicts_sha256[k].slice(0, 16) + "…"]; });
  }
  function showGT(body, e) {
    body.replaceChildren();
    const distRows = e.distribution.map(d => [d.k, ...e.scale.map(v => num(d.counts[v])), num(d.total), num(e.short_of_k[d.k] || 0)]);
    body.append(el("p", {}, e.description), el("p", {class: "muted"}, `GT judge ${e.judge}; every verdict follows from the judgments and overrides in data/ (lineage below).`),
      el("h3", {}, "Distribution by K"), table(["K", ...e.scale, "total", "short of K"], distRows, [0, ...e.scale.map(() => 1), 1, 1]),
      chart(e.chart, "dist"), el("p", {}, `Restaurants whose verdict changes with K: ${e.flips.restaurants_changing}; ` +
        e.flips.steps.map(s => `${s.from}→${s.to}: ${s.changes}`).join(", ")),
      el("h3", {}, "Lineage of each K"), table(["K", "definition", "judge", "overrides in force", "version", "verdicts sha256"], lineageRows(e)));
    const claim = F.claims.find(c => c.claim.kind === "gt" && c.claim.task === e.task && c.claim.definition === e.definition && c.claim.dataset === e.dataset);
    if (claim) body.append(claimBlock(claim));
    body.append(el("h3", {}, "Restaurant × K verdicts"));
    grid(body, e);
    drawCharts(body);
  }
  function grid(body, e) {
    const rest = F.restaurants[e.dataset], overrides = F.overrides[e.dataset + "/" + e.task] || [];
    const search = el("input", {type: "search", placeholder: "find a restaurant"}), flipsOnly = el("input", {type: "checkbox"});
    const holder = el("div", {}), detail = el("div", {}), pager = el("div", {class: "pager"});
    let page = 0;
    const rows = () => { const q = search.value.toLowerCase();
      return rest.business_ids.map((b, i) => i).filter(i => (!q || String(rest.names[i]).toLowerCase().includes(q)) &&
        (!flipsOnly.checked || new Set(e.ks.map(k => e.verdicts[k][i])).size > 1)); };
    function draw() {
      const all = rows(), size = 50, pages = Math.max(1, Math.ceil(all.length / size));
      page = Math.min(page, pages - 1);
      const shown = all.slice(page * size, page * size + size);
      const t = table(["restaurant", ...e.ks.map(k => "K=" + k)], []);
      const tbody = t.querySelector("tbody");
      for (const i of shown) {
        const tr = el("tr", {class: "pick"}, el("td", {}, String(rest.names[i])), e.ks.map(k => {
          const c = e.verdicts[k][i], s = e.scores[k][i];
          return el("td", {}, el("span", {class: "cell", style: `background:${c < 0 ? "#e9ecef" : (e.colours[c] || "#868e96")}33; border-left: 4px solid ${c < 0 ? "#adb5bd" : (e.colours[c] || "#868e96")}`},
            (c < 0 ? "none" : e.scale[c]) + (e.scored && s !== null ? ` (${s})` : "")));
        }));
        tr.addEventListener("click", () => { for (const x of tbody.children) x.classList.remove("selected"); tr.classList.add("selected"); showRestaurant(detail, e, i, overrides); });
        tbody.append(tr);
      }
      pager.replaceChildren(el("button", {onclick: () => { page = Math.max(0, page - 1); draw(); }}, "‹ previous"),
        ` page ${page + 1} of ${pages} (${all.length} restaurants) `, el("button", {onclick: () => { page += 1; draw(); }}, "next ›"));
      holder.replaceChildren(t);
    }
    search.addEventListener("input", () => { page = 0; draw(); });
    flipsOnly.addEventListener("change", () => { page = 0; draw(); });
    body.append(search, el("label", {}, flipsOnly, " verdict changes with K only"), pager, holder, detail);
    draw();
  }
  function showRestaurant(detail, e, i, overrides) {
    const rest = F.restaurants[e.dataset], bid = rest.business_ids[i];
    const mine = overrides.filter(o => o.business_id === bid && o.status === "active");
    const rows = e.ks.map(k => { const c = e.verdicts[k][i], l = e.lineage[k];
      const inForce = mine.filter(o => k === "all" || (o.idx !== null && o.idx < +k));
      return [k, c < 0 ? "none" : e.scale[c], num(e.scores[k][i]), `${l.definition.name} · ${l.judge} · version ${l.version}`,
        inForce.map(o => `${o.override_id} (review idx ${o.idx}: ${Object.entries(o.corrected || {}).map(([f, v]) => f + "=" + v).join(", ")}; ${o.author}: ${o.reason})`).join("; ") || "none"]; });
    detail.replaceChildren(el("h3", {}, `${rest.names[i]} (${bid}), ${rest.n_reviews[i]} reviews stored`),
      table(["K", "verdict", "score", "definition · judge · GT version", "overrides in force on its reviews"], rows));
  }

  function judgesPage(root) {
    root.append(el("h2", {}, "Judge agreement"));
    if (!F.judges.length) root.append(el("p", {}, "No second judge judged the same reviews."));
    for (const j of F.judges) {
      root.append(el("h3", {}, `${j.other} against the GT judge ${j.gt_judge} (${j.task}, ${j.dataset})`),
        el("p", {class: "muted"}, `${j.n_both} reviews judged by both; ${j.only_gt_judge} only by ${j.gt_judge}, ${j.only_other} only by ${j.other}.`),
        table(["field", "agreement", "Cohen's κ"], Object.entries(j.fields).map(([f, v]) => [f, num(v.agreement), num(v.kappa)]), [0, 1, 1]),
        table(["definition", "K", "restaurants", "verdict agreement", "κ", "differing", "mean |score difference|"],
          j.verdicts.map(v => [v.definition, v.k, num(v.n), num(v.agreement), num(v.kappa), num(v.differing), num(v.mean_abs_score_diff)]), [0, 0, 1, 1, 1, 1, 1]));
    }
    root.append(el("h2", {}, "Judge audits"));
    if (!F.audits.length) root.append(el("p", {}, "No judge audit is recorded in this workspace."));
    for (const a of F.audits) {
      root.append(el("h3", {}, `${a.title} (${a.judge}, ${a.task}, ${a.dataset})`),
        table(["figure", "value"], Object.entries(a.figures).map(([k, v]) => [k, num(v)]), [0, 1]), ...a.notes.map(n => el("p", {}, n)));
    }
  }

  function datasheetPage(root) {
    const d = R.datasheet;
    root.append(el("h2", {}, d.title), el("p", {class: "muted"}, "Also in DATASHEET.md beside this page."));
    for (const s of d.sections) {
      root.append(el("h2", {}, s.title));
      for (const b of s.blocks) {
        if (b.h) root.append(el("h3", {}, b.h));
        else if (b.p) root.append(el("p", {}, b.p));
        else if (b.list) root.append(el("ul", {}, b.list.map(x => el("li", {}, x))));
        else if (b.table) root.append(table(b.table.columns, b.table.rows));
      }
    }
  }
  function filesPage(root) {
    root.append(el("h2", {}, "Files"), el("p", {class: "muted"},
      "Every file of this release with its sha256 (manifest.json). `workbench release verify DIR` checks them and recomputes every number shown here from data/."));
    root.append(table(["file", "bytes", "sha256"], R.files.map(f => [el("a", {href: f.path}, f.path), num(f.bytes), f.sha256]), [0, 1, 0]));
  }

  const BUILDERS = {results: resultsPage, gt: gtPage, judges: judgesPage, claims: claimsPage, datasheet: datasheetPage, files: filesPage};
  function show(name) {
    if (!BUILDERS[name]) name = "results";
    for (const [id] of PAGES) {
      document.getElementById(id).classList.toggle("active", id === name);
      document.getElementById("nav-" + id).classList.toggle("active", id === name);
    }
    const section = document.getElementById(name);
    if (!drawn[name]) { drawn[name] = true; BUILDERS[name](section); }
    drawCharts(section);
  }
  document.getElementById("title").textContent = META.title;
  document.title = META.title;
  document.getElementById("subtitle").textContent =
    `${F.runs.length} runs · ${F.gt.length} ground truths · datasets ${META.datasets.join(", ")} · built by Scale Workbench ${META.workbench}`;
  const nav = document.getElementById("nav");
  for (const [id, label] of PAGES) nav.append(el("a", {href: "#" + id, id: "nav-" + id}, label));
  window.addEventListener("hashchange", () => show(location.hash.slice(1)));
  show(location.hash.slice(1));
  document.body.setAttribute("data-ready", "1");
})();
