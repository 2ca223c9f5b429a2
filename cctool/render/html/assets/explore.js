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
  }

  function showPanes(tree, icicle) {
    $("tree-pane").hidden = !tree;
    $("icicle-pane").hidden = !icicle;
    $("show-tree").setAttribute("aria-pressed", String(tree));
    $("show-icicle").setAttribute("aria-pressed", String(icicle));
    $("stage").classList.toggle("split", tree && icicle);
    if (icicle) CCT.icicle.draw();
  }

  function bindPanes() {
    // One of the two views stays shown: hiding the last one shows the other.
    $("show-tree").addEventListener("click", () => {
      const tree = $("tree-pane").hidden;
      showPanes(tree, !tree || !$("icicle-pane").hidden);
    });
    $("show-icicle").addEventListener("click", () => {
      const icicle = $("icicle-pane").hidden;
      showPanes(!icicle || !$("tree-pane").hidden, icicle);
    });
  }

  // The hot path as the selection, opened and centred on its last node in both views.
  function selectHotPath() {
    const { model, view, icicle } = CCT, path = [...model.hotPath];
    if (!path.length) return;
    const last = path[path.length - 1];
    showInTree(last);
    view.select(path, "replace");
    if (icicle.shown()) icicle.ensureVisible(last);
  }

  function start() {
    const { model, state, view } = CCT;
    const icicle = new CCT.Icicle(model, state, view, showInTree);
    const search = new CCT.Search(model, state, view, (i) => {
      showInTree(i);
      if (icicle.shown()) icicle.ensureVisible(i);
    });
    search.on(() => icicle.draw());
    Object.assign(CCT, { icicle, search, showPanes, selectHotPath });
    bindPanes();
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
