// hot.js: `cctool tree --expand-hot --html`. The page opens only the hot path at first (as
// the text tree does) and, unless the page marks the hot path itself, draws it as a trail
// under the nodes, kept in step with the layout.
(() => {
  const NS = "http://www.w3.org/2000/svg";

  function start() {
    const { model, state, view } = CCT, data = model.data;
    const path = (data.hotPath || []).filter((i) => Number.isInteger(i) && i >= 0 && i < model.n);
    if (!data.expandHot || !path.length) return;
    if (!model.hot) drawTrail(path);  // a page that marks the hot path itself needs no trail
    state.expanded.fill(0);
    state.reveal(path[path.length - 1]);
    path.forEach((i) => state.open(i));
    view.refresh();
    view.fit(true);
  }

  function drawTrail(path) {
    const view = CCT.view, trail = document.createElementNS(NS, "path");
    trail.id = "hot-trail";
    Object.entries({ fill: "none", stroke: "#fb8c00", "stroke-width": 6, "stroke-opacity": 0.55,
      "stroke-linecap": "round", "vector-effect": "non-scaling-stroke", "pointer-events": "none" })
      .forEach(([k, v]) => trail.setAttribute(k, v));
    document.getElementById("viewport").insertBefore(trail, document.getElementById("nodes"));
    const draw = () => {
      const shown = new Set(view.order), parts = [];
      for (let k = 1; k < path.length; k++) {
        const p = path[k - 1], i = path[k];
        if (!shown.has(p) || !shown.has(i)) break;
        const mx = (view.x[p] + view.x[i]) / 2;
        parts.push(`M${view.x[p]},${view.y[p]}C${mx},${view.y[p]} ${mx},${view.y[i]} ${view.x[i]},${view.y[i]}`);
      }
      trail.setAttribute("d", parts.join(""));
    };
    view.on("refresh", draw);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
