// source.js: the source pane. When the selected node's function is one of the hottest ones
// whose source the page embeds (data.sources, see render/html/_source.py), a panel at the
// bottom of the view shows its lines with each line's exclusive and inclusive cost, loops
// bracketed, scrolled to the hottest line, which is highlighted. The × button closes it
// until the next selection.
(() => {
  const $ = (id) => document.getElementById(id);

  function start() {
    const { model, view } = CCT, src = model.data.sources;
    if (!src || !src.functions) return;
    const pane = document.createElement("section");
    pane.id = "source-pane";
    pane.hidden = true;
    pane.innerHTML = '<div id="source-head"><span id="source-title"></span>' +
      '<button id="source-close" title="Close the source pane" aria-label="close">×</button></div>' +
      '<div id="source-body" tabindex="0"><table id="source-lines"></table></div>';
    $("stage").appendChild(pane);
    $("source-close").addEventListener("click", () => { pane.hidden = true; });
    const unit = (name) => (model.metrics[model.metricIndex.get(name)] || {}).unit;
    const units = [unit(src.metric), unit(src.inclusive)];
    view.on("select", () => show(model, view, src, units, pane));
  }

  function show(model, view, src, units, pane) {
    const ids = [...view.selection];
    const name = ids.length ? model.name(ids[ids.length - 1]) : null;
    const f = name !== null ? src.functions[name] : undefined;
    if (!f) { pane.hidden = true; return; }
    const cost = new Map(f.lines.map((n, k) => [n, [f.exclusive[k], f.inclusive[k]]]));
    const rows = [];
    const head = document.createElement("tr");
    [src.metric, src.inclusive, "", "line", "source"].forEach((h) => {
      const th = document.createElement("th");
      th.textContent = h;
      head.appendChild(th);
    });
    rows.push(head);
    let hotRow = null;
    f.text.forEach((text, k) => {
      const n = f.first + k, c = cost.get(n), tr = document.createElement("tr");
      const cells = [c ? CCT.formatValue(c[0], units[0]) : "", c ? CCT.formatValue(c[1], units[1]) : "",
        bracket(n, f.loops), String(n), text];
      cells.forEach((t, j) => {
        const td = document.createElement("td");
        td.textContent = t;
        td.className = ["num", "num", "loop", "num line", "code"][j];
        tr.appendChild(td);
      });
      if (n === f.hot) { tr.className = "hot"; hotRow = tr; }
      rows.push(tr);
    });
    $("source-lines").replaceChildren(...rows);
    $("source-title").textContent = `${name} — ${f.file}`;
    pane.hidden = false;
    if (hotRow) {
      const body = $("source-body");
      body.scrollTop = Math.max(hotRow.offsetTop - body.clientHeight / 3, 0);
    }
  }

  function bracket(n, loops) {
    return loops.map(([s, e]) => (n === s ? (e > s ? "┌" : "[") : n > s && n < e ? "│"
      : n === e && e > s ? "└" : " ")).join("").trimEnd();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
