// tooltip.js: the hover card shared by the node-link and the icicle views: name, source,
// call path and every metric of one node.
(() => {
  function el(tag, cls, text) {
    const x = document.createElement(tag);
    if (cls) x.className = cls;
    if (text !== undefined) x.textContent = text;
    return x;
  }

  CCT.Tooltip = class Tooltip {
    constructor(model, settings) {
      this.model = model;
      this.settings = settings;
      this.tip = document.getElementById("tooltip");
      this.stage = document.getElementById("stage");
    }

    // `folded`: the node stands for its collapsed subtree (summable metrics are summed).
    show(i, e, colorMetric, folded) {
      const m = this.model;
      const parts = [el("div", "tt-name", m.name(i))];
      const where = [m.attr("type", i), this.sourceOf(i), m.attr("module", i)].filter((s) => s);
      if (where.length) parts.push(el("div", "tt-sub", where.join(" · ")));
      if (m.marker && m.marker[i]) parts.push(el("div", `tt-marker m${m.marker[i]}`, this.settings.markerLabels[m.marker[i] - 1]));
      if (m.hot[i]) parts.push(el("div", "tt-hot", "on the hot path"));
      const path = m.path(i).slice(0, -1).map((j) => CCT.elide(m.name(j), 40));
      if (path.length > 9) path.splice(2, path.length - 8, `… ${path.length - 8} more …`);
      if (path.length) parts.push(el("div", "tt-path", CCTValues.path(path)));
      parts.push(this.metricTable(i, colorMetric, folded));
      if (folded) parts.push(el("div", "tt-note", `collapsed: ${m.size[i] - 1} nodes below; Σ = summed over the subtree`));
      this.tip.replaceChildren(...parts);
      this.tip.hidden = false;
      this.place(e);
    }

    metricTable(i, colorMetric, folded) {
      const m = this.model, table = el("table", "tt-metrics");
      const primary = m.metrics[colorMetric] && m.metrics[colorMetric].percentOf !== undefined
        ? m.metrics[colorMetric].percentOf : colorMetric;
      m.metrics.forEach((metric, k) => {
        if (metric.percentOf !== undefined) return; // shown as the % column of its metric
        const tr = el("tr", k === primary ? "primary" : "");
        const sum = folded && metric.summable, v = m.value(k, i, folded);
        const pct = metric.total ? CCT.formatPercent(v / metric.total) : "";
        tr.append(el("th", "", (sum ? "Σ " : "") + metric.name), el("td", "", CCT.formatValue(v, metric.unit, metric.whole)),
          el("td", "unit", CCT.unitShown(metric.unit) ? "" : metric.unit), el("td", "pct", pct));
        table.appendChild(tr);
      });
      return table;
    }

    hide() { this.tip.hidden = true; }

    sourceOf(i) {
      const file = this.model.attr("file", i), line = this.model.attr("line", i);
      if (!file) return "";
      const base = String(file).slice(String(file).lastIndexOf("/") + 1);
      return line ? `${base}:${line}` : base;
    }

    place(e) {
      const r = this.stage.getBoundingClientRect(), tip = this.tip;
      let x = e.clientX + 14, y = e.clientY + 14;
      if (x + tip.offsetWidth > r.right) x = Math.max(r.left, e.clientX - 14 - tip.offsetWidth);
      if (y + tip.offsetHeight > r.bottom) y = Math.max(r.top, e.clientY - 14 - tip.offsetHeight);
      tip.style.left = `${x}px`;
      tip.style.top = `${y}px`;
    }
  };
})();
