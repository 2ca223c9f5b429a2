// view.js: the node-link drawing (SVG), pan and zoom, labels, tooltip, click and brush.
// Only visible nodes get elements; labels live outside the zoomed group so that their
// text stays readable and can be placed without overlaps in screen space.
(() => {
  const NS = "http://www.w3.org/2000/svg";
  const LEVEL = 150, ROW = 24, RMIN = 3.5, RMAX = 12, FONT = 11, MAX_LABELS = 900;
  const MARK = ["", "◀ ", "▶ "];

  CCT.View = class View {
    constructor(model, state, settings) {
      this.model = model;
      this.state = state;
      this.settings = settings;
      const $ = (id) => document.getElementById(id);
      Object.assign(this, {
        svg: $("tree"), viewport: $("viewport"), links: $("links"), nodesG: $("nodes"),
        labelsG: $("labels"), brushRect: $("brush"), tip: $("tooltip"), stage: $("stage"),
      });
      const n = model.n;
      this.x = new Float64Array(n);
      this.y = new Float64Array(n);
      this.first = new Int32Array(n);
      this.last = new Int32Array(n);
      this.t = { x: 40, y: 30, k: 1 };
      this.order = [];
      this.circles = new Map();
      this.selection = new Set();
      this.brushMode = false;
      this.handlers = { select: [], refresh: [] };
      this.labelPool = [];
      this.widths = new Map();
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
      this.colorScale = CCT.colorScale(m.metrics[enc.color].values, enc.colormap, enc.invert, enc.log);
      this.sizeScale = enc.size < 0 ? null
        : CCT.sizeScale(m.metrics[enc.size].values, enc.log, RMIN, RMAX);
      if (this.order.length) { this.sortLabels(); this.style(); this.scheduleLabels(); }
    }

    collapsed(i) { return !this.expandedVisible(i) && this.state.isCollapsed(i); }
    expandedVisible(i) { return this.first[i] >= 0; }
    colorValue(i) { return this.model.value(this.enc.color, i, this.collapsed(i)); }
    radius(i) {
      return this.sizeScale ? this.sizeScale.radius(this.model.value(this.enc.size, i, this.collapsed(i)))
        : (RMIN + RMAX) / 2;
    }

    // ---------------------------------------------------------------- layout and drawing
    // Re-layout after the visible set changed; `anchor` keeps its place on the screen.
    refresh(anchor) {
      const before = anchor === undefined ? null : this.screen(anchor);
      this.order = this.state.visible();
      this.layout();
      this.render();
      if (before) {
        this.t.x += before[0] - (this.t.x + this.t.k * this.x[anchor]);
        this.t.y += before[1] - (this.t.y + this.t.k * this.y[anchor]);
      }
      this.applyTransform();
      this.emit("refresh");
    }

    // Leaves take one row each in preorder; a parent sits midway between its first and last
    // visible child; trees of a forest are stacked with one empty row between them.
    layout() {
      const m = this.model, { x, y, first, last } = this;
      first.fill(-1);
      last.fill(-1);
      for (const i of this.order) {
        const p = m.parent[i];
        if (p >= 0) { if (first[p] < 0) first[p] = i; last[p] = i; }
      }
      let row = 0;
      this.order.forEach((i, k) => {
        x[i] = m.depth[i] * LEVEL;
        if (m.parent[i] < 0 && k > 0) row += 1;
        if (first[i] < 0) y[i] = row++ * ROW;
      });
      for (let k = this.order.length - 1; k >= 0; k--) {
        const i = this.order[k];
        if (first[i] >= 0) y[i] = (y[first[i]] + y[last[i]]) / 2;
      }
      this.rows = row;
      this.sortLabels();
    }

    render() {
      const m = this.model, { x, y } = this, parts = [];
      const frag = document.createDocumentFragment();
      this.circles.clear();
      for (const i of this.order) {
        const p = m.parent[i];
        if (p >= 0) {
          const mx = (x[p] + x[i]) / 2;
          parts.push(`M${x[p]},${y[p]}C${mx},${y[p]} ${mx},${y[i]} ${x[i]},${y[i]}`);
        }
        const c = document.createElementNS(NS, "circle");
        c.setAttribute("cx", x[i]);
        c.setAttribute("cy", y[i]);
        c.dataset.id = i;
        frag.appendChild(c);
        this.circles.set(i, c);
      }
      this.links.setAttribute("d", parts.join(""));
      this.nodesG.replaceChildren(frag);
      this.style();
    }

    // Colors, sizes and marks of the drawn nodes (no re-layout).
    style() {
      const m = this.model, plus = [];
      for (const [i, c] of this.circles) {
        const r = this.radius(i), folded = this.collapsed(i);
        c.setAttribute("r", r.toFixed(2));
        c.setAttribute("fill", this.colorScale.color(this.colorValue(i)));
        let cls = "node";
        if (folded) {
          cls += " collapsed";
          plus.push(`M${this.x[i] + r + 3},${this.y[i]}h8M${this.x[i] + r + 7},${this.y[i] - 4}v8`);
        }
        if (m.marker && m.marker[i]) cls += m.marker[i] === 1 ? " only-a" : " only-b";
        if (this.selection.has(i)) cls += " selected";
        c.setAttribute("class", cls);
      }
      let mark = this.nodesG.querySelector("path.plus");
      if (!mark) { mark = document.createElementNS(NS, "path"); mark.setAttribute("class", "plus"); }
      mark.setAttribute("d", plus.join(""));
      this.nodesG.appendChild(mark);
    }

    // Label candidates, best first: leaves, then deeper nodes, then larger values.
    sortLabels() {
      const d = this.model.depth, v = new Map(this.order.map((i) => [i, Math.abs(this.colorValue(i)) || 0]));
      const leaf = (i) => (this.first[i] < 0 ? 1 : 0);
      this.labelOrder = this.order.slice().sort((a, b) => leaf(b) - leaf(a) || d[b] - d[a]
        || v.get(b) - v.get(a) || a - b);
    }

    screen(i) { return [this.t.x + this.t.k * this.x[i], this.t.y + this.t.k * this.y[i]]; }

    applyTransform() {
      const { x, y, k } = this.t;
      this.viewport.setAttribute("transform", `translate(${x},${y}) scale(${k})`);
      this.scheduleLabels();
    }

    scheduleLabels() {
      if (this.pending) return;
      this.pending = requestAnimationFrame(() => { this.pending = 0; this.drawLabels(); });
    }

    // Greedy placement in screen space with a grid of placed boxes; a label that would
    // overlap one already placed is dropped.
    drawLabels() {
      const m = this.model, k = this.t.k, W = this.svg.clientWidth, H = this.svg.clientHeight;
      const grid = new Map(), cell = 64, boxes = [];
      const cells = (b, fn) => {
        for (let gx = Math.floor(b[0] / cell); gx <= Math.floor((b[0] + b[2]) / cell); gx++)
          for (let gy = Math.floor(b[1] / cell); gy <= Math.floor((b[1] + b[3]) / cell); gy++)
            if (fn(`${gx},${gy}`)) return true;
        return false;
      };
      const hits = (b) => cells(b, (key) => (grid.get(key) || []).some((o) =>
        b[0] < o[0] + o[2] && o[0] < b[0] + b[2] && b[1] < o[1] + o[3] && o[1] < b[1] + b[3]));
      for (const i of this.labelOrder) {
        if (boxes.length >= MAX_LABELS) break;
        const [sx, sy] = this.screen(i);
        if (sx < -LEVEL * k - 40 || sx > W + 10 || sy < -8 || sy > H + 8) continue;
        const r = this.radius(i) * k, leaf = this.first[i] < 0;
        const room = leaf ? 46 * this.charW : LEVEL * k - r - RMAX * k - 10;
        const text = this.labelText(i, Math.floor(room / this.charW));
        if (!text) continue;
        const w = this.measure(text), gap = r + (this.collapsed(i) ? 13 * k + 3 : 4);
        const box = [leaf ? sx + gap : sx - gap - w, sy - FONT / 2 - 2, w, FONT + 3];
        if (box[0] > W || box[0] + w < 0 || hits(box)) continue;
        cells(box, (key) => { if (!grid.has(key)) grid.set(key, []); grid.get(key).push(box); });
        boxes.push([box, text, i]);
      }
      this.showLabels(boxes);
    }

    labelText(i, chars) {
      const mark = this.model.marker ? MARK[this.model.marker[i]] : "";
      if (chars - mark.length < 3) return "";
      return mark + CCT.elide(this.model.name(i), chars - mark.length);
    }

    measure(text) {
      let w = this.widths.get(text);
      if (w === undefined) {
        w = this.ctx.measureText(text).width;
        if (this.widths.size > 20000) this.widths.clear();
        this.widths.set(text, w);
      }
      return w;
    }

    showLabels(boxes) {
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
      });
      for (let k = boxes.length; k < pool.length; k++) pool[k].setAttribute("display", "none");
    }

    // ---------------------------------------------------------------- view changes
    // The whole visible tree, or with `readable` no smaller than labels need, left-aligned
    // and centred on the heaviest root's hot path when it does not fit.
    fit(readable) {
      const W = this.svg.clientWidth, H = this.svg.clientHeight;
      let maxX = 0;
      for (const i of this.order) if (this.x[i] > maxX) maxX = this.x[i];
      const w = maxX + 220, h = Math.max(this.rows - 1, 1) * ROW + 40;
      let k = Math.min(W / w, H / h, 1.5);
      if (readable) k = Math.min(1, Math.max(k, 0.65));
      const roots = this.model.roots, y0 = 20 * k + 10;
      const hot = roots.length ? H / 2 - k * this.y[roots[0]] : y0;
      this.t = { k, x: Math.min(W * 0.12, 130), y: h * k <= H ? y0 : Math.min(y0, Math.max(H - h * k, hot)) };
      this.applyTransform();
    }

    centerOn(i) {
      this.touched = true;
      const W = this.svg.clientWidth, H = this.svg.clientHeight;
      this.t.x = W / 2 - this.t.k * this.x[i];
      this.t.y = H / 2 - this.t.k * this.y[i];
      this.applyTransform();
    }

    zoomAt(px, py, factor) {
      this.touched = true;
      const k = Math.min(8, Math.max(0.03, this.t.k * factor)), f = k / this.t.k;
      this.t = { k, x: px - (px - this.t.x) * f, y: py - (py - this.t.y) * f };
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

    // ---------------------------------------------------------------- events
    bindEvents() {
      const svg = this.svg, id = (e) => (e.target.classList && e.target.classList.contains("node")
        ? Number(e.target.dataset.id) : -1);
      svg.addEventListener("wheel", (e) => {
        e.preventDefault();
        const r = svg.getBoundingClientRect();
        this.zoomAt(e.clientX - r.left, e.clientY - r.top, Math.exp(-e.deltaY * 0.0015));
      }, { passive: false });
      svg.addEventListener("click", (e) => {
        const i = id(e);
        if (i >= 0) this.select([i], e.ctrlKey || e.metaKey || e.shiftKey ? "toggle" : "replace");
      });
      svg.addEventListener("dblclick", (e) => {
        const i = id(e);
        if (i < 0) return;
        this.state.toggle(i, Math.min(this.settings.budget, 60));
        this.refresh(i);
      });
      svg.addEventListener("pointerdown", (e) => { if (e.button === 0 && id(e) < 0) this.startDrag(e); });
      svg.addEventListener("pointermove", (e) => this.moveDrag(e));
      svg.addEventListener("pointerup", (e) => this.endDrag(e));
      this.nodesG.addEventListener("mouseover", (e) => { const i = id(e); if (i >= 0) this.showTip(i, e); });
      this.nodesG.addEventListener("mousemove", (e) => { if (!this.tip.hidden) this.placeTip(e); });
      this.nodesG.addEventListener("mouseout", () => { this.tip.hidden = true; });
      // Until the user moves the view, keep the first view fitted to the frame's size (a
      // notebook frame may get its size only after the page has started).
      new ResizeObserver(() => (this.touched ? this.scheduleLabels() : this.fit(true))).observe(svg);
    }

    startDrag(e) {
      const r = this.svg.getBoundingClientRect();
      this.drag = { brush: e.shiftKey || this.brushMode, add: e.ctrlKey || e.metaKey,
        x0: e.clientX - r.left, y0: e.clientY - r.top, tx: this.t.x, ty: this.t.y, moved: false };
      this.svg.setPointerCapture(e.pointerId);
      this.touched = true;
    }

    moveDrag(e) {
      const d = this.drag;
      if (!d) return;
      const r = this.svg.getBoundingClientRect(), px = e.clientX - r.left, py = e.clientY - r.top;
      if (Math.abs(px - d.x0) + Math.abs(py - d.y0) > 3) d.moved = true;
      if (d.brush) {
        const b = this.brushRect;
        b.setAttribute("x", Math.min(px, d.x0));
        b.setAttribute("y", Math.min(py, d.y0));
        b.setAttribute("width", Math.abs(px - d.x0));
        b.setAttribute("height", Math.abs(py - d.y0));
        b.setAttribute("visibility", "visible");
      } else {
        this.t.x = d.tx + px - d.x0;
        this.t.y = d.ty + py - d.y0;
        this.applyTransform();
      }
    }

    endDrag(e) {
      const d = this.drag;
      if (!d) return;
      this.drag = null;
      this.brushRect.setAttribute("visibility", "hidden");
      if (!d.moved) { if (!d.add && !e.shiftKey) this.select([], "replace"); return; }
      if (!d.brush) return;
      const r = this.svg.getBoundingClientRect(), px = e.clientX - r.left, py = e.clientY - r.top;
      const [x0, x1] = [Math.min(px, d.x0), Math.max(px, d.x0)];
      const [y0, y1] = [Math.min(py, d.y0), Math.max(py, d.y0)];
      const inside = this.order.filter((i) => {
        const [sx, sy] = this.screen(i);
        return sx >= x0 && sx <= x1 && sy >= y0 && sy <= y1;
      });
      this.select(inside, d.add ? "add" : "replace");
    }

    // ---------------------------------------------------------------- tooltip
    showTip(i, e) {
      const m = this.model, tip = this.tip, folded = this.collapsed(i);
      const el = (tag, cls, text) => {
        const x = document.createElement(tag);
        if (cls) x.className = cls;
        if (text !== undefined) x.textContent = text;
        return x;
      };
      const parts = [el("div", "tt-name", m.name(i))];
      const where = [m.attr("type", i), this.sourceOf(i), m.attr("module", i)].filter((s) => s);
      if (where.length) parts.push(el("div", "tt-sub", where.join(" · ")));
      if (m.marker && m.marker[i]) parts.push(el("div", `tt-marker m${m.marker[i]}`, this.settings.markerLabels[m.marker[i] - 1]));
      const path = m.path(i).slice(0, -1).map((j) => CCT.elide(m.name(j), 40));
      if (path.length > 9) path.splice(2, path.length - 8, `… ${path.length - 8} more …`);
      if (path.length) parts.push(el("div", "tt-path", path.join(" › ")));
      const table = el("table", "tt-metrics");
      m.metrics.forEach((metric, k) => {
        const tr = el("tr", k === this.enc.color ? "primary" : "");
        const sum = folded && metric.summable;
        tr.append(el("th", "", (sum ? "Σ " : "") + metric.name), el("td", "", CCT.formatValue(m.value(k, i, folded), metric.unit)),
          el("td", "unit", CCT.SCALES[metric.unit] ? "" : metric.unit));
        table.appendChild(tr);
      });
      parts.push(table);
      if (folded) parts.push(el("div", "tt-note", `collapsed: ${m.size[i] - 1} nodes below; Σ = summed over the subtree`));
      tip.replaceChildren(...parts);
      tip.hidden = false;
      this.placeTip(e);
    }

    sourceOf(i) {
      const file = this.model.attr("file", i), line = this.model.attr("line", i);
      if (!file) return "";
      const base = String(file).slice(String(file).lastIndexOf("/") + 1);
      return line ? `${base}:${line}` : base;
    }

    placeTip(e) {
      const r = this.stage.getBoundingClientRect(), tip = this.tip;
      let x = e.clientX + 14, y = e.clientY + 14;
      if (x + tip.offsetWidth > r.right) x = Math.max(r.left, e.clientX - 14 - tip.offsetWidth);
      if (y + tip.offsetHeight > r.bottom) y = Math.max(r.top, e.clientY - 14 - tip.offsetHeight);
      tip.style.left = `${x}px`;
      tip.style.top = `${y}px`;
    }
  };

  CCT.View.ROW = ROW;
})();
