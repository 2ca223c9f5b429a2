// icicle.js: the icicle (roots on top) or flame graph (roots at the bottom) on a canvas.
// A node is a bar as wide as its share of the page's inclusive priority metric and colored
// like its circle in the tree. Bars narrower than half a pixel are not drawn (nor is
// anything below them), so a redraw costs what is visible, not the profile's size.
// The selection is the tree view's (view.selection); clicking a bar zooms into it.
(() => {
  const RH = 18, FONT = 11, MIN_W = 0.5, LABEL_W = 28, ZOOM_MS = 260;
  const FOOT = 26; // a flame graph's roots sit above the status line

  CCT.Icicle = class Icicle {
    // `reveal(i)`: show node i in the tree view too.
    constructor(model, state, view, reveal) {
      Object.assign(this, { model, state, view, reveal });
      const $ = (id) => document.getElementById(id);
      Object.assign(this, { pane: $("icicle-pane"), canvas: $("icicle"), crumbs: $("crumbs"), flameButton: $("flame") });
      this.ctx = this.canvas.getContext("2d");
      this.focus = -1; // -1: every root
      this.win = [0, 1]; // the visible part of the root bar, as fractions of its width
      this.scroll = 0; // rows scrolled away from the roots
      this.flame = false;
      this.colors = null;
      this.widths = new Map();
      this.font = `${FONT}px ${getComputedStyle(document.body).fontFamily}`;
      this.ctx.font = this.font;
      this.charW = this.ctx.measureText("abcdefghijklmnopqrstuvwxyz_ABCDEFG").width / 33;
      this.layout();
      this.bind();
    }

    // Global positions: roots share [0, 1] by weight; children split their parent's bar by
    // weight, heaviest first. Children heavier together than their parent (which an
    // inclusive metric does not allow, but a difference can) are scaled to fit.
    layout() {
      const m = this.model, n = m.n, w = m.weight, x0 = new Float64Array(n), wd = new Float64Array(n);
      const total = m.roots.reduce((s, r) => s + w[r], 0) || 1;
      let at = 0;
      for (const r of m.roots) { x0[r] = at; wd[r] = w[r] / total; at += wd[r]; }
      const stack = m.roots.slice();
      let over = 0;
      while (stack.length) {
        const p = stack.pop(), kids = m.children(p);
        let sum = 0;
        for (const c of kids) sum += w[c];
        if (sum > w[p] * (1 + 1e-9)) over++;
        const scale = wd[p] / (Math.max(sum, w[p]) || 1);
        let cx = x0[p];
        for (const c of kids) { x0[c] = cx; wd[c] = w[c] * scale; cx += wd[c]; stack.push(c); }
      }
      Object.assign(this, { x0, wd });
      // Say so rather than draw bars that silently disagree with their tooltips.
      document.getElementById("icicle-note").textContent = over
        ? `children add up to more than their parent at ${over} node${over > 1 ? "s" : ""}: bars scaled to fit` : "";
    }

    bind() {
      const c = this.canvas;
      c.addEventListener("click", (e) => this.onClick(e));
      c.addEventListener("mousemove", (e) => this.onHover(e));
      c.addEventListener("mouseleave", () => this.view.tooltip.hide());
      c.addEventListener("wheel", (e) => {
        e.preventDefault();
        if (e.ctrlKey || e.metaKey) { this.zoomAround(e); return; }
        const max = Math.max(0, (this.model.maxDepth + 1) * RH - this.canvas.clientHeight / 2);
        // Deeper rows lie below in an icicle and above in a flame graph.
        this.scroll = Math.min(max, Math.max(0, this.scroll + (this.flame ? -e.deltaY : e.deltaY)));
        this.draw();
      }, { passive: false });
      document.addEventListener("keydown", (e) => {
        if (e.key !== "Escape" || !this.shown() || this.focus < 0 || e.target.tagName === "INPUT") return;
        this.zoomTo(this.model.parent[this.focus]); // one level out
      });
      this.flameButton.addEventListener("click", () => this.setFlame(!this.flame));
      new ResizeObserver(() => this.draw()).observe(c);
      this.view.on("select", () => this.draw());
      this.view.on("refresh", () => this.draw());
      this.view.on("encoding", () => { this.colors = null; this.draw(); });
    }

    shown() { return !this.pane.hidden; }

    setFlame(flame) {
      this.flame = flame;
      this.flameButton.setAttribute("aria-pressed", String(flame));
      this.draw();
    }

    // ---------------------------------------------------------------- geometry
    sx(gx) { return ((gx - this.win[0]) / (this.win[1] - this.win[0])) * this.canvas.clientWidth; }
    rowY(d) {
      const top = d * RH - this.scroll;
      return this.flame ? this.canvas.clientHeight - FOOT - top - RH : top;
    }

    // Screen rectangle of node i ([x, y, width, height]), clipped to the canvas width.
    rectOf(i) {
      const a = this.sx(this.x0[i]), b = this.sx(this.x0[i] + this.wd[i]), W = this.canvas.clientWidth;
      return [Math.max(0, a), this.rowY(this.model.depth[i]), Math.min(W, b) - Math.max(0, a), RH];
    }

    // ---------------------------------------------------------------- drawing
    color(i) {
      if (!this.colors) this.colors = new Array(this.model.n);
      let c = this.colors[i];
      if (c === undefined) {
        const fill = this.view.colorScale.color(this.model.value(this.view.enc.color, i, false));
        const [r, g, b] = (fill.match(/\d+/g) || [208, 208, 208]).map(Number);
        c = this.colors[i] = [fill, 0.299 * r + 0.587 * g + 0.114 * b < 140 ? "#fff" : "#1f2328"];
      }
      return c;
    }

    // Bars in view, found by walking down from the roots and stopping at bars narrower
    // than MIN_W or outside the canvas.
    visibleBars() {
      const m = this.model, W = this.canvas.clientWidth, H = this.canvas.clientHeight;
      const kept = this.state.kept, out = [], stack = m.roots.slice();
      while (stack.length) {
        const i = stack.pop();
        if (!kept[i]) continue;
        const a = this.sx(this.x0[i]), b = this.sx(this.x0[i] + this.wd[i]);
        if (b - a < MIN_W || b < 0 || a > W) continue;
        const y = this.rowY(m.depth[i]);
        if (this.flame ? y + RH < 0 : y > H) continue; // deeper rows are further out
        if (this.flame ? y <= H : y + RH >= 0) out.push(i);
        const kids = m.children(i);
        for (let k = kids.length - 1; k >= 0; k--) stack.push(kids[k]);
      }
      return out;
    }

    draw() {
      if (!this.shown() || !this.view.enc) return;
      const t0 = performance.now();
      const ctx = this.ctx, W = this.canvas.clientWidth, H = this.canvas.clientHeight;
      const dpr = window.devicePixelRatio || 1;
      if (this.canvas.width !== Math.round(W * dpr) || this.canvas.height !== Math.round(H * dpr)) {
        this.canvas.width = Math.round(W * dpr);
        this.canvas.height = Math.round(H * dpr);
      }
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, W, H);
      ctx.font = this.font;
      ctx.textBaseline = "middle";
      const bars = this.visibleBars(), marked = [];
      this.hits = new Map();
      this.labelsDrawn = []; // [node, name, value, room, whole name's width]: for tests
      this.view.labelTotals();
      for (const i of bars) {
        const [x, y, w] = this.rectOf(i), [fill, ink] = this.color(i);
        ctx.fillStyle = fill;
        ctx.fillRect(x, y, w > 3 ? w - 1 : w, RH - 1);
        if (w >= LABEL_W) this.label(i, x, y, w, ink);
        const row = this.model.depth[i];
        if (!this.hits.has(row)) this.hits.set(row, []);
        this.hits.get(row).push([x, x + w, i]);
        if (this.view.selection.has(i) || this.view.match[i] || this.model.hot[i]) marked.push(i);
      }
      this.outline(marked);
      this.noteMarks(bars);
      this.drawCrumbs();
      this.lastDraw = { ms: performance.now() - t0, bars: bars.length };
    }

    // "name  value · %" when the bar has room for it all, else the whole name, else the
    // name shortened in the middle (measured, never squeezed).
    label(i, x, y, w, ink) {
      const ctx = this.ctx, room = w - 6, name = this.model.name(i);
      const width = (t) => {
        let v = this.widths.get(t);
        if (v === undefined) { v = ctx.measureText(t).width; this.widths.set(t, v); }
        return v;
      };
      let text = name;
      if (width(name) > room) {
        let chars = Math.floor(room / this.charW);
        text = chars >= 3 ? CCT.elide(name, chars, false) : "";
        while (text && width(text) > room) text = (chars = Math.floor(chars * 0.9)) >= 3 ? CCT.elide(name, chars, false) : "";
      }
      if (!text) return;
      ctx.fillStyle = ink;
      ctx.fillText(text, x + 3, y + RH / 2);
      let value = text === name ? this.view.valueText(i, false) : "";
      const tw = width(text);
      if (value && tw + ctx.measureText(`  ${value}`).width <= room) {
        ctx.globalAlpha = 0.75;
        ctx.fillText(`  ${value}`, x + 3 + tw, y + RH / 2);
        ctx.globalAlpha = 1;
      } else {
        value = "";
      }
      this.labelsDrawn.push([i, text, value, room, width(name)]);
    }

    // A note: a purple corner at the bar's top right.
    noteMarks(bars) {
      if (!CCT.notes || !CCT.notes.size) return;
      const ctx = this.ctx;
      ctx.fillStyle = "#8250df";
      for (const i of bars) {
        if (!CCT.notes.has(i)) continue;
        const [x, y, w] = this.rectOf(i), s = Math.min(9, w);
        ctx.beginPath();
        ctx.moveTo(x + w - s - 1, y);
        ctx.lineTo(x + w - 1, y);
        ctx.lineTo(x + w - 1, y + s);
        ctx.fill();
      }
    }

    // Strokes over the fills: hot path, search matches, the current match and the selection.
    outline(ids) {
      const ctx = this.ctx, v = this.view, styles = [
        [(i) => this.model.hot[i], "#bc4c00", 2],
        [(i) => v.match[i], "#d4a72c", 2],
        [(i) => i === v.current, "#9a6700", 3.5],
        [(i) => v.selection.has(i), "#0969da", 2.5],
      ];
      for (const [test, color, width] of styles) {
        ctx.strokeStyle = color;
        ctx.lineWidth = width;
        for (const i of ids) {
          if (!test(i)) continue;
          const [x, y, w] = this.rectOf(i);
          ctx.strokeRect(x + width / 2, y + width / 2, Math.max(w - width - 1, 1), RH - 1 - width);
        }
      }
    }

    // ---------------------------------------------------------------- focus and breadcrumb
    // Zoom so that node i (or every root, for -1) fills the width, in a short transition.
    zoomTo(i, animate = true) {
      this.focus = i;
      const to = i < 0 ? [0, 1] : [this.x0[i], this.x0[i] + (this.wd[i] || 1e-12)];
      const scrollTo = i < 0 ? 0 : Math.max(0, (this.model.depth[i] - 1) * RH);
      const from = this.win.slice(), scroll0 = this.scroll, t0 = performance.now();
      cancelAnimationFrame(this.anim);
      const stepFrame = (now) => {
        const u = animate ? Math.min(1, (now - t0) / ZOOM_MS) : 1, e = u * u * (3 - 2 * u);
        this.win = [from[0] + (to[0] - from[0]) * e, from[1] + (to[1] - from[1]) * e];
        this.scroll = scroll0 + (scrollTo - scroll0) * e;
        this.draw();
        if (u < 1) this.anim = requestAnimationFrame(stepFrame);
      };
      stepFrame(animate ? t0 : t0 + ZOOM_MS);
    }

    // Ctrl+wheel: widen or narrow the window around the pointer (the focus stays).
    zoomAround(e) {
      const r = this.canvas.getBoundingClientRect(), f = (e.clientX - r.left) / r.width;
      const [a, b] = this.win, at = a + f * (b - a);
      const span = Math.min(1, Math.max(1e-9, (b - a) * Math.exp(e.deltaY * 0.002)));
      const lo = Math.min(1 - span, Math.max(0, at - f * span));
      this.win = [lo, lo + span];
      this.draw();
    }

    // Bring node i into view when it is outside the window or too thin to see.
    ensureVisible(i) {
      const [x, , w] = this.rectOf(i), focus = this.focus;
      const inside = focus < 0 || (i >= focus && i < focus + this.model.size[focus]);
      if (!inside || w < 4 || x >= this.canvas.clientWidth) this.zoomTo(this.model.parent[i] >= 0 ? this.model.parent[i] : i);
    }

    drawCrumbs() {
      const m = this.model, path = this.focus < 0 ? [] : m.path(this.focus);
      if (this.crumbsFor === this.focus) return;
      this.crumbsFor = this.focus;
      const button = (text, i, title) => {
        const b = document.createElement("button");
        b.textContent = text;
        b.title = title;
        b.dataset.id = i;
        b.addEventListener("click", () => this.zoomTo(i));
        return b;
      };
      const items = [button("all", -1, "Every root")];
      const shown = path.length > 8 ? [...path.slice(0, 2), null, ...path.slice(-5)] : path;
      for (const j of shown) {
        items.push(document.createTextNode(CCTValues.rules.path));
        items.push(j === null ? document.createTextNode("…") : button(CCT.elide(m.name(j), 28), j, m.name(j)));
      }
      this.crumbs.replaceChildren(...items);
    }

    // ---------------------------------------------------------------- pointer
    at(e) {
      const r = this.canvas.getBoundingClientRect(), px = e.clientX - r.left, py = e.clientY - r.top;
      for (const [row, bars] of this.hits || []) {
        const y = this.rowY(row);
        if (py < y || py >= y + RH) continue;
        const bar = bars.find(([a, b]) => px >= a && px < b);
        return bar ? bar[2] : -1;
      }
      return -1;
    }

    onHover(e) {
      const i = this.at(e);
      if (i < 0) { this.view.tooltip.hide(); return; }
      this.view.tooltip.show(i, e, this.view.enc.color, false);
    }

    // Click: zoom into the bar and select it (shown in the tree too); Ctrl/Shift-click
    // adds or removes it from the selection without zooming.
    onClick(e) {
      const i = this.at(e);
      if (i < 0) return;
      if (e.ctrlKey || e.metaKey || e.shiftKey) { this.view.select([i], "toggle"); return; }
      this.zoomTo(i);
      this.view.select([i], "replace");
      this.reveal(i);
    }
  };
})();
