// ranks.js: the rank panel. For the node selected last it shows how the color metric's value
// spreads over ranks (or threads): max and on which rank, mean, min, max/mean, and sorted
// bars (a histogram when there are many ranks). The page embeds per-rank values for the
// heaviest nodes only (float32, base64, node-major); the panel says when a node has none.
(() => {
  const NS = "http://www.w3.org/2000/svg";
  const BARS = 64, BINS = 20, W = 300, H = 72;
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, text) {
    const x = ["svg", "rect", "line", "title", "text"].includes(tag)
      ? document.createElementNS(NS, tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) x.setAttribute(k, v);
    if (text !== undefined) x.textContent = text;
    return x;
  }

  // Per-location values of the embedded nodes, decoded on first use per metric.
  CCT.RankData = class RankData {
    constructor(data) {
      Object.assign(this, { by: "rank", count: 1, labels: [], nodes: [], values: {}, metrics: [] }, data || {});
      this.row = new Map(this.nodes.map((i, k) => [i, k]));
      this.blocks = new Map();
    }

    has(metric) { return metric in this.values; }

    // The values of node i over the locations, or null when the page does not carry them.
    of(metric, i) {
      if (!this.has(metric) || !this.row.has(i)) return null;
      if (!this.blocks.has(metric)) this.blocks.set(metric, decode(this.values[metric]));
      const k = this.row.get(i);
      return this.blocks.get(metric).subarray(k * this.count, (k + 1) * this.count);
    }

    unit(k) { return `${this.by} ${this.labels[k]}`; }
  };

  // Little-endian float32 whatever the machine's byte order.
  function decode(b64) {
    const bin = atob(b64), view = new DataView(new ArrayBuffer(bin.length));
    for (let k = 0; k < bin.length; k++) view.setUint8(k, bin.charCodeAt(k));
    const out = new Float64Array(bin.length / 4);
    for (let k = 0; k < out.length; k++) out[k] = view.getFloat32(4 * k, true);
    return out;
  }

  // max/mean as cctool imbalance defines it: 1 when everything is 0, inf when only the mean is.
  CCT.rankStats = function (v) {
    let max = -Infinity, min = Infinity, sum = 0, arg = 0;
    v.forEach((x, k) => { if (x > max) { max = x; arg = k; } if (x < min) min = x; sum += x; });
    const mean = sum / v.length;
    const ratio = mean !== 0 ? max / mean : (max === 0 ? 1 : Infinity);
    return { max, arg, min, mean, ratio };
  };

  CCT.RankPanel = class RankPanel {
    constructor(model, view) {
      Object.assign(this, { model, view, data: new CCT.RankData(model.data.ranks) });
    }

    metric() { return this.model.metrics[this.view.enc.color]; }

    show() {
      const sel = [...this.view.selection], m = this.metric(), d = this.data;
      $("ranks-what").textContent = d.count > 1 ? `(${d.count} ${d.by}s)` : "";
      const body = [];
      const note = (text) => body.push(el("div", { class: "ranks-note" }, text));
      if (d.note) note(d.note);
      else if (!sel.length) note(this.idle(m));
      else {
        const i = sel[sel.length - 1];
        body.push(el("div", { class: "ranks-name", title: CCTValues.path(this.model.path(i).map((j) => this.model.name(j))) },
          this.model.name(i)));
        if (sel.length > 1) note(`the last selected of ${sel.length} nodes`);
        body.push(...this.detail(i, m));
      }
      $("ranks-body").replaceChildren(...body);
    }

    idle(m) {
      const d = this.data;
      if (d.statistics && d.statistics[m.name]) return `Select a node to see the profiler's per-rank statistics of ${m.name}.`;
      if (d.count <= 1) return this.single();
      return `Select a node to see how its ${m.name} spreads over the ${d.count} ${d.by}s.`;
    }

    single() {
      return `One location (${this.data.single || "a single process and thread"}): nothing to compare across ranks.`;
    }

    detail(i, m) {
      const d = this.data, fmt = (v) => CCT.formatValue(v, m.unit, m.whole);
      const stats = d.statistics && d.statistics[m.name];
      if (stats) return this.profilerStats(i, m, stats);
      if (d.count <= 1) return [el("div", { class: "ranks-note" }, this.single())];
      const v = d.of(m.name, i);
      if (!v) return [this.missing(i, m)];
      const s = CCT.rankStats(v);
      const table = el("table");
      const row = (label, text) => { const tr = el("tr"); tr.append(el("th", {}, label), el("td", {}, text)); table.appendChild(tr); };
      row("max", `${fmt(s.max)} (${d.unit(s.arg)})`);
      row("mean", fmt(s.mean));
      row("min", fmt(s.min));
      row("max/mean", CCT.formatValue(s.ratio, "ratio"));
      return [el("div", { class: "ranks-note" }, `${m.name}, this node's own values`), table, this.chart(v, s, fmt)];
    }

    profilerStats(i, m, stats) {
      const value = (col) => {
        const k = this.model.metricIndex.get(col);
        return k === undefined ? NaN : this.model.metrics[k].values[i];
      };
      const table = el("table");
      for (const name of ["max", "mean", "min"]) {
        if (!stats[name]) continue;
        const tr = el("tr");
        tr.append(el("th", {}, name), el("td", {}, CCT.formatValue(value(stats[name]), m.unit, m.whole)), el("td", { class: "ranks-note" }, stats[name]));
        table.appendChild(tr);
      }
      if (stats.max && stats.mean) {
        const mx = value(stats.max), mean = value(stats.mean);
        const tr = el("tr");
        tr.append(el("th", {}, "max/mean"), el("td", {}, CCT.formatValue(mean !== 0 ? mx / mean : (mx === 0 ? 1 : Infinity), "ratio")));
        table.appendChild(tr);
      }
      const where = this.data.statisticsNote ? ` (${this.data.statisticsNote})` : "";
      return [el("div", { class: "ranks-note" }, `The profile holds no per-rank values, only the profiler's own per-rank statistics${where}:`), table];
    }

    missing(i, m) {
      const d = this.data, cmd = `cctool imbalance PROFILE --metric ${CCT.quote(m.name)} --threshold 0 --top 0`;
      const box = el("div", { class: "ranks-note" });
      if (!d.has(m.name)) {
        const which = d.metrics.length ? `only for ${d.metrics.join(" and ")}` : "for no metric";
        box.append(`Per-rank values are embedded ${which}; `, el("code", {}, cmd), " gives them for this metric.");
      } else {
        const by = this.model.data.priority ? ` by ${this.model.data.priority}` : "";
        box.append(`Per-rank values not embedded for this node: only the ${d.nodes.length.toLocaleString("en-US")} heaviest nodes${by} carry them; `,
          el("code", {}, cmd), " gives all.");
      }
      return box;
    }

    // Sorted bars (heaviest first, the max red) up to BARS locations, else a histogram.
    chart(v, s, fmt) {
      const svg = el("svg", { id: "ranks-chart", height: H, viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none" });
      const top = Math.max(s.max, 0) || 1, y = (x) => H - 2 - Math.max(0, x / top) * (H - 6);
      if (v.length <= BARS) {
        const order = Array.from(v.keys()).sort((a, b) => v[b] - v[a] || a - b), bw = W / order.length;
        order.forEach((k, j) => {
          const r = el("rect", { x: j * bw + 0.5, y: y(v[k]), width: Math.max(bw - 1, 0.5), height: H - 2 - y(v[k]),
            class: k === s.arg ? "bar max" : "bar" });
          r.appendChild(el("title", {}, `${this.data.unit(k)}: ${fmt(v[k])}`));
          svg.appendChild(r);
        });
      } else {
        const counts = new Array(BINS).fill(0), span = s.max - s.min || 1;
        v.forEach((x) => { counts[Math.min(BINS - 1, Math.floor(((x - s.min) / span) * BINS))]++; });
        const most = Math.max(...counts), bw = W / BINS;
        counts.forEach((c, b) => {
          const h = (c / most) * (H - 6);
          const r = el("rect", { x: b * bw + 0.5, y: H - 2 - h, width: bw - 1, height: h, class: b === BINS - 1 ? "bar max" : "bar" });
          r.appendChild(el("title", {}, `${c} ${this.data.by}s in [${fmt(s.min + (span * b) / BINS)}, ${fmt(s.min + (span * (b + 1)) / BINS)}]`));
          svg.appendChild(r);
        });
      }
      if (v.length <= BARS) svg.appendChild(el("line", { x1: 0, x2: W, y1: y(s.mean), y2: y(s.mean), class: "mean" }));
      return svg;
    }
  };

  // After the page's start-up (panels.js), which registered its listener first.
  function start() {
    const panel = new CCT.RankPanel(CCT.model, CCT.view);
    CCT.ranks = panel;
    CCT.view.on("select", () => panel.show());
    $("color-metric").addEventListener("change", () => panel.show());
    panel.show();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
