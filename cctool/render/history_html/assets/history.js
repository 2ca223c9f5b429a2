/* cctool history page: the call-path list, the trend chart of the selected path, and the
   run a clicked point belongs to (metadata and call-path tree). No network. */
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("cctool-history-data").textContent);
  const P = D.paths, R = D.runs, N = R.run.length, M = P.path.length;
  const NS = "http://www.w3.org/2000/svg";
  const unit = D.unit && !CCTValues.carriesUnit(D.unit) ? " " + D.unit : ""; // 8.254 ms says it
  // the values spell their own unit (8.254 ms): a bracketed unit would contradict the ticks
  const metricUnit = D.metric + (D.unit && !CCTValues.carriesUnit(D.unit) ? " [" + D.unit + "]" : "");
  const state = { path: -1, run: -1 };
  const $ = (id) => document.getElementById(id);

  // Values are spelled as on every face of cctool (values.js).
  function fmt(v) {
    return v === null || v === undefined || !isFinite(v) ? "-" : CCTValues.format(v, D.unit);
  }
  function pct(v) {
    if (v === null || v === undefined || !isFinite(v)) return "-";
    return (v > 0 ? "+" : "") + CCTValues.percent(v * 100);
  }
  function sharePct(f) {
    return CCTValues.percent(f * 100);
  }
  function el(tag, attrs, text) {
    const e = tag.startsWith("svg:") ? document.createElementNS(NS, tag.slice(4))
      : document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function runLabel(j) {
    const c = R.commit[j] ? String(R.commit[j]).slice(0, 12) : R.run[j];
    return c + (R.date[j] ? " · " + R.date[j] : "");
  }
  function extent(ys) {
    let lo = Infinity, hi = -Infinity;
    for (const y of ys) if (y !== null) { if (y < lo) lo = y; if (y > hi) hi = y; }
    if (lo === Infinity) return [0, 1];
    if (lo === hi) { const d = Math.abs(lo) * 0.05 || 1; return [lo - d, hi + d]; }
    return [lo, hi];
  }

  // ---------------------------------------------------------------- the list
  function spark(ys, steps) {
    const w = 120, h = 22, svg = el("svg:svg", { width: w, height: h, class: "spark" });
    const [lo, hi] = extent(ys);
    const x = (j) => (N > 1 ? (j / (N - 1)) * (w - 2) + 1 : w / 2);
    const y = (v) => h - 2 - ((v - lo) / (hi - lo)) * (h - 4);
    let pts = [];
    const flush = () => {
      if (pts.length === 1) { const [a, b] = pts[0].split(","); svg.appendChild(el("svg:circle", { cx: a, cy: b, r: 1.5, class: "dot" })); }
      else if (pts.length) svg.appendChild(el("svg:polyline", { points: pts.join(" ") }));
      pts = [];
    };
    ys.forEach((v, j) => { if (v === null) flush(); else pts.push(x(j).toFixed(1) + "," + y(v).toFixed(1)); });
    flush();
    for (const at of steps) {
      const xx = ((x(at - 1) + x(at)) / 2).toFixed(1);
      svg.appendChild(el("svg:line", { x1: xx, x2: xx, y1: 0, y2: h, class: "mark" }));
    }
    return svg;
  }
  function buildList() {
    const ol = $("list");
    for (let i = 0; i < M; i++) {
      const li = el("li", { tabindex: "0", "data-i": i, title: P.path[i] });
      const name = el("span", { class: "pname" });
      const sep = CCTValues.rules.path;
      const parts = P.path[i].split(sep);
      const leaf = parts.pop();
      if (parts.length) name.appendChild(el("span", { class: "prefix" }, "\u200e" + parts.join(sep) + sep + "\u200e"));
      name.appendChild(el("b", {}, leaf));
      if (P.steps[i].length) name.appendChild(el("span", { class: "flag" }, "step"));
      if (P.trend[i] !== null) name.appendChild(el("span", { class: "flag" }, "trend"));
      li.appendChild(name);
      li.appendChild(spark(P.series[i], P.steps[i]));
      li.appendChild(el("span", { class: "num" }, fmt(P.last[i])));
      const c = P.change[i];
      li.appendChild(el("span", { class: "num " + (c > 0.005 ? "up" : c < -0.005 ? "down" : "") }, pct(c)));
      li.addEventListener("click", () => selectPath(i));
      li.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") { selectPath(i); e.preventDefault(); }
        else if (e.key === "ArrowDown" && i + 1 < M) { ol.children[i + 1].focus(); selectPath(i + 1); e.preventDefault(); }
        else if (e.key === "ArrowUp" && i > 0) { ol.children[i - 1].focus(); selectPath(i - 1); e.preventDefault(); }
      });
      ol.appendChild(li);
    }
    $("list-foot").textContent = M + " of " + D.selected + " selected call paths shown" +
      (D.hidden ? " (the " + M + " of largest median; --top, --path)" : "") +
      (D.checked ? " · steps and trends as history check finds them" +
        (D.checked.from ? " in the last " + D.checked.runs + " runs" : "") +
        (D.checked.notes.length ? " (" + D.checked.notes.join("; ") + ")" : "") : "");
  }

  // ---------------------------------------------------------------- the chart
  let geom = null;
  function drawChart() {
    const svg = $("chart");
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const i = state.path;
    if (i < 0) return;
    const W = svg.clientWidth || 800, H = svg.clientHeight || 300;
    const ys = P.series[i];
    let [lo, hi] = extent(ys);
    const pad = (hi - lo) * 0.08; lo -= pad; hi += pad;
    const tickValues = [0, 1, 2, 3, 4].map((k) => lo + ((hi - lo) * k) / 4);
    // room on the left for the widest tick label and, beyond it, the rotated axis label
    const widest = Math.max(...tickValues.map((v) => fmt(v).length));
    const m = { l: Math.max(64, 30 + Math.ceil(widest * 7)), r: 14, t: 12, b: 34 };
    const X = (j) => m.l + (N > 1 ? (j / (N - 1)) * (W - m.l - m.r) : (W - m.l - m.r) / 2);
    const Y = (v) => m.t + (1 - (v - lo) / (hi - lo)) * (H - m.t - m.b);
    geom = { X, Y, m, W, H };
    const axis = el("svg:g", { class: "axis" });
    for (const v of tickValues) {
      const yy = Y(v);
      axis.appendChild(el("svg:line", { x1: m.l, x2: W - m.r, y1: yy, y2: yy, class: "grid" }));
      axis.appendChild(el("svg:text", { x: m.l - 6, y: yy + 4, "text-anchor": "end" }, fmt(v)));
    }
    const ticks = Math.min(N, 8);
    for (let k = 0; k < ticks; k++) {
      const j = ticks > 1 ? Math.round((k * (N - 1)) / (ticks - 1)) : 0;
      const t = el("svg:text", { x: X(j), y: H - m.b + 16, "text-anchor": k === 0 ? "start" : k === ticks - 1 ? "end" : "middle" },
        R.commit[j] ? String(R.commit[j]).slice(0, 10) : "#" + (j + 1));
      axis.appendChild(t);
    }
    axis.appendChild(el("svg:text", { x: m.l, y: H - 2 }, "runs in recorded order (" + N + "), oldest left"));
    const yl = el("svg:text", { x: 12, y: m.t + (H - m.t - m.b) / 2, "text-anchor": "middle",
      transform: "rotate(-90 12 " + (m.t + (H - m.t - m.b) / 2) + ")" }, metricUnit);
    axis.appendChild(yl);
    svg.appendChild(axis);
    // levels between change points (the means the step test compares)
    const cuts = [0, ...P.steps[i], N];
    for (let k = 0; k + 1 < cuts.length; k++) {
      if (!P.steps[i].length) break;
      let s = 0, n = 0;
      for (let j = cuts[k]; j < cuts[k + 1]; j++) if (ys[j] !== null) { s += ys[j]; n++; }
      if (n) svg.appendChild(el("svg:line", { x1: X(cuts[k]), x2: X(cuts[k + 1] - 1), y1: Y(s / n), y2: Y(s / n), class: "level" }));
    }
    let pts = [];
    const flush = () => { if (pts.length) svg.appendChild(el("svg:polyline", { points: pts.join(" "), class: "line" })); pts = []; };
    ys.forEach((v, j) => { if (v === null) flush(); else pts.push(X(j).toFixed(1) + "," + Y(v).toFixed(1)); });
    flush();
    for (const at of P.steps[i]) {
      const xx = (X(at - 1) + X(at)) / 2;
      svg.appendChild(el("svg:line", { x1: xx, x2: xx, y1: m.t, y2: H - m.b, class: "cp" }));
      svg.appendChild(el("svg:text", { x: xx + 4, y: m.t + 12, class: "cp-label" },
        "change point: " + (R.commit[at] || "run " + (at + 1))));
    }
    if (P.trend[i] !== null) {  // least-squares line over the checked runs, as a guide
      const j0 = D.checked ? D.checked.from : 0;
      let sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0;
      ys.forEach((v, j) => { if (v !== null && j >= j0) { sx += j; sy += v; sxx += j * j; sxy += j * v; n++; } });
      const b = (n * sxy - sx * sy) / (n * sxx - sx * sx || 1), a = (sy - b * sx) / n;
      svg.appendChild(el("svg:line", { x1: X(j0), x2: X(N - 1), y1: Y(a + b * j0), y2: Y(a + b * (N - 1)), class: "trend" }));
    }
    if (D.checked && D.checked.from > 0) {
      svg.appendChild(el("svg:line", { x1: X(D.checked.from), x2: X(D.checked.from), y1: m.t, y2: H - m.b, class: "grid" }));
    }
    const r = N > 300 ? 1.6 : 2.6;
    ys.forEach((v, j) => {
      if (v === null) return;
      const c = el("svg:circle", { cx: X(j), cy: Y(v), r: j === state.run ? r + 2 : r, class: "pt" + (j === state.run ? " sel" : ""), "data-j": j });
      svg.appendChild(c);
    });
    svg.appendChild(el("svg:circle", { r: 5, class: "hover", cx: -20, cy: -20, id: "hover" }));
  }
  function nearest(evt) {
    if (!geom || state.path < 0) return -1;
    const box = $("chart").getBoundingClientRect();
    const px = evt.clientX - box.left;
    const f = (px - geom.m.l) / (geom.W - geom.m.l - geom.m.r);
    const j = Math.round(f * (N - 1));
    return j >= 0 && j < N && P.series[state.path][j] !== null ? j : -1;
  }
  function hover(evt) {
    const j = nearest(evt), tip = $("tip"), h = $("hover");
    if (j < 0) { tip.hidden = true; if (h) h.setAttribute("cx", -20); return; }
    const v = P.series[state.path][j];
    h.setAttribute("cx", geom.X(j)); h.setAttribute("cy", geom.Y(v));
    tip.textContent = "run " + (j + 1) + ": " + runLabel(j) + " — " + fmt(v) + unit;
    tip.hidden = false;
    const x = geom.X(j), w = tip.offsetWidth;
    tip.style.left = Math.max(0, Math.min(x + 10, geom.W - w)) + "px";
    tip.style.top = Math.max(0, geom.Y(v) - 32) + "px";
  }

  // ---------------------------------------------------------------- the run
  function order() {
    const kids = Array.from({ length: M }, () => []), roots = [], out = [];
    for (let i = 0; i < M; i++) (P.parent[i] < 0 ? roots : kids[P.parent[i]]).push(i);
    const walk = (i, d) => { out.push([i, d]); for (const k of kids[i]) walk(k, d + 1); };
    for (const i of roots) walk(i, 0);
    return out;
  }
  const TREE = order();
  function drawRun() {
    const j = state.run;
    $("run").hidden = j < 0; $("run-hint").hidden = j >= 0;
    if (j < 0) return;
    $("run-title").textContent = "Run " + (j + 1) + " of " + N + ": " + runLabel(j);
    const meta = $("run-meta");
    meta.textContent = "";
    const row = (k, v) => { const tr = el("tr"); tr.appendChild(el("th", {}, k)); tr.appendChild(el("td", { "data-key": k }, v)); meta.appendChild(tr); };
    for (const k of ["run", "commit", "branch", "date", "machine"]) row(k, R[k][j] === null || R[k][j] === "" ? "–" : String(R[k][j]));
    const keys = R.keys[j] || {};
    for (const k of Object.keys(keys)) if (!(k in R)) row(k, String(keys[k]));
    const tb = $("run-tree").tBodies[0];
    tb.textContent = "";
    $("run-value-head").textContent = metricUnit;
    const total = D.total ? D.total[j] : null; // null: the values are not parts of a total
    $("run-share-head").hidden = $("run-bar-head").hidden = D.total === null;
    for (const [i, d] of TREE) {
      const v = P.series[i][j];
      const tr = el("tr", { "data-i": i, class: i === state.path ? "sel" : "" });
      const name = el("td", { class: "tname", title: P.path[i], style: "padding-left:" + (6 + 14 * d) + "px" }, P.name[i]);
      tr.appendChild(name);
      tr.appendChild(el("td", { class: "num v" }, v === null ? "not run" : fmt(v)));
      if (D.total !== null) {
        const share = v === null || !total ? null : v / total;
        tr.appendChild(el("td", { class: "num pct" }, share === null ? "–" : sharePct(share)));
        const bc = el("td", { class: "barcell" });
        if (share !== null) bc.appendChild(el("div", { class: "bar", style: "width:" + Math.max(0, Math.min(100, share * 100)).toFixed(1) + "%" }));
        tr.appendChild(bc);
      }
      tr.addEventListener("click", () => selectPath(i));
      tb.appendChild(tr);
    }
    $("run-tree-note").textContent = "The " + M + " call paths listed, indented under their nearest listed caller; " +
      (D.total !== null ? "% of run = share of this run's total, " + D.totalOf + " (" + fmt(total) + unit + ")."
        : "no % of run: " + D.noShare + ".");
  }

  function selectPath(i) {
    state.path = i;
    const ol = $("list");
    for (const li of ol.children) li.classList.toggle("sel", Number(li.dataset.i) === i);
    if (ol.children[i]) ol.children[i].scrollIntoView({ block: "nearest" });
    $("chart-title").textContent = P.path[i];
    const notes = [metricUnit, P.runs[i] + " runs", "last " + fmt(P.last[i]) + unit,
      "median " + fmt(P.median[i]) + unit, "last vs median " + pct(P.change[i])];
    if (P.steps[i].length) notes.push("step" + (P.step_change[i] !== null ? " " + pct(P.step_change[i]) : "") +
      " at " + P.steps[i].map((a) => R.commit[a] || "run " + (a + 1)).join(", "));
    if (P.trend[i] !== null) notes.push("trend " + pct(P.trend[i]) + " over the " +
      (D.checked.from ? "last " + D.checked.runs + " runs" : "runs"));
    $("chart-note").textContent = notes.join(" · ");
    drawChart();
    drawRun();
  }
  function selectRun(j) { state.run = j; drawChart(); drawRun(); }

  $("title").textContent = D.title;
  $("subtitle").textContent = metricUnit + " · " + N + " runs" +
    (N ? " (" + runLabel(0) + " … " + runLabel(N - 1) + ")" : "") + " · " + D.selected + " call paths";
  buildList();
  const chart = $("chart");
  chart.addEventListener("mousemove", hover);
  chart.addEventListener("mouseleave", () => { $("tip").hidden = true; });
  chart.addEventListener("click", (e) => { const j = nearest(e); if (j >= 0) selectRun(j); });
  window.addEventListener("resize", drawChart);
  // start on the first path with a change found, else the heaviest
  let first = -1;
  for (let i = 0; i < M && first < 0; i++) if (P.steps[i].length || P.trend[i] !== null) first = i;
  if (first < 0 && M) { first = 0; for (let i = 1; i < M; i++) if (Math.abs(P.median[i]) > Math.abs(P.median[first])) first = i; }
  if (first >= 0) selectPath(first);
  else {
    $("chart-title").textContent = D.selected ? "Select a call path" : "No call path matches the selection";
    $("run-hint").hidden = true;
  }
  document.body.dataset.ready = "1";
})();
