// pointer.js: mouse and touch on the node-link view: wheel zoom, drag to pan, click and
// brush to select, double-click to collapse, hover for the tooltip.
(() => {
  const P = CCT.View.prototype;

  P.bindEvents = function () {
    const svg = this.svg, id = (e) => (e.target.classList && e.target.classList.contains("node")
      ? Number(e.target.dataset.id) : -1);
    svg.addEventListener("wheel", (e) => {
      e.preventDefault();
      const r = svg.getBoundingClientRect();
      this.zoomAt(e.clientX - r.left, e.clientY - r.top, Math.exp(-e.deltaY * 0.0015));
    }, { passive: false });
    svg.addEventListener("click", (e) => {
      const i = id(e);
      if (i < 0) return;
      // The first click of a double-click selects too: remember what it replaced, so that
      // collapsing a subtree leaves the selection as it was.
      if (e.detail <= 1) this.beforeClick = new Set(this.selection);
      this.select([i], e.ctrlKey || e.metaKey || e.shiftKey ? "toggle" : "replace");
    });
    svg.addEventListener("dblclick", (e) => {
      const i = id(e);
      if (i < 0) return;
      if (this.beforeClick) this.restoreSelection(this.beforeClick);
      this.state.toggle(i, Math.min(this.settings.budget, 60));
      this.refresh(i);
    });
    svg.addEventListener("pointerdown", (e) => { if (e.button === 0 && id(e) < 0) this.startDrag(e); });
    svg.addEventListener("pointermove", (e) => this.moveDrag(e));
    svg.addEventListener("pointerup", (e) => this.endDrag(e));
    this.nodesG.addEventListener("mouseover", (e) => { const i = id(e); if (i >= 0) this.showTip(i, e); });
    // A re-layout hides the tooltip (its values may have changed): moving shows it again.
    this.nodesG.addEventListener("mousemove", (e) => {
      const i = id(e);
      if (i >= 0 && (this.tooltip.tip.hidden || this.tipNode !== i)) this.showTip(i, e);
      else if (i >= 0) this.tooltip.place(e);
    });
    this.nodesG.addEventListener("mouseout", () => this.tooltip.hide());
    // Until the user moves the view, keep the first view fitted to the frame's size (a
    // notebook frame may get its size only after the page has started; the icicle pane
    // may open beside the tree).
    // Once moved, what was in the middle stays in the middle.
    let size = [svg.clientWidth, svg.clientHeight];
    new ResizeObserver(() => {
      const now = [svg.clientWidth, svg.clientHeight];
      if (this.order.length && this.touched) {
        this.t.x += (now[0] - size[0]) / 2;
        this.t.y += (now[1] - size[1]) / 2;
        this.applyTransform();
      } else if (this.order.length) {
        this.fit(true);
      }
      size = now;
    }).observe(svg);
  };

  P.restoreSelection = function (ids) {
    this.beforeClick = null;
    this.select(ids, "replace");
  };

  P.startDrag = function (e) {
    const r = this.svg.getBoundingClientRect();
    this.drag = { brush: e.shiftKey || this.brushMode, add: e.ctrlKey || e.metaKey,
      x0: e.clientX - r.left, y0: e.clientY - r.top, tx: this.t.x, ty: this.t.y, moved: false };
    this.svg.setPointerCapture(e.pointerId);
    this.touched = true;
  };

  P.moveDrag = function (e) {
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
  };

  P.endDrag = function (e) {
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
  };
})();
