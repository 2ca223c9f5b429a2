// view.js: the node-link drawing (SVG), pan and zoom, labels and highlights.
// Positions are computed in screen space here (no SVG transform), so the horizontal and
// vertical scales can differ: zooming out packs rows closer while levels stay apart and
// the tree keeps the window's width instead of shrinking to a thin strip. Past CULL
// visible nodes only those near the window get elements, so a zoom step stays cheap.
// Labels are placed in screen space without overlaps.
//
// Selection API (used by the panels, the icicle, search and the notebook widget):
// view.selection (a Set of node ids), view.select(ids, "replace" | "add" | "toggle"),
// view.on("select", fn) after every change; view.on("refresh", fn) after a re-layout;
// view.on("encoding", fn) after a color or size change. The hover card is view.tooltip
// (tooltip.js, shared with the icicle), pointer handling is in pointer.js and label
// placement in labels.js; search, icicle and hot path are wired up in explore.js.
(() => {
  const NS = "http://www.w3.org/2000/svg";
  const ROW = 24, RMIN = 3.5, RMAX = 12, FONT = 11, MAX_LABELS = 900;
  const CULL = 1000, LEAF_CHARS = 46, TOP = FONT + 12, BOTTOM = 28;
  const INDENT = 26; // a child's distance right of its parent, at kx = 1
  const READABLE_K = 0.65; // rows 15.6 px apart: every label has its own line
  const ROW_MIN = 1.5; // rows at least 1.5 px apart: zooming further shows nothing new
  const MARK = ["", "◀ ", "▶ "];

  CCT.View = class View {
    constructor(model, state, settings) {
      this.model = model;
      this.state = state;
      this.settings = settings;
      const $ = (id) => document.getElementById(id);
      Object.assign(this, {
        svg: $("tree"), links: $("links"), hotLinks: $("hot-links"), nodesG: $("nodes"),
        labelsG: $("labels"), brushRect: $("brush"), stage: $("stage"),
      });
      const n = model.n;
      this.x = new Float64Array(n);
      this.y = new Float64Array(n);
      this.first = new Int32Array(n);
      this.stamp = new Uint32Array(n);
      this.stampNow = 0;
      this.match = new Uint8Array(n);
      this.current = -1;
      this.t = { x: 40, y: 30, k: 1, kx: 1 };
      this.order = [];
      this.circles = new Map();
      this.selection = new Set();
      this.brushMode = false;
      this.handlers = { select: [], refresh: [], encoding: [] };
      this.labelPool = [];
      this.widths = new Map();
      this.tooltip = new CCT.Tooltip(model, settings);
      this.ctx = document.createElement("canvas").getContext("2d");
      this.ctx.font = `${FONT}px ${getComputedStyle(document.body).fontFamily}`;
      this.charW = this.ctx.measureText("abcdefghijklmnopqrstuvwxyz_ABCDEFG").width / 33;
      this.bindEvents();
    }

    on(what, fn) { this.handlers[what].push(fn); }
    emit(what) { this.handlers[what].forEach((fn) => fn(this)); }

    // ---------------------------------------------------------------- encoding
    setEncoding(enc) {
      this.enc = enc;
      const m = this.model;
      this.colorScale = CCT.colorScale(m.metrics[enc.color].values, enc.colormap, enc.invert, enc.log,
        CCT.isRatio(m.metrics[enc.color]), m.weight);
      this.sizeScale = enc.size < 0 ? null
        : CCT.sizeScale(m.metrics[enc.size].values, enc.log, RMIN, RMAX);
      if (this.order.length) { this.sortLabels(); this.style(); this.draw(); this.scheduleLabels(); }
      this.emit("encoding");
    }

    collapsed(i) { return !this.expandedVisible(i) && this.state.isCollapsed(i); }
    expandedVisible(i) { return this.first[i] >= 0; }
    colorValue(i) { return this.model.value(this.enc.color, i, this.collapsed(i)); }
    radius(i) {
      return this.sizeScale ? this.sizeScale.radius(this.model.value(this.enc.size, i, this.collapsed(i)))
        : (RMIN + RMAX) / 2;
    }
    // Radius on screen: follows the zoom, but a node stays a visible dot and within its row.
    screenRadius(i) {
      const k = this.t.k;
      return Math.min(this.radius(i) * Math.min(1.5, Math.max(0.3, k)), Math.max(1.2, 0.55 * ROW * k));
    }

    // Search results: every match highlighted, `current` the one in focus (-1: none).
    setMatches(ids, current) {
      this.match.fill(0);
      ids.forEach((i) => { this.match[i] = 1; });
      this.current = current;
      this.matchIds = ids;
      this.style();
      this.scheduleLabels();
    }

    // ---------------------------------------------------------------- layout and drawing
    // Re-layout after the visible set changed; `anchor` keeps its place on the screen.
    refresh(anchor) {
      const before = anchor === undefined ? null : this.screen(anchor);
      this.order = this.state.visible();
      this.layout();
      if (before) {
        const [sx, sy] = this.screen(anchor);
        this.t.x += before[0] - sx;
        this.t.y += before[1] - sy;
      }
      this.applyTransform();
      this.style(); // reused elements: what is collapsed may have changed
      this.tooltip.hide();
      this.emit("refresh");
    }

    // An indented node-link layout: every visible node has its own row, in preorder
    // (heaviest child first, so the hot path runs down the top), and sits INDENT further
    // right than its parent; links are elbows from the parent down to the child's row. The
    // room right of a node is its own, so its label (name, value, %) is never cut by the
    // drawing, only by the window's edge. Trees of a forest are half a row apart.
    layout() {
      const m = this.model, { x, y, first } = this;
      first.fill(-1);
      this.isShown = new Uint8Array(m.n);
      let row = 0, maxX = 0;
      this.order.forEach((i, k) => {
        this.isShown[i] = 1;
        const p = m.parent[i];
        if (p >= 0 && first[p] < 0) first[p] = i;
        if (p < 0 && k > 0) row += 0.5;
        y[i] = row++ * ROW;
        x[i] = m.depth[i] * INDENT;
        if (x[i] > maxX) maxX = x[i];
      });
      Object.assign(this, { rows: row, maxX });
      this.byY = this.order.length > CULL ? Int32Array.from(this.order) : null; // already by y
      this.sortLabels();
    }

    // The nodes that get elements: all, or past CULL those in (or linked into) the window.
    drawn() {
      if (!this.byY) return this.order;
      const H = this.svg.clientHeight, { k, y: ty } = this.t, y = this.y, ids = this.byY;
      const lo = (-3 * RMAX - ty) / k, hi = (H + 3 * RMAX - ty) / k;
      let a = 0, b = ids.length;
      while (a < b) { const c = (a + b) >> 1; if (y[ids[c]] < lo) a = c + 1; else b = c; }
      const out = [], seen = this.newStamp(), add = (i) => {
        if (this.stamp[i] !== seen) { this.stamp[i] = seen; out.push(i); }
      };
      for (let c = a; c < ids.length && y[ids[c]] <= hi; c++) {
        const i = ids[c], p = this.model.parent[i];
        add(i);
        if (p >= 0) add(p);
        this.visibleChildren(i, 300).forEach(add);
      }
      // Links that cross the window from a parent above it to children below: a subtree
      // fills a block of rows, so those parents are ancestors of the row above the window.
      for (let j = a > 0 ? ids[a - 1] : -1; j >= 0; j = this.model.parent[j]) {
        this.visibleChildren(j, Infinity).filter((c) => y[c] >= lo).slice(0, 300).forEach(add);
      }
      return out;
    }

    visibleChildren(i, max) {
      if (this.first[i] < 0) return [];
      const kids = this.model.children(i), out = [];
      for (let c = 0; c < kids.length && out.length < max; c++) if (this.state.kept[kids[c]]) out.push(kids[c]);
      return out;
    }

    newStamp() { return ++this.stampNow; }

    // Elements and links of the drawn nodes at the current zoom.
    draw() {
      const m = this.model, ids = this.drawn(), old = this.circles, circles = new Map();
      const links = [], hot = [], plus = [];
      const frag = document.createDocumentFragment();
      for (const i of ids) {
        let c = old.get(i);
        if (c) old.delete(i);
        else { c = document.createElementNS(NS, "circle"); c.dataset.id = i; this.styleNode(i, c); frag.appendChild(c); }
        circles.set(i, c);
        const [sx, sy] = this.screen(i), r = this.screenRadius(i);
        c.setAttribute("cx", sx.toFixed(1));
        c.setAttribute("cy", sy.toFixed(1));
        c.setAttribute("r", r.toFixed(2));
        const p = m.parent[i];
        if (p >= 0 && this.first[p] >= 0) {
          const [px, py] = this.screen(p);
          (m.hot[i] && m.hot[p] ? hot : links).push(`M${px.toFixed(1)},${py.toFixed(1)}V${sy.toFixed(1)}H${sx.toFixed(1)}`);
        }
        if (this.collapsed(i)) plus.push(`M${(sx + r + 3).toFixed(1)},${sy.toFixed(1)}h8M${(sx + r + 7).toFixed(1)},${(sy - 4).toFixed(1)}v8`);
      }
      old.forEach((c) => c.remove());
      this.circles = circles;
      this.nodesG.appendChild(frag);
      this.links.setAttribute("d", links.join(""));
      this.hotLinks.setAttribute("d", hot.join(""));
      this.plusMark().setAttribute("d", plus.join(""));
    }

    plusMark() {
      let mark = this.nodesG.querySelector("path.plus");
      if (!mark) { mark = document.createElementNS(NS, "path"); mark.setAttribute("class", "plus"); }
      this.nodesG.appendChild(mark); // last, so it is drawn over the circles
      return mark;
    }

    // Colors and marks of the drawn nodes (no re-layout).
    style() { for (const [i, c] of this.circles) this.styleNode(i, c); }

    styleNode(i, c) {
      const m = this.model;
      let cls = "node";
      if (this.collapsed(i)) cls += " collapsed";
      if (m.marker && m.marker[i]) cls += m.marker[i] === 1 ? " only-a" : " only-b";
      if (m.hot[i]) cls += " hot";
      if (this.match[i]) cls += i === this.current ? " match current" : " match";
      if (this.selection.has(i)) cls += " selected";
      c.setAttribute("fill", this.colorScale.color(this.colorValue(i)));
      c.setAttribute("class", cls);
    }

    // Label candidates, best first: heavier nodes (by the page's priority metric), then
    // higher ones.
    sortLabels() {
      const w = this.model.weight;
      this.labelOrder = this.order.slice().sort((a, b) => w[b] - w[a] || a - b);
    }

    screen(i) { return [this.t.x + this.t.kx * this.x[i], this.t.y + this.t.k * this.y[i]]; }

    applyTransform() {
      this.draw();
      this.scheduleLabels();
    }

    scheduleLabels() {
      if (this.pending) return;
      this.pending = requestAnimationFrame(() => { this.pending = 0; this.drawLabels(); });
    }

    // ---------------------------------------------------------------- view changes
    // Horizontal scale at which every shown label (name, value and %) ends inside the
    // window, as far as the indentation allows (never below a quarter).
    fillScale() {
      const W = this.svg.clientWidth - this.leftRoom() - 8;
      let kx = 1;
      for (const i of this.order) {
        if (!this.x[i]) continue;
        const need = Math.min(this.labelWidth(i), W * 0.6);
        kx = Math.min(kx, (W - need - this.screenRadius(i) - 8) / this.x[i]);
      }
      return Math.max(0.25, kx);
    }

    leftRoom() { return RMAX + 8; }

    // Vertical scale that shows every visible row.
    fitAllScale() {
      return (this.svg.clientHeight - TOP - BOTTOM) / Math.max((this.rows - 1) * ROW, 1);
    }

    // The whole visible tree when its rows stay readable, else its top rows, where the
    // heaviest children and the hot path are. The first view (`readable`) keeps rows far
    // enough apart for every label (READABLE_K); Fit goes down to rows 6 px apart.
    fit(readable) {
      const H = this.svg.clientHeight, all = this.fitAllScale();
      const k = readable ? Math.min(1, Math.max(all, READABLE_K)) : Math.min(1.5, Math.max(all, 0.25));
      const h = Math.max(this.rows - 1, 0) * ROW * k;
      const y = h <= H - TOP - BOTTOM ? TOP + Math.min(40, (H - TOP - BOTTOM - h) / 2) : TOP;
      this.t = { k, kx: 1, x: this.leftRoom(), y };
      this.t.kx = this.fillScale();
      this.applyTransform();
    }

    // With `readable`, zoom in first when labels around node i would be too small to read.
    centerOn(i, readable) {
      this.touched = true;
      const W = this.svg.clientWidth, H = this.svg.clientHeight;
      if (readable) Object.assign(this.t, { k: Math.max(this.t.k, READABLE_K), kx: Math.max(this.t.kx, 0.8) });
      // Left of the middle, so that the label right of the node has room.
      this.t.x = Math.min(W / 2, Math.max(W / 4, W - this.labelWidth(i) - 60)) - this.t.kx * this.x[i];
      this.t.y = H / 2 - this.t.k * this.y[i];
      this.applyTransform();
    }

    zoomAt(px, py, factor) {
      this.touched = true;
      const t = this.t, kMin = Math.max(ROW_MIN / ROW, Math.min(this.fitAllScale(), 0.25));
      const k = Math.min(8, Math.max(kMin, t.k * factor));
      const kx = Math.min(8, Math.max(0.1, t.kx * factor));
      this.t = { k, kx, x: px - (px - t.x) * (kx / t.kx), y: py - (py - t.y) * (k / t.k) };
      this.applyTransform();
    }

    // mode: "replace", "add" or "toggle".
    select(ids, mode) {
      if (mode === "replace") this.selection.clear();
      for (const i of ids) {
        if (mode === "toggle" && this.selection.has(i)) this.selection.delete(i);
        else this.selection.add(i);
      }
      this.style();
      this.scheduleLabels();
      this.emit("select");
    }

    showTip(i, e) {
      this.tipNode = i;
      this.tooltip.show(i, e, this.enc.color, this.collapsed(i));
    }
  };

  CCT.View.ROW = ROW;
  Object.assign(CCT.View, { FONT, RMAX, MAX_LABELS, LEAF_CHARS, MARK, INDENT });
})();
