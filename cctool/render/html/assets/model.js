// model.js: the profile as typed arrays, which nodes are shown, and the color and size
// scales. Nothing here touches the DOM, so the rest of the page can rely on plain data.
const CCT = {};
window.cctool = CCT;

// A JSON list of numbers (null for a missing value) as a Float64Array (NaN for null).
CCT.floats = function (list) {
  const n = list.length, out = new Float64Array(n);
  for (let i = 0; i < n; i++) { const v = list[i]; out[i] = v === null ? NaN : v; }
  return out;
};

// Values as a new Float64Array with 0 for NaN and infinities (`abs`: magnitudes).
CCT.finite = function (values, abs) {
  const n = values.length, out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = values[i];
    out[i] = Number.isFinite(v) ? (abs ? Math.abs(v) : v) : 0;
  }
  return out;
};

CCT.Model = class Model {
  constructor(data) {
    const n = data.n;
    this.n = n;
    this.data = data;
    this.parent = Int32Array.from(data.parent);
    this.names = data.name.values;
    this.nameCode = Int32Array.from(data.name.codes);
    this.attrs = data.attrs;
    this.marker = data.marker ? Int8Array.from(data.marker) : null;
    this.metrics = data.metrics.map((m) => ({
      name: m.name, summable: m.summable, group: m.group || "", unit: m.unit || "", whole: !!m.whole,
      values: CCT.floats(m.values),
      sums: null,
    }));
    // The typed arrays are the model's copy: the parsed lists are let go (a list of 200,000
    // numbers costs several times its typed array on the script heap).
    data.parent = data.name.codes = data.marker = null;
    data.metrics.forEach((m) => { m.values = null; });
    // "% of total" of each metric with a whole-profile total, as metrics of their own (for
    // color and size); `percentOf` names the metric they scale.
    const totals = data.totals || {};
    this.metrics.slice().forEach((m, k) => {
      const total = totals[m.name];
      if (!Number.isFinite(total) || total === 0) return;
      m.total = total;
      const f = 100 / total;
      this.metrics.push({ name: `${m.name} %`, summable: m.summable, group: m.group, unit: "%",
        values: m.values.map((v) => v * f), sums: null, percentOf: k });
    });
    this.metricIndex = new Map(this.metrics.map((m, i) => [m.name, i]));
    this.depth = new Int32Array(n);
    this.size = new Int32Array(n).fill(1);
    // Rows come in preorder (a parent before its children), so one pass each way suffices.
    this.maxDepth = 0;
    for (let i = 0; i < n; i++) {
      const p = this.parent[i];
      this.depth[i] = p < 0 ? 0 : this.depth[p] + 1;
      if (this.depth[i] > this.maxDepth) this.maxDepth = this.depth[i];
    }
    for (let i = n - 1; i >= 0; i--) if (this.parent[i] >= 0) this.size[this.parent[i]] += this.size[i];
    const prio = this.metricIndex.has(data.priority) ? this.metricIndex.get(data.priority) : 0;
    this.weight = CCT.finite(this.metrics.length ? this.shownValues(prio, true) : this.size, true);
    this.buildChildren();
    this.hotPath = Int32Array.from(data.hotPath || []);
    this.hot = new Uint8Array(n);
    this.hotPath.forEach((i) => { this.hot[i] = 1; });
  }

  // Children in CSR form, heaviest first, so the hot paths come out on top.
  buildChildren() {
    const n = this.n, start = new Int32Array(n + 1), ids = new Int32Array(n);
    for (let i = 0; i < n; i++) if (this.parent[i] >= 0) start[this.parent[i] + 1]++;
    for (let i = 0; i < n; i++) start[i + 1] += start[i];
    const fill = start.slice(0, n), roots = [];
    for (let i = 0; i < n; i++) {
      const p = this.parent[i];
      if (p < 0) roots.push(i); else ids[fill[p]++] = i;
    }
    const byWeight = (a, b) => this.weight[b] - this.weight[a] || a - b;
    for (let i = 0; i < n; i++) ids.subarray(start[i], start[i + 1]).sort(byWeight);
    this.childStart = start;
    this.childIds = ids;
    this.roots = roots.sort(byWeight);
  }

  // Position of every node in the drawing order (preorder, heaviest child first): search
  // results are visited top to bottom as the views draw them.
  drawRank() {
    if (!this.rank) {
      const rank = new Int32Array(this.n), stack = this.roots.slice().reverse();
      for (let k = 0; stack.length; k++) {
        const i = stack.pop(), kids = this.children(i);
        rank[i] = k;
        for (let c = kids.length - 1; c >= 0; c--) stack.push(kids[c]);
      }
      this.rank = rank;
    }
    return this.rank;
  }

  // Nodes whose name matches `re`, in drawing order; each distinct name is tested once.
  matching(re) {
    const hit = this.names.map((name) => re.test(name)), out = [];
    for (let i = 0; i < this.n; i++) if (this.nameCode[i] >= 0 && hit[this.nameCode[i]]) out.push(i);
    const rank = this.drawRank();
    return out.sort((a, b) => rank[a] - rank[b]);
  }

  children(i) { return this.childIds.subarray(this.childStart[i], this.childStart[i + 1]); }
  hasChildren(i) { return this.childStart[i + 1] > this.childStart[i]; }
  name(i) { const c = this.nameCode[i]; return c < 0 ? "" : this.names[c]; }

  attr(key, i) {
    const col = this.attrs[key];
    if (col === undefined) return null;
    if (Array.isArray(col)) return col[i];
    const c = col.codes[i];
    return c < 0 ? null : col.values[c];
  }

  // Ancestors from the root down to i (inclusive).
  path(i) {
    const out = [];
    for (let j = i; j >= 0; j = this.parent[j]) out.push(j);
    return out.reverse();
  }

  // Subtree sums of a summable metric: what a collapsed node stands for.
  subtreeSums(m) {
    const metric = this.metrics[m];
    if (!metric.sums) {
      const s = CCT.finite(metric.values, false);
      for (let i = this.n - 1; i >= 0; i--) if (this.parent[i] >= 0) s[this.parent[i]] += s[i];
      metric.sums = s;
    }
    return metric.sums;
  }

  // Per-node values of metric m, or what a collapsed node shows when `collapsed`.
  shownValues(m, collapsed) {
    const metric = this.metrics[m];
    return collapsed && metric.summable ? this.subtreeSums(m) : metric.values;
  }

  value(m, i, collapsed) { return this.shownValues(m, collapsed)[i]; }
};

// Which nodes are open (children shown) and which survive the prune range.
CCT.TreeState = class TreeState {
  constructor(model) {
    this.model = model;
    this.expanded = new Uint8Array(model.n);
    this.opened = new Uint8Array(model.n); // ever expanded: re-opening restores the old view
    this.kept = new Uint8Array(model.n).fill(1);
  }

  // The first view: the heaviest subtrees (or every node above `depth`) and the hot path.
  reset(budget, depth) {
    this.expanded.fill(0);
    this.opened.fill(0);
    if (depth) {
      for (let i = 0; i < this.model.n; i++) if (this.model.depth[i] < depth - 1) this.open(i);
    } else {
      this.expandHeaviest(this.model.roots, budget);
    }
    const hot = this.model.hotPath;
    if (hot.length) this.reveal(hot[hot.length - 1]);
  }

  open(i) { this.expanded[i] = 1; this.opened[i] = 1; }
  keptChildren(i) { return Array.prototype.filter.call(this.model.children(i), (c) => this.kept[c]); }
  isCollapsed(i) { return !this.expanded[i] && this.keptChildren(i).length > 0; }

  // Visible nodes in preorder (roots first, heaviest children first).
  visible() {
    const out = [], stack = [];
    for (let r = this.model.roots.length - 1; r >= 0; r--) stack.push(this.model.roots[r]);
    while (stack.length) {
      const i = stack.pop();
      out.push(i);
      if (!this.expanded[i]) continue;
      const kids = this.model.children(i);
      for (let k = kids.length - 1; k >= 0; k--) if (this.kept[kids[k]]) stack.push(kids[k]);
    }
    return out;
  }

  // Open the heaviest collapsed subtrees below `tops` until about `budget` more nodes show.
  expandHeaviest(tops, budget) {
    const w = this.model.weight, heap = new CCT.Heap((a, b) => w[a] > w[b]);
    const frontier = (i) => { if (this.expanded[i]) this.keptChildren(i).forEach(frontier); else heap.push(i); };
    tops.forEach(frontier);
    let added = 0, first = true;
    while (heap.size()) {
      const i = heap.pop();
      const kids = this.keptChildren(i);
      if (!kids.length || (!first && added + kids.length > budget)) continue;
      this.open(i);
      first = false;
      added += kids.length;
      kids.forEach((k) => heap.push(k));
    }
    return added;
  }

  // Double-click: close an open node; open a closed one (its old view, or its hot paths).
  toggle(i, budget) {
    if (this.expanded[i]) { this.expanded[i] = 0; return; }
    if (this.opened[i]) { this.expanded[i] = 1; return; }
    this.open(i);
    this.expandHeaviest(this.keptChildren(i), budget);
  }

  // Make node i visible by opening its ancestors.
  reveal(i) { for (let j = this.model.parent[i]; j >= 0; j = this.model.parent[j]) this.open(j); }

  // Mass prune: keep a node when it or any node below it lies in [lo, hi] (and, with
  // `dropZero`, is not zero); roots stay.
  prune(values, lo, hi, dropZero) {
    const m = this.model, kept = this.kept;
    for (let i = 0; i < m.n; i++) kept[i] = values[i] >= lo && values[i] <= hi && !(dropZero && values[i] === 0) ? 1 : 0;
    for (let i = m.n - 1; i >= 0; i--) if (kept[i] && m.parent[i] >= 0) kept[m.parent[i]] = 1;
    m.roots.forEach((r) => { kept[r] = 1; });
    let hidden = 0;
    for (let i = 0; i < m.n; i++) hidden += 1 - kept[i];
    return hidden;
  }
};

CCT.Heap = class Heap {
  constructor(before) { this.a = []; this.before = before; }
  size() { return this.a.length; }
  push(x) {
    const a = this.a;
    a.push(x);
    for (let i = a.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (!this.before(a[i], a[p])) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }
  pop() {
    const a = this.a, top = a[0], last = a.pop();
    if (a.length) {
      a[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < a.length && this.before(a[l], a[m])) m = l;
        if (r < a.length && this.before(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }
};

// ------------------------------------------------------------------ names
// Strip bracketed parts that follow an identifier (C++ template arguments, parameter
// lists): they repeat what the tree already says. "<unknown file>" stays as it is.
CCT.stripNested = function (s, open, close, repl) {
  let out = "", depth = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === open && (depth > 0 || /[\w:>\]]/.test(s[i - 1] || ""))) {
      if (depth++ === 0) out += repl;
    } else if (ch === close && depth > 0) {
      depth--;
    } else if (depth === 0) {
      out += ch;
    }
  }
  return depth === 0 ? out : s;
};

// A name shortened to at most `max` characters: paths lose their folders, C++ names their
// template and parameter lists, then their outer qualifiers; what is still too long loses
// its middle, or with `atEnd` its end (the start of a name tells more than its tail when
// the label sits before the node).
CCT.elide = function (name, max, atEnd) {
  if (name.length <= max) return name;
  let s = name;
  if (/^[^\s]*\/[^\s]*$/.test(s)) s = s.slice(s.lastIndexOf("/") + 1) || s;
  if (s.length > max) s = CCT.stripNested(CCT.stripNested(s, "<", ">", "<…>"), "(", ")", "(…)");
  if (s.length <= max) return s;
  // Qualified names keep their innermost parts: "…vector<…>::push_back(…)".
  const parts = s.split("::");
  for (let k = 1; k < parts.length; k++) {
    s = "…" + parts.slice(k).join("::");
    if (s.length <= max) return s;
  }
  if (max < 2) return "";
  if (atEnd) return s.slice(0, max - 1) + "…";
  const head = Math.ceil((max - 1) * 0.6);
  return s.slice(0, head) + "…" + s.slice(s.length - (max - 1 - head));
};

// Values are spelled as on every face of cctool (values.js, with the rules of
// cctool.render.values): times arrive in seconds and sizes in bytes; `whole`: the metric
// counts whole things (no decimals).
CCT.formatValue = (v, unit, whole) => CCTValues.format(v, unit, whole);
// A share (0.451) as a percentage ("45.1%", "<0.01%").
CCT.formatPercent = (f) => CCTValues.percent(100 * f);
// The unit is part of the value's text (2.4 ms, 1.5 GiB, 45.1%, 0.58x): no unit column.
CCT.unitShown = (unit) => CCTValues.carriesUnit(unit);

// ------------------------------------------------------------------ colors and sizes
// Colormaps from the lowest value to the highest; each high end is the "hot" one.
CCT.colormaps = {
  reds: ["#fff5f0", "#fcbba1", "#fb6a4a", "#cb181d", "#67000d"],
  blues: ["#f7fbff", "#c6dbef", "#6baed6", "#2171b5", "#08306b"],
  viridis: ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"],
  magma: ["#000004", "#51127c", "#b73779", "#fc8961", "#fcfdbf"],
  grey: ["#f0f0f0", "#bdbdbd", "#969696", "#636363", "#252525"],
  RdYlGn: ["#1a9850", "#91cf60", "#ffffbf", "#fc8d59", "#d73027"],
  RdBu: ["#2166ac", "#92c5de", "#f7f7f7", "#f4a582", "#b2182b"],
};
CCT.diverging = new Set(["RdYlGn", "RdBu"]);

CCT.finiteRange = function (values) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) if (Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
  return lo > hi ? [0, 0] : [lo, hi];
};

// Maps a value to [0, 1]: linear, or logarithmic (symmetric around 0 for signed data).
CCT.normalizer = function (lo, hi, log, centered) {
  const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
  if (centered) {
    const f = log ? (v) => Math.sign(v) * Math.log1p(Math.abs(v) * 1e4 / m) / Math.log1p(1e4)
      : (v) => v / m;
    return (v) => 0.5 + 0.5 * f(v);
  }
  if (log) {
    const base = Math.max(lo, hi * 1e-6, Number.MIN_VALUE);
    const span = Math.log(hi / base) || 1;
    return (v) => (v <= base ? 0 : Math.log(v / base) / span);
  }
  return (v) => (hi > lo ? (v - lo) / (hi - lo) : 1);
};

// `ratio`: values are ratios (A / B): a log scale centred at 1 with symmetric limits
// 1/r .. r, so "no change" takes the colormap's middle colour and halving looks as strong
// as doubling (`clipped`: some ratios lie beyond the limits). Differences (signed values) are centred at 0 on a diverging map.
CCT.colorScale = function (values, cmap, invert, log, ratio, weights) {
  const [lo, hi] = CCT.finiteRange(values);
  const signed = lo < 0 && hi > 0;
  const name = cmap === "auto" ? (signed || ratio ? "RdBu" : "reds") : cmap;
  const stops = CCT.colormaps[name].map(hexToRgb);
  const paint = (x) => {
    if (invert) x = 1 - x;
    const f = x * (stops.length - 1), k = Math.min(stops.length - 2, Math.floor(f)), u = f - k;
    const c = stops[k].map((a, j) => Math.round(a + (stops[k + 1][j] - a) * u));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  };
  if (ratio) {
    // r: the 95th percentile of how far ratios are from 1 (by |log|), each node weighted
    // by `weights` (its time), so that light nodes and nodes found in one profile only
    // (ratios near 0 or huge) do not wash out the changes that matter; ratios beyond
    // 1/r .. r take the ends' colours. At least 1.1 (a 10% change).
    const far = [];
    let total = 0;
    values.forEach((v, i) => {
      const w = weights ? weights[i] : 1;
      if (Number.isFinite(v) && v > 0 && w > 0) { far.push([Math.abs(Math.log(v)), w]); total += w; }
    });
    far.sort((a, b) => a[0] - b[0]);
    let q = 0;
    for (let k = 0, acc = 0; k < far.length; k++) { acc += far[k][1]; q = far[k][0]; if (acc >= 0.95 * total) break; }
    const r = Math.max(Math.exp(q), 1.1);
    const span = Math.log(r);
    const t = (v) => (v <= 0 ? 0 : 0.5 + 0.5 * Math.log(v) / span);
    const color = (v) => (Number.isNaN(v) || v === null ? "#d0d0d0" : paint(Math.min(1, Math.max(0, t(v)))));
    return { color, domain: [1 / r, r], name, centered: true, ratio: true, invert, clipped: far.length > 0 && q < far[far.length - 1][0],
      at: (f) => Math.exp((2 * f - 1) * span), middle: 1 };
  }
  const centered = CCT.diverging.has(name) && signed;
  const t = CCT.normalizer(lo, hi, log, centered);
  const color = (v) => (Number.isFinite(v) ? paint(Math.min(1, Math.max(0, t(v)))) : "#d0d0d0");
  const domain = centered ? [-Math.max(-lo, hi), Math.max(-lo, hi)] : [lo, hi];
  return { color, domain, name, centered, invert, middle: centered ? 0 : null,
    at: (f) => domain[0] + (domain[1] - domain[0]) * f };
};

// Ratio metrics (a comparison's A / B, or any metric whose unit is "ratio") are colored on
// the ratio scale above.
CCT.isRatio = (metric) => metric.unit === "ratio";

CCT.sizeScale = function (values, log, rmin, rmax) {
  const [lo, hi] = CCT.finiteRange(values);
  const m = Math.max(Math.abs(lo), Math.abs(hi));
  const t = CCT.normalizer(0, m, log, false);
  // Area follows the value, so the radius follows its square root.
  const radius = (v) => (Number.isFinite(v) && m > 0
    ? rmin + (rmax - rmin) * Math.sqrt(Math.min(1, Math.max(0, t(Math.abs(v))))) : rmin);
  return { radius, max: m };
};

function hexToRgb(h) {
  return [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
}
