// bridge.js: the page inside the notebook widget's frame (widget.js). It tells the parent
// which nodes are selected, and selects the nodes the parent sends (revealing them), without
// echoing a selection back to where it came from.
(() => {
  if (window.parent === window) return;
  const post = (kind, extra) => window.parent.postMessage({ cctool: kind, ...extra }, "*");

  function start() {
    const { model, view, state, panels } = CCT;
    let applying = false;
    const sorted = () => [...view.selection].sort((a, b) => a - b);
    view.on("select", () => { if (!applying) post("selected", { ids: sorted() }); });
    if (CCT.onNotes) CCT.onNotes(() => { if (!applying) post("annotations", { list: CCT.annotationList() }); });
    window.addEventListener("message", (e) => {
      if (e.source !== window.parent || !e.data || e.data.cctool !== "annotations" || !Array.isArray(e.data.list)) return;
      const now = JSON.stringify(CCT.annotationList());
      const next = [...e.data.list].sort((a, b) => a.node - b.node);
      if (JSON.stringify(next.map((a) => ({ node: a.node, note: a.note }))) === now) return;
      applying = true;
      try { CCT.setAnnotations(e.data.list, true); } finally { applying = false; }
    });
    window.addEventListener("message", (e) => {
      if (e.source !== window.parent || !e.data || e.data.cctool !== "select" || !Array.isArray(e.data.ids)) return;
      const ids = e.data.ids.filter((i) => Number.isInteger(i) && i >= 0 && i < model.n);
      const now = sorted();
      if (ids.length === now.length && ids.every((i, k) => i === now[k])) return;
      applying = true;
      try {
        if (ids.some((i) => !state.kept[i])) panels.resetPrune();
        ids.forEach((i) => state.reveal(i));
        view.refresh();
        view.select(ids, "replace");
        if (ids.length) view.centerOn(ids[0]);
        if (ids.length && CCT.table) CCT.table.reveal(ids[0]);
      } finally {
        applying = false;
      }
    });
    post("ready", {});
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
