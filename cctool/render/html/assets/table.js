// table.js: the tree-table (hpcviewer's main view): indented rows that open and close, with
// aligned value columns (inclusive, exclusive, % of the total, the other metrics), sorted by
// a click on a column header. Only the rows in (or near) the window have elements, so a view
// of 200,000 rows scrolls as lightly as one of 20. The rows themselves are in rows.js.
//
// Selection is the page's (CCT.view.select / "select"): a top-down row is its node; a
// bottom-up or flat row of a function selects that function's nodes. The table's own state
// (view, sort, open rows, scope) is part of the page's undo history as "table".
(() => {
  const $ = (id) => document.getElementById(id);
  const H = 22, OVER = 12, INDENT = 14, NAME_W = 260, NUM_W = 92;
  const FIRST_ROWS = 40; // the first top-down view opens the heaviest rows until about this many show

  // A change's cell tint on a diverging scale centred at 0, as the page's RdBu map: red
  // where B is higher, blue where it is lower, stronger with the size of the change relative
  // to the column's largest (a change % past 100% is as strong as it gets).
  function divergingTint(v, c) {
    if (!Number.isFinite(v) || v === 0) return Number.isNaN(v) || v === 0 ? "" : tint(v, 1);
    if (c.scale === undefined) {
      let hi = 0;
      for (const x of c.values) if (Number.isFinite(x)) hi = Math.max(hi, Math.abs(x));
      c.scale = c.percent ? Math.min(hi, 100) || 1 : hi || 1;
    }
    return tint(v, Math.min(1, Math.abs(v) / c.scale));
  }
  const tint = (v, f) => (v > 0 ? `rgba(214, 96, 77, ${(0.08 + 0.5 * f).toFixed(3)})` : `rgba(67, 147, 195, ${(0.08 + 0.5 * f).toFixed(3)})`);

  CCT.Table = class Table {
    constructor(model, view) {
      Object.assign(this, { model, view, sets: {}, cursor: -1, scopeKind: "" });
      Object.assign(this, { body: $("table-body"), rowsEl: $("table-rows"), spacer: $("table-spacer"), head: $("table-head") });
      this.byName = null;
      this.body.addEventListener("scroll", () => { this.head.scrollLeft = this.body.scrollLeft; this.draw(); });
      this.body.addEventListener("keydown", (e) => this.key(e));
      this.rowsEl.addEventListener("click", (e) => this.click(e));
      this.rowsEl.addEventListener("dblclick", (e) => { const i = this.rowAt(e); if (i >= 0) this.toggle(i); });
      this.rowsEl.addEventListener("mousemove", (e) => this.hover(e));
      this.rowsEl.addEventListener("mouseleave", () => view.tooltip.hide());
      document.querySelectorAll("#table-kinds button").forEach((b) => {
        b.addEventListener("click", () => this.setKind(b.dataset.kind, true));
        if (b.dataset.kind !== "top-down" && !(model.data.viewKinds || []).includes(b.dataset.kind)) {
          b.disabled = true;
          b.title = "This page has no such rows (ratios, percentages and medians do not add up over calls)";
        }
      });
      $("reset").addEventListener("click", () => this.reset());
      document.querySelectorAll("#table-scopes button").forEach((b) => b.addEventListener("click", () => this.setScope(b.dataset.scope, true)));
      view.on("select", () => { this.byName = null; this.draw(); this.showButtons(); });
      new ResizeObserver(() => this.draw()).observe(this.body);
      this.setKind("top-down", false);
      CCT.history.track("table", () => this.getState(), (s) => this.setState(s));
    }

    rowsOf(kind) {
      if (!(kind in this.sets)) {
        const set = CCT.rowSet(this.model, kind);
        if (set && !set.error) {
          if (kind === "top-down") { this.model.hotPath.forEach((i) => set.reveal(i)); set.openBudget(FIRST_ROWS); }
          else set.openHeaviest(kind === "flat" ? 4 : 1);
        }
        this.sets[kind] = set;
      }
      return this.sets[kind];
    }

    // ---------------------------------------------------------------- state
    setKind(kind, user) {
      const set = this.rowsOf(kind);
      if (!set) return;
      if (user && this.scopeKind) { // a view chosen by hand is the whole view
        Object.values(this.sets).forEach((s) => s && !s.error && s.setScope(null));
        this.scopeKind = "";
      }
      this.kind = kind;
      this.rows = set.error ? null : set;
      if (this.rows && this.scopeKind && !this.rows.scope) this.scopeKind = "";
      document.querySelectorAll("#table-kinds button").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.kind === kind)));
      this.cursor = -1;
      this.header();
      this.body.scrollTop = 0;
      this.draw();
      this.showButtons();
      if (user) CCT.history.commit(`table: ${kind}`);
    }

    // "callers": the bottom-up rows of the selected node's function; "callees": the top-down
    // rows below the selected nodes; "": the whole view.
    setScope(scope, user) {
      const sel = [...this.view.selection].sort((a, b) => a - b);
      if (scope === this.scopeKind || !sel.length) scope = "";
      Object.values(this.sets).forEach((s) => s && !s.error && s.setScope(null));
      this.scopeKind = scope;
      if (scope === "callees") {
        this.setKind("top-down", false);
        this.rows.setScope(sel);
      } else if (scope === "callers") {
        this.setKind("bottom-up", false);
        if (this.rows) {
          const names = new Set(sel.map((i) => this.model.name(i)));
          const tops = Array.from(this.rows.tops).filter((t) => names.has(this.rows.name(t)));
          tops.forEach((t) => this.rows.openHeaviest(8, t));
          this.rows.setScope(tops);
        }
      }
      this.scopeKind = this.rows && this.rows.scope ? scope : "";
      this.showButtons();
      this.draw();
      if (user) CCT.history.commit(`table: ${scope || "whole view"}`);
    }

    // Back to the first view: top-down, heaviest first, the first rows open.
    reset() {
      this.sets = {};
      this.scopeKind = "";
      this.setKind("top-down", false);
      CCT.history.commit("table: first view");
    }

    getState() {
      const open = {};
      Object.entries(this.sets).forEach(([k, s]) => { if (s && !s.error) open[k] = s.openIds(); });
      const r = this.rows;
      return { kind: this.kind, open, sort: r ? [r.sort.col, r.sort.desc, r.sort.abs] : null,
        scope: this.scopeKind, tops: r && r.scope ? Array.from(r.scope) : null };
    }

    setState(s) {
      Object.entries(s.open || {}).forEach(([k, ids]) => { const set = this.rowsOf(k); if (set && !set.error) set.setOpenIds(ids); });
      Object.values(this.sets).forEach((x) => x && !x.error && x.setScope(null));
      this.setKind(s.kind, false);
      const was = this.rows && this.rows.sort;
      if (was && s.sort && (was.col !== s.sort[0] || was.desc !== s.sort[1] || was.abs !== !!s.sort[2])) this.rows.sortBy(s.sort[0], s.sort[1], !!s.sort[2]);
      if (this.rows && s.tops) this.rows.setScope(s.tops);
      this.scopeKind = s.scope || "";
      this.header();
      this.showButtons();
      this.draw();
    }

    showButtons() {
      const none = !this.view.selection.size;
      document.querySelectorAll("#table-scopes button").forEach((b) => {
        b.disabled = none && b.dataset.scope !== this.scopeKind;
        b.setAttribute("aria-pressed", String(b.dataset.scope === this.scopeKind));
      });
      const set = this.sets[this.kind], note = $("table-note");
      note.textContent = set && set.error ? set.error : (set && set.note) || "";
    }

    // ---------------------------------------------------------------- drawing
    // The name column takes the room the value columns leave (at least NAME_W and 40%).
    nameWidth() {
      const w = this.body.clientWidth || 0; // at least 40% of the pane: more columns scroll
      return Math.max(NAME_W, 0.4 * w, w - this.numWidths().reduce((a, b) => a + b, 0) - 2);
    }

    // A value column is as wide as its header needs (at least NUM_W)
    // (a change column keeps room for its "|▾|")
    numWidths() { return this.rows ? this.rows.cols.map((c) => Math.max(NUM_W, Math.ceil((c.label.length + (c.change ? 3 : 0)) * 7.6) + 28)) : []; }

    template() { return `${this.nameW}px ${this.numWidths().map((w) => `${w}px`).join(" ")}`; }

    header() {
      const r = this.rows, cells = [];
      const cell = (label, title, col) => {
        const b = document.createElement("button");
        b.className = col < 0 ? "th name" : "th num";
        b.title = `${title} (click to sort)`;
        const on = r && r.sort.col === col;
        // |▾|: by the size of the change, largest first (either way it went)
        b.textContent = label + (on ? (r.sort.abs ? " |▾|" : r.sort.desc ? " ▾" : " ▴") : "");
        if (on && r.sort.abs) b.title = `${title}: sorted by the size of the change (click to sort)`;
        b.setAttribute("aria-sort", on ? (r.sort.desc ? "descending" : "ascending") : "none");
        b.addEventListener("click", () => this.sortBy(col));
        cells.push(b);
      };
      this.nameW = this.nameWidth();
      cell(this.kind === "flat" ? "module › file › function" : this.kind === "bottom-up" ? "function ‹ callers" : "calling context", "name", -1);
      if (r) r.cols.forEach((c, k) => cell(c.label, c.title, k));
      this.head.replaceChildren(...cells);
      this.head.style.gridTemplateColumns = this.template();
      this.rowsEl.style.width = this.spacer.style.width = `${this.nameW + this.numWidths().reduce((a, b) => a + b, 0)}px`;
    }

    // A click sorts by the column (largest first), again the other way round; a change
    // column cycles: by size of change |▾|, largest increase first ▾, largest decrease first ▴.
    sortBy(col) {
      const r = this.rows;
      if (!r) return;
      const same = r.sort.col === col, change = col >= 0 && r.cols[col].change;
      if (change) {
        const [desc, abs] = !same ? [true, true] : r.sort.abs ? [true, false] : r.sort.desc ? [false, false] : [true, true];
        r.sortBy(col, desc, abs);
      } else r.sortBy(col, same ? !r.sort.desc : col >= 0);
      this.header();
      this.draw();
      CCT.history.commit("table: sort");
    }

    draw() {
      const r = this.rows;
      if (!r || $("table-pane").hidden) { this.rowsEl.replaceChildren(); return; }
      if (this.nameW !== this.nameWidth()) this.header();
      const list = r.shown(), top = this.body.scrollTop, height = this.body.clientHeight || 600;
      this.spacer.style.height = `${list.length * H}px`;
      const a = Math.max(0, Math.floor(top / H) - OVER), b = Math.min(list.length, Math.ceil((top + height) / H) + OVER);
      const frag = document.createDocumentFragment(), template = this.template();
      for (let k = a; k < b; k++) frag.appendChild(this.rowEl(list[k], k, template));
      this.rowsEl.style.transform = `translateY(${a * H}px)`;
      this.rowsEl.replaceChildren(frag);
    }

    rowEl(i, k, template) {
      const r = this.rows, div = document.createElement("div"), node = r.node(i);
      let cls = "tr";
      if (k === this.cursor) cls += " cursor";
      if (node >= 0 && this.view.selection.has(node)) cls += " selected";
      else if (node < 0 && this.selectedName(r.name(i))) cls += " selected";
      if (node >= 0 && this.model.hot[node]) cls += " hot";
      if (node >= 0 && this.view.match[node]) cls += node === this.view.current ? " match current" : " match";
      div.className = cls;
      div.style.gridTemplateColumns = template;
      div.dataset.row = i;
      div.dataset.k = k;
      div.setAttribute("role", "row");
      div.setAttribute("aria-level", String(r.depth[i] + 1));
      if (r.hasChildren(i)) div.setAttribute("aria-expanded", String(!!r.open[i]));
      const name = document.createElement("span");
      name.className = "td name";
      name.setAttribute("role", "gridcell");
      // Past 40% of the column the indentation stops growing and the row shows its depth
      // (as the terminal viewer does), so deep names keep their room.
      const depth = r.depth[i] - (r.scope ? this.scopeDepth(i) : 0), room = 0.4 * this.nameW;
      name.style.paddingLeft = `${4 + Math.min(depth * INDENT, room)}px`;
      const tw = document.createElement("span");
      tw.className = "tw";
      tw.textContent = r.hasChildren(i) ? (r.open[i] ? "▾" : "▸") : "";
      const role = r.role(i), label = document.createElement("span");
      label.className = "label";
      // Modules and files by their base name (the whole path on hover), as hpcviewer does.
      const full = r.name(i), path = (role === "module" || role === "file") && full.lastIndexOf("/") >= 0;
      label.textContent = path ? full.slice(full.lastIndexOf("/") + 1) || full : full;
      label.title = full;
      name.append(tw);
      if (depth * INDENT > room) {
        const d = document.createElement("span");
        d.className = "depth";
        d.textContent = `${depth}·`;
        name.appendChild(d);
      }
      const mark = node >= 0 && this.model.marker ? this.model.marker[node] : 0;
      if (mark) { // a row of one profile only, as the tree marks its node
        const m = document.createElement("span");
        m.className = `mark m${mark}`;
        m.textContent = mark === 1 ? "◀" : "▶";
        m.title = (this.model.data.markerLabels || ["only in A", "only in B"])[mark - 1];
        name.appendChild(m);
      }
      name.appendChild(label);
      if (role && role !== "node" && role !== "function" && role !== "caller") {
        const tag = document.createElement("span");
        tag.className = "role";
        tag.textContent = role;
        name.appendChild(tag);
      }
      div.appendChild(name);
      r.cols.forEach((c) => {
        const td = document.createElement("span"), v = c.values[i];
        td.className = (c.percent && !c.signed ? "td num pct" : "td num") + (v === 0 ? " zero" : "");
        td.setAttribute("role", "gridcell");
        const plus = c.change && c.diverge && v > 0 ? "+" : ""; // a change spelled as the text table does
        td.textContent = c.signed && Number.isNaN(v) ? "—" : plus + (c.percent ? CCT.formatPercent(v / 100) : CCT.formatValue(v, c.unit, c.whole));
        if (c.percent && !c.signed && Number.isFinite(v)) td.style.setProperty("--w", `${Math.min(100, Math.max(0, v))}%`);
        if (c.diverge) td.style.background = divergingTint(v, c);
        div.appendChild(td);
      });
      return div;
    }

    scopeDepth(i) { let j = i; while (j >= 0 && !this.rows.scope.includes(j)) j = this.rows.parent[j]; return j >= 0 ? this.rows.depth[j] : 0; }

    selectedName(name) {
      if (!this.view.selection.size) return false;
      if (!this.byName) this.byName = new Set([...this.view.selection].map((i) => this.model.name(i)));
      return this.byName.has(name);
    }

    // ---------------------------------------------------------------- interaction
    rowAt(e) { const el = e.target.closest(".tr"); return el ? Number(el.dataset.row) : -1; }

    click(e) {
      const el = e.target.closest(".tr");
      if (!el) return;
      const i = Number(el.dataset.row);
      this.cursor = Number(el.dataset.k);
      this.body.focus({ preventScroll: true });
      if (e.target.classList.contains("tw")) this.toggle(i);
      else this.choose(i, e.ctrlKey || e.metaKey || e.shiftKey ? "toggle" : "replace");
    }

    hover(e) {
      const i = this.rowAt(e), node = i >= 0 ? this.rows.node(i) : -1;
      if (node >= 0) this.view.tooltip.show(node, e, this.view.enc.color, false);
      else this.view.tooltip.hide();
    }

    // The nodes a row stands for: itself (top-down) or its function's nodes.
    nodesOf(i) {
      const r = this.rows, node = r.node(i);
      if (node >= 0) return [node];
      const role = r.role(i);
      if (role !== "function" && role !== "caller") return [];
      const name = r.name(i), out = [];
      for (let j = 0; j < this.model.n; j++) if (this.model.name(j) === name) out.push(j);
      return out;
    }

    choose(i, mode) {
      this.fromTable = true; // the page's undo history records the selection (undo.js)
      try { this.view.select(this.nodesOf(i), mode); } finally { this.fromTable = false; }
    }

    toggle(i) {
      this.rows.setOpen(i, !this.rows.open[i]);
      const k = this.rows.shown().indexOf(i);
      if (k >= 0) this.cursor = k;
      this.draw();
      CCT.history.commit(this.rows.open[i] ? "open row" : "close row");
    }

    // Show node i (top-down): open its ancestors and scroll to it.
    reveal(i) {
      if (this.fromTable || this.kind !== "top-down" || !this.rows) return;
      if (this.rows.scope) this.setScope("", false);
      this.rows.reveal(i);
      const k = this.rows.shown().indexOf(i);
      if (k < 0) return;
      this.cursor = k;
      this.scrollTo(k);
      this.draw();
    }

    scrollTo(k) {
      const top = k * H, h = this.body.clientHeight;
      if (top < this.body.scrollTop) this.body.scrollTop = top;
      else if (top + H > this.body.scrollTop + h) this.body.scrollTop = top + H - h + 2;
    }

    key(e) {
      const r = this.rows;
      if (!r) return;
      const list = r.shown(), page = Math.max(1, Math.floor(this.body.clientHeight / H) - 1);
      let k = this.cursor < 0 ? 0 : this.cursor;
      const i = list[k];
      switch (e.key) {
        case "ArrowDown": k += 1; break;
        case "ArrowUp": k -= 1; break;
        case "PageDown": k += page; break;
        case "PageUp": k -= page; break;
        case "Home": k = 0; break;
        case "End": k = list.length - 1; break;
        case "ArrowRight":
          if (r.hasChildren(i) && !r.open[i]) { this.toggle(i); e.preventDefault(); return; }
          if (r.hasChildren(i)) k += 1;
          break;
        case "ArrowLeft":
          if (r.open[i]) { this.toggle(i); e.preventDefault(); return; }
          if (r.parent[i] >= 0 && (!r.scope || !r.scope.includes(i))) k = list.indexOf(r.parent[i]);
          break;
        case "Enter": this.choose(i, e.ctrlKey || e.metaKey ? "toggle" : "replace"); e.preventDefault(); return;
        case " ": if (r.hasChildren(i)) this.toggle(i); e.preventDefault(); return;
        default: return;
      }
      e.preventDefault();
      this.cursor = Math.max(0, Math.min(list.length - 1, k));
      this.scrollTo(this.cursor);
      this.draw();
    }
  };
})();
