// histogram.js: pruning by the color metric. A butterfly histogram over the metric's values
// (linear, or logarithmic with "log" and for ratios): leaves (what a prune removes first) above the axis,
// internal nodes below, counts on a log scale. Dragging across it sets the kept range, as
// the two sliders do (it moves them). Zero-valued leaves and all-zero subtrees are pruned by
// default, except for comparisons (a zero change is a result); the checkbox keeps them.
(() => {
  const BINS = 40, H = 96, AXIS = 14; // the axis band between the halves holds the ticks
  const $ = (id) => document.getElementById(id);
  const P = CCT.Panels.prototype;

  // The slider positions (0..1000) map to values linearly, or logarithmically with "log".
  P.pruneScale = function () {
    const metric = this.model.metrics[this.view.enc.color], values = metric.values;
    const [lo, hi] = CCT.finiteRange(values);
    const log = (this.view.enc.log || CCT.isRatio(metric)) && lo >= 0 && hi > 0; // ratios: always
    const base = Math.max(lo, hi * 1e-6);
    const at = log ? (f) => (f <= 0 ? lo : base * Math.pow(hi / base, f)) : (f) => lo + (hi - lo) * f;
    const pos = log ? (v) => (v <= base ? 0 : Math.log(v / base) / Math.log(hi / base))
      : (v) => (hi > lo ? (v - lo) / (hi - lo) : 0);
    const fmt = (v) => CCT.formatValue(v, metric.unit, metric.whole);
    return { values, lo, hi, at, pos, log, base, fmt, zeroable: metric.group !== "change" };
  };

  // Full range; `apply` prunes (zero-valued nodes too, by default) and redraws, else every
  // node is kept at once (to show a node the prune hid) and the panel says so.
  P.resetPrune = function (apply = true) {
    $("prune-min").value = 0;
    $("prune-max").value = 1000;
    if (apply) { this.applyPrune(); return; }
    this.pruneZero = false;
    this.state.kept.fill(1);
    this.showPrune(0, 1, this.pruneScale(), 0);
  };

  P.applyPrune = function () {
    const s = this.pruneScale(), a = Number($("prune-min").value), b = Number($("prune-max").value);
    const fa = Math.min(a, b) / 1000, fb = Math.max(a, b) / 1000;
    const lo = fa <= 0 ? -Infinity : s.at(fa), hi = fb >= 1 ? Infinity : s.at(fb);
    const hidden = this.state.prune(s.values, lo, hi, this.pruneZero !== false && s.zeroable);
    this.showPrune(fa, fb, s, hidden);
    this.view.refresh();
  };

  P.showPrune = function (fa, fb, s, hidden) {
    const pm = this.model.metrics[this.view.enc.color], f = s.fmt;
    const zero = this.pruneZero !== false && s.zeroable;
    $("prune-zero").checked = zero;
    $("prune-zero").disabled = !s.zeroable;
    $("prune-text").textContent = `${pm.name} in [${f(fa <= 0 ? s.lo : s.at(fa))}, ${f(fb >= 1 ? s.hi : s.at(fb))}]`
      + `${zero ? ", zero-valued leaves pruned" : ""} · ${hidden} nodes hidden`;
    this.pruneRange = [fa, fb];
    this.drawHistogram(fa, fb, s);
  };

  P.drawHistogram = function (fa, fb, s) {
    const svg = $("histogram"), W = svg.clientWidth || 300, el = CCT.el, m = this.model;
    const up = new Array(BINS).fill(0), down = new Array(BINS).fill(0);
    for (let i = 0; i < m.n; i++) {
      const v = s.values[i];
      if (!Number.isFinite(v)) continue;
      const k = Math.min(BINS - 1, Math.max(0, Math.floor(s.pos(v) * BINS)));
      if (m.hasChildren(i)) down[k]++; else up[k]++;
    }
    const half = (H - AXIS) / 2, top = Math.log1p(Math.max(...up, ...down)) || 1, bw = W / BINS;
    const bar = (c, k, above) => {
      const h = (Math.log1p(c) / top) * (half - 2), inside = (k + 1) / BINS > fa && k / BINS < fb;
      return el("rect", { x: k * bw + 0.5, y: above ? half - h : half + AXIS, width: Math.max(bw - 1, 1), height: h,
        class: `bin${above ? " leaf" : ""}${inside ? "" : " out"}` });
    };
    const tick = (x, text, anchor) => el("text", { x, y: half + AXIS - 3, "text-anchor": anchor, class: "hist-tick" }, text);
    const f = s.fmt;
    svg.setAttribute("height", H);
    svg.replaceChildren(
      el("rect", { x: fa * W, y: 0, width: Math.max((fb - fa) * W, 1), height: H, class: "hist-range" }),
      ...up.map((c, k) => bar(c, k, true)), ...down.map((c, k) => bar(c, k, false)),
      el("line", { x1: 0, x2: W, y1: half + 0.5, y2: half + 0.5, class: "hist-axis" }),
      tick(2, f(s.lo), "start"), tick(W / 2, s.log ? "log scale" : f(s.at(0.5)), "middle"), tick(W - 2, f(s.hi), "end"),
      el("text", { x: W - 2, y: 10, "text-anchor": "end", class: "hist-label" }, `▲ leaves (${up.reduce((a, b) => a + b, 0)})`),
      el("text", { x: W - 2, y: H - 3, "text-anchor": "end", class: "hist-label" }, `▼ internal nodes (${down.reduce((a, b) => a + b, 0)})`));
  };

  // Drag across the histogram: the kept range, applied through the sliders.
  P.bindHistogram = function () {
    const svg = $("histogram");
    let from = null;
    const frac = (e) => { const r = svg.getBoundingClientRect(); return Math.min(1, Math.max(0, (e.clientX - r.left) / r.width)); };
    const set = (a, b) => {
      $("prune-min").value = Math.round(Math.min(a, b) * 1000);
      $("prune-max").value = Math.round(Math.max(a, b) * 1000);
      $("prune-min").dispatchEvent(new Event("input"));
    };
    svg.addEventListener("pointerdown", (e) => { from = frac(e); svg.setPointerCapture(e.pointerId); });
    svg.addEventListener("pointermove", (e) => {
      if (from === null) return;
      const to = frac(e);
      this.drawHistogram(Math.min(from, to), Math.max(from, to), this.pruneScale());
    });
    svg.addEventListener("pointerup", (e) => {
      if (from === null) return;
      const to = frac(e);
      if (Math.abs(to - from) * svg.clientWidth >= 3) set(from, to);
      from = null;
    });
    $("prune-zero").addEventListener("change", (e) => {
      this.pruneZero = e.currentTarget.checked;
      $("prune-min").dispatchEvent(new Event("input"));
    });
  };
})();
