// explore.js: search, the icicle pane and the hot path, wired to the tree once the page
// has started (after panels.js's start-up, which builds CCT.model, CCT.view, CCT.panels).
(() => {
  const $ = (id) => document.getElementById(id);

  // Show node i in the tree: undo a prune that hides it, open its ancestors, centre it
  // at a scale where its label and its neighbours' can be read.
  function showInTree(i) {
    const { state, view, panels } = CCT;
    if (!state.kept[i]) panels.resetPrune(false);
    state.reveal(i);
    view.refresh();
    if (!$("tree-pane").hidden) view.centerOn(i, true);
    if (CCT.table) CCT.table.reveal(i);
  }

  // Which of the table, the tree and the icicle are shown (at least one; two or three side
  // by side). The table is the first view; `table` left out keeps it hidden.
  function showPanes(tree, icicle, table = false) {
    if (!tree && !icicle && !table) table = true;
    $("table-pane").hidden = !table;
    $("tree-pane").hidden = !tree;
    $("icicle-pane").hidden = !icicle;
    $("show-table").setAttribute("aria-pressed", String(table));
    $("show-tree").setAttribute("aria-pressed", String(tree));
    $("show-icicle").setAttribute("aria-pressed", String(icicle));
    $("stage").classList.toggle("split", [tree, icicle, table].filter((x) => x).length > 1);
    if (tree && !CCT.view.touched) CCT.view.fit(true); // its size may have changed
    if (icicle) CCT.icicle.draw();
    if (table && CCT.table) CCT.table.draw();
  }

  function bindPanes() {
    const shown = () => ["tree-pane", "icicle-pane", "table-pane"].map((id) => !$(id).hidden);
    [["show-tree", 0], ["show-icicle", 1], ["show-table", 2]].forEach(([id, k]) => {
      $(id).addEventListener("click", () => {
        const s = shown();
        s[k] = !s[k];
        showPanes(s[0], s[1], s[2] || (!s[0] && !s[1]));
      });
    });
  }

  // The hot path as the selection, opened and centred on its last node in every view.
  function selectHotPath() {
    const { model, view, icicle } = CCT, path = [...model.hotPath];
    if (!path.length) return;
    const last = path[path.length - 1];
    showInTree(last);
    view.select(path, "replace");
    if (icicle.shown()) icicle.ensureVisible(last);
  }

  // The Hot path menu: which root the path starts from (the busiest, not idle, first).
  function fillHotRoots() {
    const { model } = CCT, hr = model.data.hotRoots, menu = $("hot-root");
    if (!hr || !hr.roots || hr.roots.length < 2) { menu.hidden = true; return; }
    const pm = model.metrics[model.metricIndex.get(model.data.priority) ?? 0];
    const unit = pm?.unit || "", whole = !!pm?.whole;
    hr.roots.forEach((r, k) => {
      const o = document.createElement("option");
      o.value = String(k);
      const idle = r.value > 0 && r.busy < 0.5 * r.value ? ", mostly idle" : "";
      o.textContent = `${CCT.elide(r.name, 24)} (${CCT.formatValue(r.value, unit, whole)}${idle})`;
      o.title = `hot path from ${r.name}: ${r.path.length} nodes`;
      menu.appendChild(o);
    });
    menu.value = String(hr.start);
    menu.addEventListener("change", () => {
      const path = hr.roots[Number(menu.value)].path;
      model.hotPath = Int32Array.from(path);
      model.hot.fill(0);
      path.forEach((i) => { model.hot[i] = 1; });
      $("hot-path").title = `Select and show the hot path of ${model.data.priority} (${path.length} nodes)`;
      selectHotPath();
    });
  }

  function start() {
    const { model, state, view } = CCT;
    const icicle = new CCT.Icicle(model, state, view, showInTree);
    const search = new CCT.Search(model, state, view, (i) => {
      showInTree(i);
      if (icicle.shown()) icicle.ensureVisible(i);
    });
    search.on(() => { icicle.draw(); if (CCT.table) CCT.table.draw(); });
    const table = new CCT.Table(model, view);
    Object.assign(CCT, { icicle, search, showPanes, selectHotPath, table });
    $("tree-pane").appendChild($("status")); // the tree's status line stays on the tree
    bindPanes();
    fillHotRoots();
    showPanes(false, false, true);
    const hot = $("hot-path");
    hot.disabled = !model.hotPath.length;
    hot.title = model.hotPath.length
      ? `Select and show the hot path of ${model.data.priority} (${model.hotPath.length} nodes)`
      : "This page has no hot path";
    hot.addEventListener("click", selectHotPath);
    // A prune changes the tree's extent: fit it again (after the panel applied it).
    ["prune-min", "prune-max"].forEach((id) => $(id).addEventListener("input", () => view.fit(true)));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
