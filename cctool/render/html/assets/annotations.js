// annotations.js: notes on nodes. A note is written for the selected nodes in the Notes
// panel; noted nodes get a ✎ in their tree label and a corner mark in the icicle, and the
// panel lists every note (click: go to the node, ×: remove). Notes are part of the undo
// history and travel with the page: Save downloads this page with its notes and its view
// (metrics, colormap, open subtrees, prune, selection) embedded, Export writes the JSON file `cctool tree --html --annotations FILE`
// applies to another run of the same program (frames matched by call path), and the
// notebook widget syncs them with `w.annotations`.
(() => {
  const $ = (id) => document.getElementById(id);
  // The page as it was served, before any script changed the document (this runs while the
  // page is still being parsed): what Save starts from. A clone of the nodes, not the page as
  // a string: the clone's text shares the browser's own copy of the embedded data, where a
  // string would hold the page's megabytes on the script heap for as long as it is open.
  const PRISTINE = document.documentElement.cloneNode(true);
  const notes = new Map(); // node id -> text
  const listeners = [];
  CCT.notes = notes;
  CCT.onNotes = (fn) => listeners.push(fn);

  // Replace every note (a list of {node, note}); `quiet`: not a user's change.
  function setNotes(list, quiet) {
    notes.clear();
    for (const a of list || []) {
      if (Number.isInteger(a.node) && a.node >= 0 && a.node < CCT.model.n && typeof a.note === "string") notes.set(a.node, a.note);
    }
    changed(quiet);
  }
  const list = () => [...notes].sort((a, b) => a[0] - b[0]).map(([node, note]) => ({ node, note }));
  CCT.annotationList = list;
  CCT.setAnnotations = setNotes;

  function changed(quiet) {
    show();
    CCT.view.scheduleLabels();
    if (CCT.icicle) CCT.icicle.draw();
    if (!quiet && CCT.undoNote) CCT.undoNote("note");
    listeners.forEach((fn) => fn(quiet));
  }

  function show() {
    const { model } = CCT, rows = list();
    $("notes-count").textContent = rows.length ? `(${rows.length})` : "";
    $("notes-list").replaceChildren(...rows.map(({ node, note }) => {
      const li = document.createElement("li"), go = document.createElement("button"), del = document.createElement("button");
      go.className = "note-go";
      go.textContent = `${CCT.elide(model.name(node), 40)}: ${note}`;
      go.title = `${CCTValues.path(model.path(node).map((j) => model.name(j)))}\n${note}`;
      go.addEventListener("click", () => CCT.panels.goTo(node));
      del.textContent = "×";
      del.title = "Remove this note";
      del.addEventListener("click", () => { notes.delete(node); changed(); });
      li.dataset.id = node;
      li.append(go, del);
      return li;
    }));
  }

  // The frames of node i's call path, as cctool.model.paths defines a frame.
  function frames(i) {
    const m = CCT.model;
    return m.path(i).map((j) => {
      const f = { name: m.name(j) }, type = m.attr("type", j);
      if (type !== null && type !== undefined) f.type = type;
      if (type === "statement" || type === "loop") {
        for (const k of ["file", "line"]) { const v = m.attr(k, j); if (v !== null && v !== undefined) f[k] = v; }
      }
      return f;
    });
  }
  CCT.annotationsJson = () => ({ format: "cctool-annotations", version: 1,
    annotations: list().map(({ node, note }) => ({ path: frames(node), note })) });

  // This page with the current notes and view settings in its data.
  CCT.savedPage = function () {
    const data = JSON.parse($("cctool-data").textContent);
    const enc = CCT.view.enc, m = CCT.model;
    const ids = (arr) => { const out = []; arr.forEach((x, i) => { if (x) out.push(i); }); return out; };
    Object.assign(data, { annotations: list(), color: m.metrics[enc.color].name,
      size: enc.size >= 0 ? m.metrics[enc.size].name : data.size, colormap: enc.colormap, invert: enc.invert,
      view: { expanded: ids(CCT.state.expanded), opened: ids(CCT.state.opened), log: enc.log,
        prune: [$("prune-min").value, $("prune-max").value, CCT.panels.pruneZero !== false],
        selection: [...CCT.view.selection].sort((x, y) => x - y) } });
    const json = JSON.stringify(data).replace(/[<>&\u2028\u2029]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    const page = PRISTINE.cloneNode(true);
    page.querySelector("#cctool-data").textContent = json; // a script's text is written as is
    return `<!DOCTYPE html>\n${page.outerHTML}`;
  };

  function download(text, name, type) {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const link = document.createElement("a");
    link.href = url;
    link.download = name;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }
  const base = () => (CCT.model.data.title || "tree").replace(/[^\w.-]+/g, "_").slice(0, 60);

  function start() {
    const { view } = CCT;
    $("note-add").addEventListener("click", () => {
      const text = $("note-text").value.trim();
      if (!view.selection.size) { $("note-text").placeholder = "select a node first"; return; }
      for (const i of view.selection) { if (text) notes.set(i, text); else notes.delete(i); }
      $("note-text").value = "";
      changed();
    });
    $("note-text").addEventListener("keydown", (e) => { if (e.key === "Enter") $("note-add").click(); });
    $("save-page").addEventListener("click", () => download(CCT.savedPage(), `${base()}.html`, "text/html"));
    $("export-notes").addEventListener("click", () => download(JSON.stringify(CCT.annotationsJson(), null, 1),
      `${base()}.annotations.json`, "application/json"));
    CCT.history.track("annotations", list, (l) => setNotes(l, true));
    setNotes(CCT.model.data.annotations, true);
    restoreView(CCT.model.data.view);
  }

  // A saved page opens as it was saved: open subtrees, prune range, log scale, selection.
  function restoreView(v) {
    if (!v || typeof v !== "object") return;
    const { model, state, view, panels } = CCT, ok = (i) => Number.isInteger(i) && i >= 0 && i < model.n;
    if (typeof v.log === "boolean" && v.log !== $("log").checked) {
      $("log").checked = v.log;
      view.setEncoding(panels.encoding());
      panels.showLegend();
    }
    if (Array.isArray(v.prune) && v.prune.length === 3) {
      $("prune-min").value = v.prune[0];
      $("prune-max").value = v.prune[1];
      panels.pruneZero = !!v.prune[2];
      panels.applyPrune();
    }
    if (Array.isArray(v.expanded) && Array.isArray(v.opened)) {
      state.expanded.fill(0);
      state.opened.fill(0);
      v.expanded.filter(ok).forEach((i) => { state.expanded[i] = 1; });
      v.opened.filter(ok).forEach((i) => { state.opened[i] = 1; });
      view.refresh();
      view.fit(true);
    }
    if (Array.isArray(v.selection)) view.select(v.selection.filter(ok), "replace");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
