// keys.js: the node-link tree by keyboard. The drawing takes the focus (Tab); one node is the
// keyboard's (ringed): ← goes to its parent, → opens it or goes to its first child, ↑/↓ go
// to the previous/next shown sibling (or, at the ends, the neighbouring row), Enter selects
// it (Ctrl+Enter adds or removes it), Space opens or closes it. The node is kept in the window.
(() => {
  function start() {
    const { model, state, view } = CCT, svg = view.svg;
    svg.setAttribute("tabindex", "0");
    svg.setAttribute("aria-keyshortcuts", "ArrowLeft ArrowRight ArrowUp ArrowDown Enter Space");
    let node = -1;
    const ring = document.createElementNS("http://www.w3.org/2000/svg", "circle");
    ring.setAttribute("class", "kbd-ring");
    ring.setAttribute("visibility", "hidden");
    svg.appendChild(ring);

    const place = () => {
      if (node < 0 || !view.isShown || !view.isShown[node] || document.activeElement !== svg) {
        ring.setAttribute("visibility", "hidden");
        return;
      }
      const [x, y] = view.screen(node), r = view.screenRadius(node) + 4;
      Object.entries({ cx: x.toFixed(1), cy: y.toFixed(1), r: r.toFixed(1), visibility: "visible" })
        .forEach(([k, v]) => ring.setAttribute(k, v));
      svg.setAttribute("aria-label", `calling context tree: ${model.name(node)} (depth ${model.depth[node]})`);
    };
    const keep = () => {
      const [x, y] = view.screen(node), W = svg.clientWidth, H = svg.clientHeight;
      if (x < 20 || x > W - 20 || y < 20 || y > H - 20) view.centerOn(node, true);
      else view.applyTransform();
      place();
    };
    const go = (i) => { if (i >= 0) { node = i; keep(); } };
    const shownKids = (i) => (view.first[i] >= 0 ? view.visibleChildren(i, Infinity) : []);
    const siblings = (i) => (model.parent[i] >= 0 ? shownKids(model.parent[i])
      : model.roots.filter((r) => view.isShown[r]));

    svg.addEventListener("focus", () => {
      if (node < 0 || !view.isShown[node]) node = view.selection.size ? [...view.selection][0] : model.roots[0];
      if (!view.isShown[node]) node = view.order[0];
      place();
    });
    svg.addEventListener("blur", place);
    view.on("refresh", place);
    svg.addEventListener("keydown", (e) => {
      if (node < 0) return;
      const sib = siblings(node), k = sib.indexOf(node);
      switch (e.key) {
        case "ArrowLeft": go(model.parent[node]); break;
        case "ArrowRight":
          if (view.collapsed(node)) { state.toggle(node, CCT.panels.settings.budget); view.refresh(node); }
          go(shownKids(node)[0] ?? -1);
          break;
        case "ArrowUp": go(k > 0 ? sib[k - 1] : view.order[Math.max(0, view.order.indexOf(node) - 1)]); break;
        case "ArrowDown":
          go(k >= 0 && k < sib.length - 1 ? sib[k + 1] : view.order[Math.min(view.order.length - 1, view.order.indexOf(node) + 1)]);
          break;
        case "Enter": view.select([node], e.ctrlKey || e.metaKey ? "toggle" : "replace"); break;
        case " ":
          if (model.hasChildren(node)) { state.toggle(node, CCT.panels.settings.budget); view.refresh(node); place(); }
          break;
        default: return;
      }
      e.preventDefault();
    });
    CCT.treeKeys = { focusNode: () => node };
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
