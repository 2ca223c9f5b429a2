// undo.js: the tree view's state in the page's undo history (history.js), the ↶/↷ buttons
// and Ctrl-Z / Ctrl-Shift-Z / Ctrl-Y. Tracked: the metrics and colormap, the prune range,
// which subtrees are open, and the selection. Every user change ends in a re-layout, a
// selection or an encoding event; those of one task are committed together, once the task
// is over, under a label that names what changed ("collapse/expand", "prune", ...).
(() => {
  const $ = (id) => document.getElementById(id);
  const DOUBLE_CLICK_MS = 400;
  const ids = (arr) => { const out = []; for (let i = 0; i < arr.length; i++) if (arr[i]) out.push(i); return out; };

  function start() {
    const { model, state, view, panels, search } = CCT, H = CCT.history;
    const sel = ["color-metric", "size-metric", "colormap"], box = ["invert", "log"];
    H.track("encoding", () => ({ ...Object.fromEntries(sel.map((id) => [id, $(id).value])),
      ...Object.fromEntries(box.map((id) => [id, $(id).checked])) }), (enc) => {
      sel.forEach((id) => { $(id).value = enc[id]; });
      box.forEach((id) => { $(id).checked = enc[id]; });
      view.setEncoding(panels.encoding());
      panels.showLegend();
    });
    H.track("prune", () => [$("prune-min").value, $("prune-max").value, panels.pruneZero !== false],
      ([a, b, zero]) => {
        $("prune-min").value = a;
        $("prune-max").value = b;
        panels.pruneZero = zero;
        panels.applyPrune();
      });
    H.track("tree", () => [ids(state.expanded), ids(state.opened)], ([open, opened]) => {
      state.expanded.fill(0);
      state.opened.fill(0);
      open.forEach((i) => { state.expanded[i] = 1; });
      opened.forEach((i) => { state.opened[i] = 1; });
      view.refresh();
    });
    H.track("selection", () => [...view.selection].sort((a, b) => a - b),
      (s) => view.select(s, "replace"));

    // One commit per task, labelled by what happened in it. The first click of a double-click
    // selects: its commit waits for the double-click, so that collapsing a node is one step.
    let labels = [], timer = 0, clickAt = -1e9;
    const flush = () => { const l = labels; labels = []; timer = 0; H.commit(l.join(" + ")); };
    const note = (label) => {
      if (H.restoring) return;
      const wait = performance.now() - clickAt < 50 ? DOUBLE_CLICK_MS : 0;
      if (!timer || wait) { clearTimeout(timer); timer = setTimeout(flush, wait); }
      if (!labels.includes(label)) labels.push(label);
    };
    view.svg.addEventListener("click", (e) => { if (e.detail === 1) clickAt = performance.now(); }, true);
    view.svg.addEventListener("dblclick", () => { clickAt = -1e9; }, true);
    CCT.undoNote = note;
    CCT.undoPending = () => labels.length > 0;
    view.on("refresh", () => note("collapse/expand"));
    view.on("select", () => note("selection"));
    view.on("encoding", () => note("color/size"));
    ["prune-min", "prune-max"].forEach((id) => $(id).addEventListener("input", () => note("prune")));
    $("hot-path").addEventListener("click", () => note("hot path"), true);
    $("reset").addEventListener("click", () => note("reset"), true);
    $("more").addEventListener("click", () => note("more"), true);
    if (search) search.on(() => note("search"));

    const undo = $("undo"), redo = $("redo");
    const show = () => {
      undo.disabled = !H.canUndo();
      redo.disabled = !H.canRedo();
      undo.title = H.canUndo() ? `Undo ${H.nextUndo()} (Ctrl+Z)` : "Nothing to undo";
      redo.title = H.canRedo() ? `Redo ${H.nextRedo()} (Ctrl+Shift+Z, Ctrl+Y)` : "Nothing to redo";
    };
    H.on(show);
    undo.addEventListener("click", () => H.undo());
    redo.addEventListener("click", () => H.redo());
    document.addEventListener("keydown", (e) => {
      if (!(e.ctrlKey || e.metaKey) || /^(INPUT|TEXTAREA)$/.test(document.activeElement.tagName)) return;
      const k = e.key.toLowerCase();
      if (k === "z" && !e.shiftKey) { e.preventDefault(); H.undo(); }
      else if ((k === "z" && e.shiftKey) || k === "y") { e.preventDefault(); H.redo(); }
    });
    // The first view (and an --expand-hot start, a bridge's selection) is the starting point.
    setTimeout(() => { labels = []; H.start(); }, 0);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
