// labels.js: names beside the nodes of the tree view, placed in screen space without
// overlaps; the current search match, the hot path and the selection come first.
(() => {
  const P = CCT.View.prototype;
  const { FONT, RMAX, MAX_LABELS, MAX_GAP, LEAF_CHARS, MARK } = CCT.View;
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

  // Greedy placement in screen space with a grid of placed boxes; a label that would
  // overlap one already placed is dropped. Leaves are labelled after the node, interior
  // nodes before it, in the room between levels (elided at the end: see the tooltip).
  P.drawLabels = function () {
    const W = this.svg.clientWidth, H = this.svg.clientHeight, kx = this.t.kx, d = this.model.depth;
    const grid = new Map(), cell = 64, boxes = [];
    const cells = (b, fn) => {
      for (let gx = Math.floor(b[0] / cell); gx <= Math.floor((b[0] + b[2]) / cell); gx++)
        for (let gy = Math.floor(b[1] / cell); gy <= Math.floor((b[1] + b[3]) / cell); gy++)
          if (fn(`${gx},${gy}`)) return true;
      return false;
    };
    const hits = (b) => cells(b, (key) => (grid.get(key) || []).some((o) =>
      b[0] < o[0] + o[2] && o[0] < b[0] + b[2] && b[1] < o[1] + o[3] && o[1] < b[1] + b[3]));
    for (const i of this.labelCandidates()) {
      if (boxes.length >= MAX_LABELS) break;
      const [sx, sy] = this.screen(i);
      if (sx < -MAX_GAP * kx - 40 || sx > W + 10 || sy < -8 || sy > H + 8) continue;
      const r = this.screenRadius(i), leaf = this.first[i] < 0, gapX = d[i] > 0 ? (this.levelX[d[i]] - this.levelX[d[i] - 1]) * kx : sx + RMAX;
      const gap = r + (this.collapsed(i) ? 16 : 4);
      // A leaf label that would run past the right edge is shortened, not hidden.
      let room = leaf ? Math.min(LEAF_CHARS * this.charW, W - sx - gap - 4)
        : gapX - r - RMAX * Math.min(1.5, this.t.k) - 10;
      // The current search match gets its whole name, over the links if need be.
      if (i === this.current && !leaf) room = Math.max(room, Math.min(LEAF_CHARS * this.charW, sx - gap - 4));
      const text = this.fitLabel(i, room, !leaf || room < LEAF_CHARS * this.charW);
      if (!text) continue;
      const w = this.measure(text);
      const box = [leaf ? sx + gap : sx - gap - w, sy - FONT / 2 - 2, w, FONT + 3];
      if (box[0] > W || box[0] + w < 0 || hits(box)) continue;
      cells(box, (key) => { if (!grid.has(key)) grid.set(key, []); grid.get(key).push(box); });
      boxes.push([box, text, i]);
    }
    this.showLabels(boxes);
  };

  // The label of node i shortened to `room` pixels (characters are estimated, then checked).
  P.fitLabel = function (i, room, atEnd) {
    let chars = Math.floor(room / this.charW), text = this.labelText(i, chars, atEnd);
    while (text && this.measure(text) > room) text = this.labelText(i, chars = Math.floor(chars * 0.9), atEnd);
    return text;
  };

  P.labelText = function (i, chars, atEnd) {
    const mark = this.model.marker ? MARK[this.model.marker[i]] : "";
    if (chars - mark.length < 3) return "";
    return mark + CCT.elide(this.model.name(i), chars - mark.length, atEnd);
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
      const el = document.createElementNS(NS, "text");
      this.labelsG.appendChild(el);
      pool.push(el);
    }
    boxes.forEach(([box, text, i], k) => {
      const el = pool[k];
      el.setAttribute("x", box[0].toFixed(1));
      el.setAttribute("y", (box[1] + FONT).toFixed(1));
      el.dataset.id = i;
      el.textContent = text;
      el.removeAttribute("display");
      el.classList.toggle("selected", this.selection.has(i));
      el.classList.toggle("match", !!this.match[i]);
      el.classList.toggle("current", i === this.current);
      el.classList.toggle("hot", !!this.model.hot[i]);
    });
    for (let k = boxes.length; k < pool.length; k++) pool[k].setAttribute("display", "none");
  };
})();
