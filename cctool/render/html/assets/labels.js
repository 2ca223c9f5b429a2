// labels.js: names beside the nodes of the tree view, placed in screen space without
// overlaps; the current search match, the hot path and the selection come first.
(() => {
  const P = CCT.View.prototype;
  const { FONT, MAX_LABELS, MARK } = CCT.View;
  const VSEP = "  "; // between a name and its value
  const NS = "http://www.w3.org/2000/svg";

  // Labels that must show when they are in view: the current search match, the hot path,
  // the selection, then the other matches; then the usual candidates.
  P.labelCandidates = function () {
    const first = [this.current, ...this.model.hotPath, ...[...this.selection].slice(0, 200),
      ...(this.matchIds || []).slice(0, 400)];
    const seen = this.newStamp(), out = [];
    for (const i of [...first, ...this.labelOrder]) {
      if (i >= 0 && this.stamp[i] !== seen && this.isShown[i]) {
        this.stamp[i] = seen;
        out.push(i);
      }
    }
    return out;
  };

  // Greedy placement in screen space with a grid of placed boxes: a label that would
  // overlap one already placed is dropped (rows closer than a label's height). Each label
  // sits right of its node, on the node's own row, as "name  value · %" when that fits
  // before the window's edge, else the whole name, else the name shortened in the middle.
  P.drawLabels = function () {
    const W = this.svg.clientWidth, H = this.svg.clientHeight;
    const grid = new Map(), cell = 64, boxes = [];
    const cells = (b, fn) => {
      for (let gx = Math.floor(b[0] / cell); gx <= Math.floor((b[0] + b[2]) / cell); gx++)
        for (let gy = Math.floor(b[1] / cell); gy <= Math.floor((b[1] + b[3]) / cell); gy++)
          if (fn(`${gx},${gy}`)) return true;
      return false;
    };
    const hits = (b) => cells(b, (key) => (grid.get(key) || []).some((o) =>
      b[0] < o[0] + o[2] && o[0] < b[0] + b[2] && b[1] < o[1] + o[3] && o[1] < b[1] + b[3]));
    this.labelTotals();
    for (const i of this.labelCandidates()) {
      if (boxes.length >= MAX_LABELS) break;
      const [sx, sy] = this.screen(i);
      if (sx > W - 20 || sy < -8 || sy > H + 8) continue;
      const x0 = sx + this.labelGap(i), room = W - x0 - 4;
      const box0 = [Math.max(x0, 0), sy - FONT / 2 - 2, 1, FONT + 3];
      if (room < 3 * this.charW || hits(box0)) continue;
      const value = this.valueText(i), vw = value ? this.measure(VSEP + value) : 0;
      const name = this.fitLabel(i, room, false);
      if (!name) continue;
      const shownValue = value && this.measure(name) + vw <= room ? value : "";
      const w = this.measure(name) + (shownValue ? vw : 0);
      const box = [x0, sy - FONT / 2 - 2, w, FONT + 3];
      if (box[0] + w < 0 || hits(box)) continue;
      cells(box, (key) => { if (!grid.has(key)) grid.set(key, []); grid.get(key).push(box); });
      boxes.push([box, name, i, shownValue]);
    }
    this.showLabels(boxes);
  };

  // Distance from a node's centre to its label (past the + of a collapsed node).
  P.labelGap = function (i) { return this.screenRadius(i) + (this.collapsed(i) ? 16 : 4); };

  // Pixels the whole label of node i needs beside its node (the value part estimated).
  P.labelWidth = function (i) {
    if (!this.valueW) this.valueW = this.measure(`${VSEP}000.0 ms · 00.0%`);
    return this.measure(this.labelMark(i) + this.model.name(i)) + this.valueW + 20;
  };

  // Which metric the labels' "%" is a share of: the color metric when it adds up (not a
  // change or a ratio), else the page's `share` metric (a ratio page's numerator time), the
  // size metric or the priority metric; and its total over the roots (the whole profile).
  // A page of one profile lists in data.totals the metrics whose values are parts of a
  // total (cctool.model.shares: not a ratio, not a max over ranks); no other gets a "%".
  P.labelTotals = function () {
    const m = this.model, enc = this.enc, parts = m.data.totals;
    const total = (k) => {
      if (k < 0 || !m.metrics[k] || m.metrics[k].group === "change") return 0;
      if (parts && !Object.prototype.hasOwnProperty.call(parts, m.metrics[k].name)) return 0;
      const vals = m.shownValues(k, true);
      let t = 0;
      for (const r of m.roots) if (Number.isFinite(vals[r])) t += vals[r];
      return t > 0 ? t : 0;
    };
    const index = (name) => (m.metricIndex.has(name) ? m.metricIndex.get(name) : -1);
    const share = [enc.color, index(m.data.share), enc.size, index(m.data.priority)].find((k) => total(k) > 0);
    this.share = share === undefined ? null : { metric: share, total: total(share) };
  };

  // "12.3 ms · 45.1%": the color metric's value, and the node's share of the total.
  P.valueText = function (i, folded = this.collapsed(i)) {
    const m = this.model, k = this.enc.color, metric = m.metrics[k], v = m.value(k, i, folded);
    const parts = [];
    if (Number.isFinite(v)) parts.push(CCT.formatValue(v, metric.unit, metric.whole));
    const s = this.share;
    if (s) {
      const x = m.value(s.metric, i, folded);
      if (Number.isFinite(x)) parts.push(CCT.formatPercent(x / s.total));
    }
    return parts.join(" · ");
  };

  // The label of node i shortened to `room` pixels (characters are estimated, then checked).
  P.fitLabel = function (i, room, atEnd) {
    const whole = this.labelText(i, Infinity, atEnd);
    if (this.measure(whole) <= room) return whole;
    let chars = Math.floor(room / this.charW), text = this.labelText(i, chars, atEnd);
    while (text && this.measure(text) > room) text = this.labelText(i, chars = Math.floor(chars * 0.9), atEnd);
    return text;
  };

  P.labelText = function (i, chars, atEnd) {
    const mark = this.labelMark(i);
    if (chars - mark.length < 3) return "";
    return mark + CCT.elide(this.model.name(i), chars - mark.length, atEnd);
  };

  // What precedes a name: ✎ for a node with a note, ◀/▶ for a one-sided node of a comparison.
  P.labelMark = function (i) {
    return (CCT.notes && CCT.notes.has(i) ? "✎ " : "") + (this.model.marker ? MARK[this.model.marker[i]] : "");
  };

  P.measure = function (text) {
    let w = this.widths.get(text);
    if (w === undefined) {
      w = this.ctx.measureText(text).width;
      if (this.widths.size > 20000) this.widths.clear();
      this.widths.set(text, w);
    }
    return w;
  };

  P.showLabels = function (boxes) {
    const pool = this.labelPool;
    while (pool.length < boxes.length) {
      const el = document.createElementNS(NS, "text"), name = document.createElementNS(NS, "tspan");
      const value = document.createElementNS(NS, "tspan");
      value.setAttribute("class", "value");
      el.append(name, value);
      this.labelsG.appendChild(el);
      pool.push(el);
    }
    boxes.forEach(([box, text, i, value], k) => {
      const el = pool[k];
      el.setAttribute("x", box[0].toFixed(1));
      el.setAttribute("y", (box[1] + FONT).toFixed(1));
      el.dataset.id = i;
      el.firstChild.textContent = text;
      el.lastChild.textContent = value ? VSEP + value : "";
      el.removeAttribute("display");
      el.classList.toggle("selected", this.selection.has(i));
      el.classList.toggle("match", !!this.match[i]);
      el.classList.toggle("current", i === this.current);
      el.classList.toggle("hot", !!this.model.hot[i]);
    });
    for (let k = boxes.length; k < pool.length; k++) pool[k].setAttribute("display", "none");
  };
})();
