// rows.js: the rows of the tree-table's views as data (no DOM). A RowSet is a forest of rows
// with value columns; which rows are open, the sort order and the list of shown rows live
// here, so the table (table.js) only draws a window of that list.
//
// top-down rows are the nodes themselves (row id = node id), valued from the node table the
// page holds. bottom-up and flat rows come computed from cctool.ops.views (data.views);
// their row ids are the rows of `cctool tree --view KIND --to json`. With the default sort
// (inclusive, heaviest first, ties by row id) every view lists its rows in the order of that
// command. Past the page's budget per view, the lightest rows come merged into
// "[N smaller nodes]" rows (role "merged"), which the view's note says.
(() => {
  const KINDS = ["top-down", "bottom-up", "flat"];

  // The exclusive/inclusive pair of the page's priority metric, as the views use it.
  function pairOf(model) {
    const data = model.data, idx = (name) => model.metricIndex.get(name);
    if (Array.isArray(data.pair) && data.pair.every((x) => idx(x) !== undefined)) return data.pair.map(idx);
    // "M (inc)" pairs with "M"; a side of a comparison, "M (inc) [A]", with "M [A]".
    const inc = idx(data.priority) ?? 0;
    const base = String(data.priority || "").replace(/ \(inc\)(?=( \[[AB]\])?$)/, "");
    const exc = idx(base) !== undefined && base !== data.priority ? idx(base) : inc;
    return [exc, inc];
  }

  // A value column's heading: which kind of value, and whose where the page compares two
  // profiles ("A inclusive" for "time (inc) [A]", its title naming the profile; "B − A
  // inclusive" for the change itself).
  function heading(model, name, kind) {
    const k = model.metricIndex.get(name), group = k === undefined ? "" : model.metrics[k].group;
    const side = /\[([AB])\]$/.exec(name), change = model.data.changeLabel;
    const stat = model.data.comparison && model.data.comparison.stat; // "median": runs compared
    if (side) return { label: stat ? `${stat} ${side[1]}` : `${side[1]} ${kind}`, title: group ? `${name}: ${group}` : name };
    if (group === "change" && change) return { label: stat ? change : `${change} ${kind}`, title: `${name}: ${change}` };
    return { label: kind, title: name };
  }

  function percentColumn(values, total, label, title) {
    const f = 100 / total;
    return { label, title, unit: "%", percent: true, values: values.map((v) => v * f) };
  }

  // The value columns: inclusive, its %, exclusive, its %, then (top-down) the other metrics.
  function columns(model, exc, inc, excName, incName, total, extra) {
    const cols = [{ ...heading(model, incName, "inclusive"), unit: unitOf(model, incName), whole: wholeOf(model, incName), values: inc }];
    if (total) cols.push(percentColumn(inc, total, "% inc", `${incName}: % of the profile's total`));
    if (excName !== incName) {
      cols.push({ ...heading(model, excName, "exclusive"), unit: unitOf(model, excName), whole: wholeOf(model, excName), values: exc });
      if (total) cols.push(percentColumn(exc, total, "% exc", `${excName}: % of the profile's total`));
    }
    return cols.concat(extra || []);
  }

  // Another metric's column: its name, after what a comparison computed for its own values
  // ("A / B: time (inc)"; the sides' columns already name theirs, "time (inc) [A]").
  function named(model, m) {
    const change = model.data.changeLabel;
    if (m.group === "change" && change) return { label: `${change}: ${m.name}`, title: `${m.name}: ${change}` };
    return { label: m.name, title: m.name };
  }

  function unitOf(model, name) {
    const k = model.metricIndex.get(name);
    return k === undefined ? "" : model.metrics[k].unit;
  }

  function wholeOf(model, name) {
    const k = model.metricIndex.get(name);
    return k !== undefined && model.metrics[k].whole;
  }

  CCT.RowSet = class RowSet {
    // parent: Int32Array (parent row < row, -1 for top rows); name(i), role(i): text.
    constructor(kind, parent, name, role, cols, opts) {
      Object.assign(this, { kind, parent, name, role, cols, n: parent.length }, opts || {});
      const n = this.n, start = new Int32Array(n + 1), ids = new Int32Array(n), tops = [];
      this.depth = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const p = parent[i];
        if (p >= 0) { start[p + 1]++; this.depth[i] = this.depth[p] + 1; }
      }
      for (let i = 0; i < n; i++) start[i + 1] += start[i];
      const fill = start.slice(0, n);
      for (let i = 0; i < n; i++) { const p = parent[i]; if (p < 0) tops.push(i); else ids[fill[p]++] = i; }
      Object.assign(this, { childStart: start, childIds: ids, tops: Int32Array.from(tops) });
      this.open = new Uint8Array(n);
      this.sortBy(...(this.firstSort || [0, true, false]));
    }

    children(i) { return this.childIds.subarray(this.childStart[i], this.childStart[i + 1]); }
    hasChildren(i) { return this.childStart[i + 1] > this.childStart[i]; }

    // col: index into cols, or -1 for the name; desc: largest first; abs: by the size of
    // the value (a change: whichever way it went). Ties keep row order.
    sortBy(col, desc, abs = false) {
      this.sort = { col, desc, abs: abs && col >= 0 };
      const s = desc ? -1 : 1;
      let key;
      if (col < 0) {
        const names = Array.from({ length: this.n }, (_, i) => this.name(i).toLowerCase());
        key = (a, b) => (names[a] < names[b] ? -s : names[a] > names[b] ? s : a - b);
      } else {
        const v = this.cols[col].values, low = desc ? -Infinity : Infinity;
        const val = abs ? (i) => (Number.isNaN(v[i]) ? low : Math.abs(v[i])) : (i) => (Number.isNaN(v[i]) ? low : v[i]);
        key = (a, b) => s * (val(a) - val(b)) || a - b;
      }
      for (let i = 0; i < this.n; i++) this.children(i).sort(key);
      this.tops.sort(key);
      this.dirty = true;
    }

    // Shown rows in order (top rows, and the children of open rows), or those under `scope`.
    shown() {
      if (!this.dirty && this.list) return this.list;
      const out = [], stack = [];
      const tops = this.scope ? this.scope : this.tops;
      for (let k = tops.length - 1; k >= 0; k--) stack.push(tops[k]);
      while (stack.length) {
        const i = stack.pop();
        out.push(i);
        if (!this.open[i]) continue;
        const kids = this.children(i);
        for (let k = kids.length - 1; k >= 0; k--) stack.push(kids[k]);
      }
      this.list = out;
      this.dirty = false;
      return out;
    }

    setOpen(i, on) { if (this.hasChildren(i) && this.open[i] !== (on ? 1 : 0)) { this.open[i] = on ? 1 : 0; this.dirty = true; } }
    reveal(i) { for (let j = this.parent[i]; j >= 0; j = this.parent[j]) this.setOpen(j, true); }
    openIds() { const out = []; for (let i = 0; i < this.n; i++) if (this.open[i]) out.push(i); return out; }
    setOpenIds(ids) { this.open.fill(0); ids.forEach((i) => { if (i >= 0 && i < this.n) this.open[i] = 1; }); this.dirty = true; }
    setScope(tops) { this.scope = tops ? Int32Array.from(tops) : null; this.dirty = true; }

    // Open the heaviest closed rows (by the first column, a comparison's by the change)
    // while about `budget` rows show.
    openBudget(budget) {
      const v = this.cols[this.weightCol || 0].values, w = (i) => (Number.isFinite(v[i]) ? Math.abs(v[i]) : 0);
      const heap = new CCT.Heap((a, b) => w(a) > w(b));
      const frontier = (i) => { if (this.open[i]) this.children(i).forEach(frontier); else if (this.hasChildren(i)) heap.push(i); };
      this.tops.forEach(frontier);
      let count = this.shown().length;
      while (heap.size()) {
        const i = heap.pop(), kids = this.children(i);
        if (count + kids.length > budget) continue;
        this.setOpen(i, true);
        count += kids.length;
        kids.forEach((c) => { if (this.hasChildren(c)) heap.push(c); });
      }
    }

    // Open the heaviest chain below row `from` (default: the heaviest top row with children),
    // by the first column.
    openHeaviest(maxDepth, from = -1) {
      const col = this.cols[0].values, v = this.sort.abs ? col.map(Math.abs) : col;
      let i = from;
      if (i < 0) for (const t of this.tops) if (this.hasChildren(t) && (i < 0 || v[t] > v[i])) i = t;
      for (let d = 0; i >= 0 && d < maxDepth && this.hasChildren(i); d++) {
        this.setOpen(i, true);
        let best = -1;
        for (const c of this.children(i)) if (best < 0 || v[c] > v[best]) best = c;
        i = best;
      }
    }
  };

  // A comparison's top-down columns answer "what changed, by how much": A, B, the change
  // and the change % of the inclusive metric (the ratio of a div), then the exclusive change
  // and the other metrics. Change columns diverge around 0 (`diverge`); the first sort is by
  // the size of the change, largest first.
  function comparisonColumns(model, me, mi) {
    const idx = (name) => model.metricIndex.get(name), col = (name, kind) => {
      const m = model.metrics[idx(name)];
      return { ...heading(model, name, kind), unit: m.unit, whole: m.whole, values: m.values };
    };
    const cols = [], used = new Set([me.name, mi.name]);
    [" [A]", " [B]"].forEach((side) => { if (idx(mi.name + side) !== undefined) { cols.push(col(mi.name + side, "inclusive")); used.add(mi.name + side); } });
    const sub = model.data.comparison.op === "sub";
    cols.push({ ...col(mi.name, "inclusive"), diverge: sub, change: true });
    const pct = mi.name + " [%]";
    if (idx(pct) !== undefined) {
      cols.push({ label: "change %", title: `${mi.name}: ${model.data.changeLabel} in % of A's value (— where A is 0)`,
        unit: "%", percent: true, signed: true, diverge: true, change: true, values: model.metrics[idx(pct)].values });
      used.add(pct);
    }
    if (me !== mi) cols.push({ ...col(me.name, "exclusive"), diverge: sub, change: true });
    const rest = model.metrics.filter((m) => !used.has(m.name) && m.percentOf === undefined && !/ \[%\]$/.test(m.name))
      .map((m) => ({ ...(m.group === "rank test" ? { label: m.name, title: `${m.name}: ${model.data.subtitle}` } : named(model, m)),
        unit: m.unit, whole: m.whole, values: m.values }));
    return { cols: cols.concat(rest), sort: [cols.findIndex((c) => c.change), true, sub] };
  }

  // The RowSet of view `kind` (null when the page has none: a ratio's bottom-up).
  CCT.rowSet = function (model, kind) {
    const data = model.data, [exc, inc] = pairOf(model);
    if (kind === "top-down" && data.comparison && data.comparison.op === "sub") {
      const me = model.metrics[exc], mi = model.metrics[inc], { cols, sort } = comparisonColumns(model, me, mi);
      return new CCT.RowSet(kind, model.parent, (i) => model.name(i), () => "", cols,
        { node: (i) => i, total: 0, pair: [me.name, mi.name], firstSort: sort, weightCol: sort[0] });
    }
    if (kind === "top-down") {
      const me = model.metrics[exc], mi = model.metrics[inc], total = mi.total || 0;
      const extra = model.metrics.filter((m, k) => k !== exc && k !== inc && m.percentOf === undefined)
        .map((m) => ({ ...named(model, m), unit: m.unit, whole: m.whole, values: m.values }));
      const cols = columns(model, me.values, mi.values, me.name, mi.name, total, extra);
      return new CCT.RowSet(kind, model.parent, (i) => model.name(i), () => "", cols,
        { node: (i) => i, total, pair: [me.name, mi.name] });
    }
    const v = CCT.viewRows()[kind];
    if (!v) return null;
    if (v.error) return { error: v.error, kind };
    const name = (col) => (i) => { const c = col.codes[i]; return c < 0 ? "" : col.values[c]; };
    const num = CCT.floats;
    const cols = columns(model, num(v.exc), num(v.inc), v.exclusive, v.inclusive, v.total);
    const diff = data.comparison && data.comparison.op === "sub"; // rows of the change
    if (diff) cols.forEach((c) => { c.diverge = true; c.change = true; });
    return new CCT.RowSet(kind, Int32Array.from(v.parent), name(v.name), name(v.role), cols,
      { node: () => -1, total: v.total, note: v.note, pair: [v.exclusive, v.inclusive],
        firstSort: diff ? [0, true, true] : null });
  };
  CCT.RowSet.KINDS = KINDS;

  // The embedded bottom-up and flat rows, parsed on first use (not at load).
  let parsed = null;
  CCT.viewRows = function () {
    if (!parsed) {
      const el = document.getElementById("cctool-views");
      parsed = el && el.textContent.trim() ? JSON.parse(el.textContent) : {};
    }
    return parsed;
  };
})();
