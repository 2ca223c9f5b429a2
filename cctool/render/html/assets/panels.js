// panels.js: the controls, legends, prune histogram and selection table, and start-up.
(() => {
  const NS = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);
  const TABLE_ROWS = 500;

  CCT.el = el;
  function el(tag, attrs, text) {
    const x = tag === "svg" || ["rect", "circle", "path", "text", "line", "linearGradient", "stop", "defs", "g"].includes(tag)
      ? document.createElementNS(NS, tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) x.setAttribute(k, v);
    if (text !== undefined) x.textContent = text;
    return x;
  }

  CCT.Panels = class Panels {
    constructor(model, state, view, settings) {
      Object.assign(this, { model, state, view, settings });
      this.fillMenus();
      this.bindControls();
      view.on("select", () => this.showSelection());
      view.on("refresh", () => this.showStatus());
    }

    fillMenus() {
      const m = this.model, s = this.settings;
      const add = (sel, value, text) => sel.appendChild(el("option", { value }, text));
      m.metrics.forEach((metric, k) => {
        add($("color-metric"), k, metric.name);
        add($("size-metric"), k, metric.name);
      });
      add($("size-metric"), -1, "(same size)");
      Object.keys({ auto: 1, ...CCT.colormaps }).forEach((name) => add($("colormap"), name, name));
      $("color-metric").value = String(m.metricIndex.get(s.color) ?? 0);
      $("size-metric").value = String(m.metrics.length ? m.metricIndex.get(s.size) ?? 0 : -1);
      $("colormap").value = s.colormap;
      $("invert").checked = !!s.invert;
    }

    encoding() {
      return { color: Number($("color-metric").value), size: Number($("size-metric").value),
        colormap: $("colormap").value, invert: $("invert").checked, log: $("log").checked };
    }

    bindControls() {
      const recolor = () => { this.view.setEncoding(this.encoding()); this.showLegend(); };
      $("color-metric").addEventListener("change", () => { recolor(); this.resetPrune(); this.showSelection(); });
      ["size-metric", "colormap", "invert"].forEach((id) => $(id).addEventListener("change", recolor));
      $("log").addEventListener("change", () => { recolor(); this.resetPrune(); });
      $("prune-min").addEventListener("input", () => this.applyPrune());
      $("prune-max").addEventListener("input", () => this.applyPrune());
      $("more").addEventListener("click", () => {
        this.state.expandHeaviest(this.model.roots, this.settings.budget);
        this.view.refresh();
      });
      $("reset").addEventListener("click", () => {
        this.pruneZero = true;
        this.resetPrune(true, false);
        this.state.reset(this.settings.budget, this.settings.depth);
        this.view.refresh();
        this.view.fit(true);
      });
      $("fit").addEventListener("click", () => this.view.fit(false));
      $("brush-mode").addEventListener("click", (e) => {
        this.view.brushMode = !this.view.brushMode;
        e.currentTarget.setAttribute("aria-pressed", String(this.view.brushMode));
      });
      $("help-toggle").addEventListener("click", () => { $("help").hidden = !$("help").hidden; });
      $("select-clear").addEventListener("click", () => this.view.select([], "replace"));
      $("select-subtree").addEventListener("click", () => {
        const ids = [];
        for (const i of this.view.selection) for (let j = i; j < i + this.model.size[i]; j++) ids.push(j);
        this.view.select(ids, "add");
      });
      $("select-path").addEventListener("click", () => {
        this.view.select([...this.view.selection].flatMap((i) => this.model.path(i)), "add");
      });
      $("show-query").addEventListener("click", () => this.showQuery());
      this.bindHistogram();
      $("copy-query").addEventListener("click", () => this.copyQuery());
    }

    // ---------------------------------------------------------------- legends
    showLegend() {
      const v = this.view, m = this.model, enc = v.enc, scale = v.colorScale;
      const metric = m.metrics[enc.color], box = $("color-legend");
      const [lo, hi] = scale.domain, W = 260;
      const svg = el("svg", { width: W, height: 44, class: "colorbar" });
      const grad = el("linearGradient", { id: "cbar" });
      for (let k = 0; k <= 20; k++) {
        grad.appendChild(el("stop", { offset: `${k * 5}%`, "stop-color": scale.color(scale.at(k / 20)) }));
      }
      const defs = el("defs");
      defs.appendChild(grad);
      svg.append(defs, el("rect", { x: 0, y: 4, width: W, height: 12, fill: "url(#cbar)" }));
      const tick = (x, text, anchor) => svg.appendChild(el("text", { x, y: 30, "text-anchor": anchor }, text));
      const beyond = scale.clipped ? ["≤ ", "≥ "] : ["", ""];
      const f = (v) => CCT.formatValue(v, scale.ratio ? "ratio" : metric.unit, metric.whole);
      tick(0, beyond[0] + f(lo), "start");
      if (scale.centered) tick(W / 2, scale.ratio ? "1 (same)" : "0", "middle");
      tick(W, beyond[1] + f(hi), "end");
      const how = scale.ratio ? `log scale centred at 1, limits 1/r … r (r = ${CCT.formatValue(hi, "ratio")}: 95% of the time lies within)` : scale.centered ? "centred at 0" : enc.log ? "log scale" : "";
      box.replaceChildren(el("div", { class: "legend-title" }, `color: ${metric.name}${metric.unit ? ` (${metric.unit})` : ""}`),
        ...(how ? [el("div", { class: "legend-note" }, how)] : []), svg);
      this.showSizeLegend();
      this.showMarks();
      v.labelTotals();
      const share = v.share ? m.metrics[v.share.metric].name : "";
      $("label-legend").textContent = `labels: name, ${metric.name}${share ? `, % of the total ${share}` : ""}`;
    }

    showSizeLegend() {
      const v = this.view, box = $("size-legend");
      if (!v.sizeScale) { box.replaceChildren(); return; }
      const metric = this.model.metrics[v.enc.size], max = v.sizeScale.max;
      const svg = el("svg", { width: 300, height: 34 });
      let x = 12;
      for (const f of [1, 0.25, 0.05]) {
        const r = v.sizeScale.radius(max * f);
        svg.appendChild(el("circle", { cx: x, cy: 14, r, class: "legend-dot" }));
        svg.appendChild(el("text", { x: x + r + 4, y: 18 }, CCT.formatValue(max * f, metric.unit, metric.whole)));
        x += r + 84;
      }
      box.replaceChildren(el("div", { class: "legend-title" }, `size: |${metric.name}|${metric.unit ? ` (${metric.unit})` : ""}`), svg);
    }

    showMarks() {
      const items = [["collapsed", "collapsed subtree (Σ: summed over it)"]];
      if (this.model.marker) {
        const labels = this.settings.markerLabels || ["only in A", "only in B"];
        items.push(["only-a", `◀ ${labels[0]}`], ["only-b", `▶ ${labels[1]}`]);
      }
      $("marker-legend").replaceChildren(...items.map(([cls, text]) => {
        const row = el("div", { class: "mark-row" });
        const svg = el("svg", { width: 22, height: 16 });
        svg.appendChild(el("circle", { cx: 8, cy: 8, r: 5, class: `node ${cls}`, fill: "#fff" }));
        row.append(svg, el("span", {}, text));
        return row;
      }));
    }

    // The prune range and its histogram: histogram.js.

    // ---------------------------------------------------------------- selection
    showSelection() {
      const v = this.view, m = this.model, ids = [...v.selection];
      $("selection-count").textContent = ids.length ? `(${ids.length})` : "";
      const c = v.enc.color, vals = m.metrics[c].values;
      ids.sort((a, b) => (Math.abs(vals[b]) || 0) - (Math.abs(vals[a]) || 0) || a - b);
      const head = el("tr");
      const own = m.metrics.filter((x) => x.percentOf === undefined);
      ["name", "depth", ...own.map((x) => x.name)].forEach((h) => head.appendChild(el("th", {}, h)));
      $("selection-table").tHead.replaceChildren(head);
      const rows = ids.slice(0, TABLE_ROWS).map((i) => {
        const tr = el("tr", { "data-id": i, title: CCTValues.path(m.path(i).map((j) => m.name(j))) });
        tr.appendChild(el("td", { class: "name" }, m.name(i)));
        tr.appendChild(el("td", {}, String(m.depth[i])));
        own.forEach((x) => tr.appendChild(el("td", { class: "num" }, CCT.formatValue(x.values[i], x.unit, x.whole))));
        tr.addEventListener("click", () => this.goTo(i));
        return tr;
      });
      if (ids.length > TABLE_ROWS) {
        const more = el("tr");
        more.appendChild(el("td", { colspan: own.length + 2 }, `… ${ids.length - TABLE_ROWS} more`));
        rows.push(more);
      }
      $("selection-table").tBodies[0].replaceChildren(...rows);
      if (!$("query-box").hidden) this.showQuery();
    }

    goTo(i) {
      if (!this.state.kept[i]) this.resetPrune();
      this.state.reveal(i);
      this.view.refresh();
      this.view.centerOn(i);
    }

    showQuery() {
      const text = CCT.selectionQuery(this.model, [...this.view.selection]);
      $("query-text").value = text || "(select nodes first)";
      $("query-note").textContent = this.settings.queryNote || "cctool query PROFILE 'QUERY' selects these nodes";
      $("query-box").hidden = false;
    }

    copyQuery() {
      const area = $("query-text");
      area.select();
      const done = () => { $("query-note").textContent = "copied"; };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(area.value).then(done, () => { document.execCommand("copy"); done(); });
      } else {
        document.execCommand("copy");
        done();
      }
    }

    showStatus() {
      const st = this.state, shown = this.view.order.length;
      let folded = 0, pruned = 0;
      for (const i of this.view.order) if (this.view.collapsed(i)) folded++;
      for (let i = 0; i < this.model.n; i++) pruned += 1 - st.kept[i];
      $("status").textContent = `${shown.toLocaleString("en-US")} of ${this.model.n.toLocaleString("en-US")} nodes shown · ${folded} collapsed`
        + (pruned ? ` · ${pruned} pruned` : "");
    }
  };

  // ------------------------------------------------------------------ start-up
  function boot() {
    const data = JSON.parse($("cctool-data").textContent);
    const model = new CCT.Model(data), state = new CCT.TreeState(model);
    const settings = { budget: data.budget || 150, depth: data.depth, colormap: data.colormap || "auto",
      invert: data.invert, color: data.color, size: data.size, markerLabels: data.markerLabels,
      queryNote: data.queryNote };
    $("title").textContent = data.title || "calling context tree";
    $("subtitle").textContent = data.subtitle || "";
    $("subtitle").title = data.estimate || "";
    state.reset(settings.budget, settings.depth);
    const view = new CCT.View(model, state, settings);
    const panels = new CCT.Panels(model, state, view, settings);
    view.setEncoding(panels.encoding());
    view.refresh();
    view.fit(true);
    panels.showLegend();
    panels.resetPrune();
    panels.showSelection();
    Object.assign(CCT, { model, state, view, panels, query: (ids) => CCT.selectionQuery(model, ids) });
    document.body.dataset.ready = "true";
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})();
