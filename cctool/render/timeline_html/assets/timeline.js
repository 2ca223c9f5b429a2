// timeline.js: the timeline page. Lanes are drawn into one ImageData: per lane and screen
// column one colour, sampled at the column's centre from the coarsest level of detail whose
// buckets are no wider than a column (or the lane's exact intervals when no level is fine
// enough and they are embedded). The window panel adds up exclusive time per call path in
// the visible window: from the exact intervals when every lane has them, else from the
// summary buckets, with the window rounded to their edges (and the bounds shown say so).
(() => {
  const D = JSON.parse(document.getElementById("cctool-timeline").textContent);
  const $ = (id) => document.getElementById(id);
  const NS = 1e9;

  // ------------------------------------------------------------------ data
  async function unpack() {
    const b64 = $("cctool-timeline-bin").textContent.trim();
    let bytes;
    try {
      bytes = new Uint8Array(await (await fetch("data:application/octet-stream;base64," + b64)).arrayBuffer());
    } catch (e) {
      const s = atob(b64);
      bytes = new Uint8Array(s.length);
      for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
    }
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    const buf = await new Response(stream).arrayBuffer();
    const kinds = { i4: Int32Array, u4: Uint32Array, f8: Float64Array };
    const out = {};
    for (const [name, [at, kind, n]] of Object.entries(D.arrays)) out[name] = new kinds[kind](buf, at, n);
    // Gaps and lengths back to starts and ends, lane by lane.
    const cumulate = (off, gap, len, start, end) => {
      for (let l = 0; l + 1 < off.length; l++) {
        let t = 0;
        for (let k = off[l]; k < off[l + 1]; k++) { start[k] = t + gap[k]; end[k] = start[k] + len[k]; t = end[k]; }
      }
    };
    const ne = out["exact.node"].length;
    out["exact.start"] = new Float64Array(ne); out["exact.end"] = new Float64Array(ne);
    cumulate(out["exact.offsets"], out["exact.gap"], out["exact.dur"], out["exact.start"], out["exact.end"]);
    for (let i = 0; i < D.levels.length; i++) {
      const p = "level" + i + ".", nr = out[p + "node"].length;
      out[p + "start"] = new Uint32Array(nr); out[p + "stop"] = new Uint32Array(nr);
      cumulate(out[p + "offsets"], out[p + "gap"], out[p + "length"], out[p + "start"], out[p + "stop"]);
    }
    return out;
  }

  const n = D.tree.parent.length;
  const parent = Int32Array.from(D.tree.parent);
  const nameCode = Int32Array.from(D.tree.name.codes);
  const names = D.tree.name.values;
  const depth = new Int32Array(n);
  let maxDepth = 1;
  for (let i = 0; i < n; i++) { // preorder: a parent comes before its children
    depth[i] = parent[i] < 0 ? 1 : depth[parent[i]] + 1;
    if (depth[i] > maxDepth) maxDepth = depth[i];
  }
  const size = new Int32Array(n).fill(1); // subtree sizes: node j is in i's subtree iff i <= j < i + size[i]
  for (let i = n - 1; i > 0; i--) if (parent[i] >= 0) size[parent[i]] += size[i];
  const nameOf = (i) => (nameCode[i] >= 0 ? names[nameCode[i]] : "?");
  function pathOf(i) { const p = []; for (; i >= 0; i = parent[i]) p.push(i); return p.reverse(); }
  const lanes = D.lanes.label.length;
  const span = D.span;
  // Page times count from the page's start; people read times from the run's start (a page
  // of a --window starts that far into the run).
  const OFF = D.offset || 0;

  // One colour per function name (as hpctraceviewer), stable between pages.
  function hash(s) { let h = 2166136261; for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); } return h >>> 0; }
  function hsl(h, s, l) {
    s /= 100; l /= 100;
    const k = (m) => (m + h / 30) % 12, a = s * Math.min(l, 1 - l);
    const f = (m) => Math.round(255 * (l - a * Math.max(-1, Math.min(k(m) - 3, Math.min(9 - k(m), 1)))));
    return [f(0), f(8), f(4)];
  }
  const nameRGB = names.map((s) => { const h = hash(s); return hsl(h % 360, 55 + (h >>> 9) % 30, 48 + (h >>> 17) % 22); });
  const packRGB = ([r, g, b], a = 255) => ((a << 24) | (b << 16) | (g << 8) | r) >>> 0;
  const IDLE = packRGB([245, 245, 245]);
  const BACK = packRGB([255, 255, 255]);
  let curDepth = Math.min(D.depth, maxDepth);
  const anc = new Int32Array(n);
  const color = new Uint32Array(n), dimColor = new Uint32Array(n);
  let own = null;            // ns per node as the innermost frame, over the page's lanes and span
  let legend = [];           // the call paths at the depth, heaviest first: [node, ns]
  let rankOf = new Map();    // node -> its place in the legend
  // Colours as cctool.render.palette gives them (the text view's too): the paths at the
  // depth ranked by time, heaviest first (ties: smaller node id), the i-th gets
  // D.palette[i]; paths past the palette a colour per function name.
  function setColors() {
    for (let i = 0; i < n; i++) anc[i] = depth[i] <= curDepth ? i : anc[parent[i]];
    const weight = new Float64Array(n);
    for (let i = 0; i < n; i++) weight[anc[i]] += own[i];
    legend = [];
    for (let i = 0; i < n; i++) if (weight[i] > 0) legend.push([i, weight[i]]);
    legend.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    rankOf = new Map(legend.map(([i], k) => [i, k]));
    const rgb = new Array(n).fill(null);
    legend.slice(0, D.palette.length).forEach(([i], k) => { rgb[i] = D.palette[k]; });
    for (let i = 0; i < n; i++) {
      const a = anc[i];
      const c = rgb[a] || (nameCode[a] >= 0 ? nameRGB[nameCode[a]] : [128, 128, 128]);
      color[i] = packRGB(c);
      dimColor[i] = packRGB(c.map((v) => Math.round(235 + (v - 235) * 0.18)));
    }
  }
  const cssColor = (i) => { const c = color[i]; return `rgb(${c & 255},${(c >>> 8) & 255},${(c >>> 16) & 255})`; };

  // ------------------------------------------------------------------ state
  let A = null;              // the unpacked arrays
  let exactLane = null;      // per lane: all its intervals embedded
  let allExact = false;
  // The lanes the filter keeps (all at first), in order: view positions map to lane indices.
  let shown = Int32Array.from({ length: lanes }, (_, l) => l), nshown = lanes;
  const view = { t0: D.window[0], t1: D.window[1], lane0: 0, nlanes: lanes };
  let selected = -1;
  // css px of lane labels: the longest label at about 6.6 px a character, within bounds
  const GUTTER = Math.round(Math.max(120, Math.min(280, 12 + 6.6 * D.lanes.label.reduce((m, s) => Math.max(m, s.length), 0))));
  const MAX_LANE = 40;       // css px: a few lanes stay strips, not blocks
  const lanesCanvas = $("lanes"), axisCanvas = $("axis"), stripCanvas = $("strip"), depthCanvas = $("depthview");
  const ctx = lanesCanvas.getContext("2d"), actx = axisCanvas.getContext("2d");
  let img = null, dpr = 1, lastDraw = { aggregated: false, level: -1, perRow: 1, lanesDrawn: 0 };

  // The representation a lane is drawn from at `nsPerPx` ns per device pixel:
  // {kind: "exact"} or {kind: "level", i}, and whether it is aggregated.
  function source(lane, nsPerPx) {
    let best = -1;
    for (let i = 0; i < D.levels.length; i++) if (D.levels[i].width <= nsPerPx) best = i;
    if (best >= 0) return { kind: "level", i: best, aggregated: true };
    if (exactLane[lane]) return { kind: "exact", aggregated: false };
    return { kind: "level", i: 0, aggregated: true };
  }
  // Intervals of a lane in one representation: [lo, hi) index range and accessors.
  function intervals(lane, src) {
    if (src.kind === "exact") {
      const s = A["exact.start"], e = A["exact.end"], nd = A["exact.node"];
      return { lo: A["exact.offsets"][lane], hi: A["exact.offsets"][lane + 1],
        start: (k) => s[k], end: (k) => e[k], node: (k) => nd[k] };
    }
    const w = D.levels[src.i].width, p = "level" + src.i + ".";
    const st = A[p + "start"], sp = A[p + "stop"], nd = A[p + "node"], off = A[p + "offsets"];
    return { lo: off[lane], hi: off[lane + 1], start: (k) => st[k] * w,
      end: (k) => sp[k] * w, node: (k) => nd[k], width: w };
  }
  function firstEndingAfter(iv, t) { // first k with end(k) > t
    let lo = iv.lo, hi = iv.hi;
    while (lo < hi) { const m = (lo + hi) >> 1; if (iv.end(m) > t) hi = m; else lo = m + 1; }
    return lo;
  }

  // ------------------------------------------------------------------ drawing
  function resize() {
    dpr = window.devicePixelRatio || 1;
    for (const c of [lanesCanvas, axisCanvas, stripCanvas, depthCanvas]) {
      const r = c.getBoundingClientRect();
      c.width = Math.max(1, Math.round(r.width * dpr));
      c.height = Math.max(1, Math.round(r.height * dpr));
    }
    img = ctx.createImageData(lanesCanvas.width, lanesCanvas.height);
  }
  function laneRows() { // device pixel rows: [lane, y0, y1, position among the shown] drawn
    const H = lanesCanvas.height, rows = [];
    if (!nshown) return { rows, per: H };
    const per = view.nlanes < nshown ? H / view.nlanes : Math.min(H / view.nlanes, MAX_LANE * dpr);
    if (per >= 1) {
      const first = Math.floor(view.lane0), last = Math.min(nshown, Math.ceil(view.lane0 + view.nlanes));
      const gap = per >= 6 ? 1 : 0;
      for (let l = first; l < last; l++) {
        const y0 = Math.max(0, Math.round((l - view.lane0) * per)), y1 = Math.min(H, Math.round((l + 1 - view.lane0) * per) - gap);
        if (y1 > y0) rows.push([shown[l], y0, y1, l]);
      }
    } else { // more lanes than pixel rows: each row shows the first lane it covers
      for (let y = 0; y < H; y++) { const l = Math.min(nshown - 1, Math.floor(view.lane0 + y / per)); rows.push([shown[l], y, y + 1, l]); }
    }
    return { rows, per };
  }
  function draw() {
    if (!A) return;
    if (!lanes) { $("status").textContent = "This trace has no intervals to draw."; return; }
    const t0ms = performance.now();
    const W = lanesCanvas.width, H = lanesCanvas.height, gut = Math.round(GUTTER * dpr);
    const plot = Math.max(1, W - gut), nsPerPx = (view.t1 - view.t0) / plot;
    const px = new Uint32Array(img.data.buffer);
    px.fill(BACK);
    const line = new Uint32Array(plot);
    const { rows, per } = laneRows();
    let aggregated = false, level = -1, drawnLanes = 0, lastLane = -1;
    for (const [lane, y0, y1] of rows) {
      if (lane !== lastLane) {
        lastLane = lane; drawnLanes++;
        const src = source(lane, nsPerPx);
        aggregated = aggregated || src.aggregated;
        if (src.kind === "level") level = Math.max(level, src.i);
        // The hot loop reads typed arrays directly, in the representation's own units.
        let S, E, ND, lo, hi, scale;
        if (src.kind === "exact") {
          S = A["exact.start"]; E = A["exact.end"]; ND = A["exact.node"]; scale = 1;
          lo = A["exact.offsets"][lane]; hi = A["exact.offsets"][lane + 1];
        } else {
          const p = "level" + src.i + ".";
          S = A[p + "start"]; E = A[p + "stop"]; ND = A[p + "node"]; scale = 1 / D.levels[src.i].width;
          lo = A[p + "offsets"][lane]; hi = A[p + "offsets"][lane + 1];
        }
        const u0 = (view.t0 + 0.5 * nsPerPx) * scale, du = nsPerPx * scale;
        let k = lo, b = hi;
        while (k < b) { const m = (k + b) >> 1; if (E[m] > u0) b = m; else k = m + 1; }
        const sel0 = selected, sel1 = selected < 0 ? 0 : selected + size[selected];
        for (let x = 0; x < plot; x++) {
          const u = u0 + x * du;
          while (k < hi && E[k] <= u) k++;
          let c = IDLE;
          if (k < hi && S[k] <= u) {
            const nd = ND[k];
            if (nd >= 0) c = sel0 < 0 || (nd >= sel0 && nd < sel1) ? color[nd] : dimColor[nd];
          }
          line[x] = c;
        }
      }
      for (let y = y0; y < y1; y++) px.set(line, y * W + gut);
    }
    ctx.putImageData(img, 0, 0);
    drawMessages(rows, per, gut, nsPerPx);
    drawLabels(rows, per, gut);
    drawAxis(gut, plot, nsPerPx);
    drawStrip(gut, plot, nsPerPx);
    drawDepth(gut, plot, nsPerPx);
    lastDraw = { aggregated, level, perRow: per < 1 ? 1 / per : 1, lanesDrawn: drawnLanes, ms: performance.now() - t0ms };
    status();
  }
  function drawLabels(rows, per, gut) {
    ctx.fillStyle = "#fafafa"; ctx.fillRect(0, 0, gut, lanesCanvas.height);
    ctx.fillStyle = "#ccc"; ctx.fillRect(gut - 1, 0, 1, lanesCanvas.height);
    ctx.fillStyle = "#333"; ctx.textBaseline = "middle";
    if (per < 11 * dpr) { // too thin for every label: label every `step`-th lane, at its row
      const need = 14 * dpr / per, p10 = Math.pow(10, Math.floor(Math.log10(need)));
      const step = [1, 2, 5, 10].map((m) => m * p10).find((v) => v >= need);
      ctx.font = `${11 * dpr}px system-ui, sans-serif`;
      // A pixel row may stand for more than one lane: it labels the multiple of `step`
      // among the lanes it covers (up to the next row's first lane), so none is skipped.
      const foot = lanesCanvas.height - 16 * dpr; // the "rank.thread" caption's room
      let last = -Infinity;
      for (let r = 0; r < rows.length; r++) {
        const [, y0, , pos] = rows[r];
        const next = r + 1 < rows.length ? Math.max(rows[r + 1][3], pos + 1) : pos + 1;
        const m = Math.ceil(pos / step) * step;
        if (m >= next || m === last || m >= nshown || y0 + 12 * dpr > foot) continue;
        last = m;
        ctx.fillRect(gut - 6 * dpr, y0, 5 * dpr, Math.max(1, dpr));
        ctx.fillText(`${D.lanes.rank[shown[m]]}.${D.lanes.thread[shown[m]]}`, 4 * dpr, y0 + 6 * dpr);
      }
      ctx.fillStyle = "#777";
      ctx.fillText("rank.thread", 4 * dpr, lanesCanvas.height - 8 * dpr);
      return;
    }
    ctx.font = `${Math.min(12, per / dpr - 1) * dpr}px system-ui, sans-serif`;
    for (const [lane, y0, y1] of rows) {
      let s = D.lanes.label[lane];
      while (s.length > 4 && ctx.measureText(s).width > gut - 8 * dpr) s = s.slice(0, -2);
      if (s !== D.lanes.label[lane]) s += "…";
      ctx.fillText(s, 4 * dpr, (y0 + y1) / 2);
    }
  }
  function fmt(ns) { // a time for people, as every face of cctool spells it (values.js)
    return CCTValues.format(ns / NS, "s");
  }
  function fmtTick(ns, step) { // an axis time with the digits its step needs (112.905 s, 112.910 s)
    const a = Math.abs(ns), unit = a >= NS ? [NS, " s"] : a >= 1e6 ? [1e6, " ms"] : a >= 1e3 ? [1e3, " µs"] : [1, " ns"];
    const digits = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / unit[0]) - 1e-9)));
    const v = ns / unit[0];
    if (v >= 1000 && !digits) return Math.round(v).toLocaleString("en-US") + unit[1];
    return (Math.abs(v) >= 1000 ? v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits }) : v.toFixed(digits)) + unit[1];
  }
  function niceStep(x) { const p = Math.pow(10, Math.floor(Math.log10(x))); for (const m of [1, 2, 5, 10]) if (m * p >= x) return m * p; return 10 * p; }
  function drawAxis(gut, plot, nsPerPx) {
    const W = axisCanvas.width, H = axisCanvas.height;
    actx.clearRect(0, 0, W, H);
    actx.fillStyle = "#fafafa"; actx.fillRect(0, 0, W, H);
    const step = niceStep(nsPerPx * 110 * dpr);
    actx.fillStyle = "#333"; actx.strokeStyle = "#888";
    actx.font = `${11 * dpr}px system-ui, sans-serif`; actx.textBaseline = "top";
    actx.beginPath();
    for (let t = Math.ceil((view.t0 + OFF) / step) * step; t <= view.t1 + OFF; t += step) {
      const x = gut + (t - OFF - view.t0) / nsPerPx;
      actx.moveTo(x + 0.5, H - 8 * dpr); actx.lineTo(x + 0.5, H);
      const label = fmtTick(t, step);
      if (x + 3 * dpr + actx.measureText(label).width <= W) actx.fillText(label, x + 3 * dpr, 4 * dpr);
    }
    actx.stroke();
    actx.fillStyle = "#666";
    actx.fillText("time from start", 4 * dpr, 4 * dpr);
  }
  function status() {
    const d = lastDraw, nsPerPx = (view.t1 - view.t0) / Math.max(1, lanesCanvas.width - Math.round(GUTTER * dpr));
    const where = `${fmt(view.t0 + OFF)} – ${fmt(view.t1 + OFF)} · lanes ${Math.floor(view.lane0) + 1}–${Math.min(nshown, Math.ceil(view.lane0 + view.nlanes))} of ${nshown}` + (nshown < lanes ? ` (filtered from ${lanes})` : "");
    let what;
    if (d.aggregated) {
      const w = D.levels[Math.max(d.level, 0)].width;
      what = `<span class="agg">aggregated</span>: each column shows the heaviest call path of ${fmt(w)} buckets` +
        (w > nsPerPx * 1.001 ? " (zoomed in past the finest level embedded)"
          : exactLane && exactLane.some((x) => x) ? " (zoom in for the exact intervals)" : "");
    } else what = "exact intervals";
    if (d.perRow > 1) what += ` · <span class="agg">one lane in ${d.perRow.toFixed(1)} drawn per pixel row</span>`;
    $("status").innerHTML = `${where} · ${what}`;
  }

  // ------------------------------------------------------------------ messages
  // Point-to-point messages (OTF2's MPI sends matched to their receives) as arrows from the
  // sender's lane at the send to the receiver's lane at the receive, where both lanes are
  // shown and the message overlaps the view; at most MAX_ARROWS, the first by send time.
  const MAX_ARROWS = 3000;
  let arrowsDrawn = 0;
  function drawMessages(rows, per, gut, nsPerPx) {
    arrowsDrawn = 0;
    if (!D.messages || !$("show-messages").checked) return;
    const posOf = new Float64Array(lanes).fill(-1);
    for (let p = 0; p < nshown; p++) posOf[shown[p]] = p;
    const fr = A["msg.from"], to = A["msg.to"], ts = A["msg.send"], tr = A["msg.recv"];
    const H = lanesCanvas.height;
    const yOf = (lane) => { const p = posOf[lane]; return p < 0 ? -1 : (p - view.lane0 + 0.5) * per; };
    ctx.save();
    ctx.strokeStyle = "rgba(20,20,20,0.75)"; ctx.fillStyle = "rgba(20,20,20,0.75)";
    ctx.lineWidth = Math.max(1, dpr);
    for (let k = 0; k < fr.length && arrowsDrawn < MAX_ARROWS; k++) {
      if (tr[k] < view.t0 || ts[k] > view.t1) continue;
      const y0 = yOf(fr[k]), y1 = yOf(to[k]);
      if (y0 < 0 || y1 < 0 || (y0 > H && y1 > H)) continue;
      const x0 = gut + (ts[k] - view.t0) / nsPerPx, x1 = gut + (tr[k] - view.t0) / nsPerPx;
      ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
      const a = Math.atan2(y1 - y0, x1 - x0), h = 6 * dpr;
      ctx.beginPath(); ctx.moveTo(x1, y1);
      ctx.lineTo(x1 - h * Math.cos(a - 0.4), y1 - h * Math.sin(a - 0.4));
      ctx.lineTo(x1 - h * Math.cos(a + 0.4), y1 - h * Math.sin(a + 0.4));
      ctx.fill();
      arrowsDrawn++;
    }
    ctx.restore();
  }
  // A lane's counters over [lo, hi] ns, by each metric's mode as cctool.ops.timeline_metrics
  // defines it: accumulated ones their increase from the last sample at or before lo to the
  // last at or before hi, relative ones the sum of the samples in (lo, hi], others the mean
  // of those in [lo, hi]; with the number of samples inside. Samples are sorted by lane,
  // metric and time.
  function laneCounters(lane, lo, hi) {
    const M = D.metrics;
    if (!M || !M.samples) return [];
    const ln = A["ms.lane"], tm = A["ms.time"], mt = A["ms.metric"], v = A["ms.value"];
    let k = 0;
    { let l = 0, h = ln.length; while (l < h) { const m = (l + h) >> 1; if (ln[m] >= lane) h = m; else l = m + 1; } k = l; }
    const out = [];
    while (k < ln.length && ln[k] === lane) {
      const metric = mt[k], mode = M.modes[metric] || "";
      let before = 0, end = null, sum = 0, n = 0, inside = 0;
      for (; k < ln.length && ln[k] === lane && mt[k] === metric; k++) {
        const t = tm[k];
        if (t <= lo) before = v[k];
        if (t <= hi) end = v[k];
        if (t > lo && t <= hi) sum += v[k];
        if (t >= lo && t <= hi) { inside++; n += v[k]; }
      }
      if (mode.startsWith("accumulated")) out.push({ name: M.names[metric], how: "increase", value: end === null ? null : end - before, inside });
      else if (mode.startsWith("relative")) out.push({ name: M.names[metric], how: "sum", value: sum, inside });
      else out.push({ name: M.names[metric], how: "mean", value: inside ? n / inside : null, inside });
    }
    return out;
  }
  // Messages sent inside [lo, hi) ns: their count and bytes.
  function messagesIn(lo, hi) {
    if (!D.messages) return { count: 0, bytes: 0 };
    const ts = A["msg.send"], by = A["msg.bytes"];
    let count = 0, bytes = 0;
    for (let k = 0; k < ts.length; k++) if (ts[k] >= lo && ts[k] < hi) { count++; bytes += by[k]; }
    return { count, bytes };
  }

  // ------------------------------------------------------------------ summary strip
  // Per screen column, each call path's (at the depth) share of every lane's time over the
  // summary buckets the column covers: ns over lanes x the buckets' length, stacked from
  // the heaviest path (the legend's order) down; idle time is left blank. This is what
  // `cctool timeline --view summary` prints for the same span.
  function stripColumn(x, nsPerPx) {
    const w = D.summaryWidth, nb = D.summaryBuckets, bk = A["summary.bucket"], nd = A["summary.node"], v = A["summary.ns"];
    const ta = view.t0 + x * nsPerPx, tb = ta + nsPerPx;
    const a = Math.max(0, Math.min(nb - 1, Math.floor(ta / w)));
    const b = Math.max(a + 1, Math.min(nb, Math.ceil(tb / w)));
    let k = 0;
    { let l = 0, h = bk.length; while (l < h) { const m = (l + h) >> 1; if (bk[m] >= a) h = m; else l = m + 1; } k = l; }
    const acc = new Map();
    for (; k < bk.length && bk[k] < b; k++) { const p = anc[nd[k]]; acc.set(p, (acc.get(p) || 0) + v[k]); }
    const lo = a * w, hi = Math.min(b * w, span), denom = lanes * (hi - lo);
    const shares = [...acc].map(([p, ns]) => [p, ns / denom]);
    shares.sort((u, z) => (rankOf.get(u[0]) ?? 1e9) - (rankOf.get(z[0]) ?? 1e9) || u[0] - z[0]);
    return { lo, hi, shares };
  }
  function drawStrip(gut, plot, nsPerPx) {
    const W = stripCanvas.width, H = stripCanvas.height, sctx = stripCanvas.getContext("2d");
    const im = sctx.createImageData(W, H), px = new Uint32Array(im.data.buffer);
    px.fill(BACK);
    for (let x = 0; x < plot; x++) {
      let y = 0;
      for (const [p, share] of stripColumn(x, nsPerPx).shares) {
        const y1 = Math.min(H, Math.round((y + share) * H)), c = color[p];
        for (let r = Math.round(y * H); r < y1; r++) px[r * W + gut + x] = c;
        y += share;
      }
    }
    sctx.putImageData(im, 0, 0);
    sctx.fillStyle = "#fafafa"; sctx.fillRect(0, 0, gut, H);
    sctx.fillStyle = "#333"; sctx.textBaseline = "middle"; sctx.font = `${11 * dpr}px system-ui, sans-serif`;
    sctx.fillText("summary", 4 * dpr, H / 2 - 7 * dpr);
    sctx.fillStyle = "#777";
    sctx.fillText(`${lanes} location${lanes === 1 ? "" : "s"}`, 4 * dpr, H / 2 + 7 * dpr);
  }

  // ------------------------------------------------------------------ depth view
  // One lane's call stack per screen column (click a lane's label; Escape closes it): the
  // node its lane shows at the column's middle, and every ancestor, a row per depth. Where
  // the lane is drawn from exact intervals this is the stack at that instant; where it is
  // aggregated, the bucket's heaviest call path. Frames are coloured by name, the names
  // seen most often taking the palette's colours first.
  let depthLane = -1;
  function depthColumns(lane, nsPerPx, plot) {
    const src = source(lane, nsPerPx), iv = intervals(lane, src), out = new Array(plot);
    let k = iv.lo;
    for (let x = 0; x < plot; x++) {
      const t = view.t0 + (x + 0.5) * nsPerPx;
      while (k < iv.hi && iv.end(k) <= t) k++;
      out[x] = k < iv.hi && iv.start(k) <= t && iv.node(k) >= 0 ? pathOf(iv.node(k)) : [];
    }
    return { columns: out, aggregated: src.aggregated };
  }
  function drawDepth(gut, plot, nsPerPx) {
    const box = $("depth-box");
    if (depthLane < 0) { box.hidden = true; return; }
    box.hidden = false;
    const W = depthCanvas.width, H = depthCanvas.height, dctx = depthCanvas.getContext("2d");
    const { columns, aggregated } = depthColumns(depthLane, nsPerPx, plot);
    const cells = new Map();
    let deepest = 1;
    for (const st of columns) { deepest = Math.max(deepest, st.length); for (const i of st) { const m = nameOf(i); cells.set(m, (cells.get(m) || 0) + 1); } }
    const order = [...cells].sort((u, z) => z[1] - u[1] || (u[0] < z[0] ? -1 : u[0] > z[0] ? 1 : 0));
    const rgbOf = new Map(order.map(([m], k) => [m, k < D.palette.length ? D.palette[k] : (names.indexOf(m) >= 0 ? nameRGB[names.indexOf(m)] : [128, 128, 128])]));
    const im = dctx.createImageData(W, H), px = new Uint32Array(im.data.buffer);
    px.fill(BACK);
    const rowH = H / deepest;
    for (let x = 0; x < plot; x++) {
      const st = columns[x];
      for (let d = 0; d < st.length; d++) {
        const c = packRGB(rgbOf.get(nameOf(st[d])));
        for (let r = Math.round(d * rowH); r < Math.round((d + 1) * rowH) - (rowH >= 6 ? 1 : 0); r++) px[r * W + gut + x] = c;
      }
    }
    dctx.putImageData(im, 0, 0);
    dctx.fillStyle = "#fafafa"; dctx.fillRect(0, 0, gut, H);
    dctx.fillStyle = "#333"; dctx.textBaseline = "top"; dctx.font = `${11 * dpr}px system-ui, sans-serif`;
    dctx.fillText("depth 1", 4 * dpr, 2 * dpr);
    dctx.textBaseline = "bottom"; dctx.fillText(`depth ${deepest}`, 4 * dpr, H - 2 * dpr);
    $("depth-title").textContent = `Depth view of ${D.lanes.label[depthLane]}: ` + (aggregated
      ? "each column shows its bucket's heaviest call path (aggregated; zoom in for exact stacks)"
      : "each column shows the call stack at its middle instant");
  }
  function showDepth(lane) { depthLane = lane; $("depth-box").hidden = lane < 0; resize(); draw(); }

  // ------------------------------------------------------------------ window summary
  let summary = null; // {lo, hi, own: Float64Array, inc: Float64Array, exact}
  const secs = (ns) => { const s = Math.floor(ns / NS), f = String(ns - s * NS).padStart(9, "0").replace(/0+$/, ""); return f ? `${s}.${f}` : `${s}`; };
  function computeSummary() {
    const own = new Float64Array(n);
    let lo, hi;
    if (allExact) {
      lo = Math.max(0, Math.round(view.t0)); hi = Math.min(span, Math.round(view.t1));
      if (hi <= lo) hi = lo + 1;
      const s = A["exact.start"], e = A["exact.end"], nd = A["exact.node"], off = A["exact.offsets"];
      for (let l = 0; l < lanes; l++) {
        const iv = { lo: off[l], hi: off[l + 1], end: (k) => e[k] };
        for (let k = firstEndingAfter(iv, lo); k < off[l + 1] && s[k] < hi; k++) {
          own[nd[k]] += Math.min(e[k], hi) - Math.max(s[k], lo);
        }
      }
    } else {
      const w = D.summaryWidth, nb = D.summaryBuckets;
      let a = Math.round(view.t0 / w), b = Math.round(view.t1 / w);
      a = Math.max(0, Math.min(a, nb - 1)); b = Math.max(a + 1, Math.min(b, nb));
      lo = a * w; hi = Math.min(b * w, span);
      const bk = A["summary.bucket"], nd = A["summary.node"], v = A["summary.ns"];
      let k = 0, top = bk.length;
      { let l = 0, h = top; while (l < h) { const m = (l + h) >> 1; if (bk[m] >= a) h = m; else l = m + 1; } k = l; }
      for (; k < top && bk[k] < b; k++) own[nd[k]] += v[k];
    }
    const inc = Float64Array.from(own);
    for (let i = n - 1; i >= 0; i--) if (parent[i] >= 0) inc[parent[i]] += inc[i];
    let total = 0; for (let i = 0; i < n; i++) total += own[i];
    summary = { lo, hi, own, inc, total, exact: allExact };
    showSummary();
  }
  function showSummary() {
    const s = summary;
    $("window-text").textContent = `${fmt(s.lo + OFF)} – ${fmt(s.hi + OFF)} (${fmt(s.hi - s.lo)}), ${fmt(s.total)} of call paths over ${lanes} location${lanes === 1 ? "" : "s"}`;
    $("window-arg").textContent = `--window ${secs(s.lo + OFF)}:${secs(s.hi + OFF)}`;
    $("window-note").textContent = s.exact ? "Exact: every interval of every location is in this page."
      : `The view's bounds rounded to ${fmt(D.summaryWidth)} steps (the page holds the time per call path at that resolution).`;
    if (D.messages) {
      const m = messagesIn(s.lo, s.hi);
      $("window-messages").textContent = `${m.count.toLocaleString()} message${m.count === 1 ? "" : "s"} sent in the window (${CCTValues.format(m.bytes, "B")})` +
        (arrowsDrawn >= MAX_ARROWS ? `; the first ${MAX_ARROWS.toLocaleString()} drawn` : "");
    }
    const order = [];
    for (let i = 0; i < n; i++) if (s.own[i] > 0) order.push(i);
    order.sort((a, b) => s.own[b] - s.own[a] || a - b);
    const body = $("summary").tBodies[0];
    body.textContent = "";
    for (const i of order.slice(0, 40)) {
      const tr = document.createElement("tr");
      tr.dataset.node = i;
      if (i === selected) tr.className = "selected";
      const path = CCTValues.path(pathOf(i).map(nameOf));
      tr.innerHTML = `<td class="num"></td><td class="num"></td><td class="path"></td>`;
      tr.cells[0].textContent = fmt(s.own[i]);
      tr.cells[1].textContent = CCTValues.percent(100 * s.own[i] / (s.total || 1));
      tr.cells[2].textContent = ltr(path); // right-to-left: keeps the innermost frames visible
      tr.title = path;
      tr.onclick = () => select(i, true);
      body.appendChild(tr);
    }
    updateTreeTimes();
  }
  // A name shown in a right-to-left (end-first) cell, as every page shows call paths: left-
  // to-right marks at both ends keep its punctuation in place ("<outside regions>", not
  // "<<outside regions").
  function ltr(text) { return "\u200e" + text + "\u200e"; }
  let summaryTimer = 0;
  function viewChanged() {
    draw();
    clearTimeout(summaryTimer);
    summaryTimer = setTimeout(computeSummary, 60);
  }

  // The colours of the heaviest call paths at the depth, with their time over the page.
  function showLegend() {
    const body = $("legend").tBodies[0];
    body.textContent = "";
    let total = 0; for (const [, ns] of legend) total += ns;
    for (const [i, ns] of legend.slice(0, D.palette.length)) {
      const tr = document.createElement("tr");
      tr.dataset.node = i;
      tr.innerHTML = `<td><span class="sw"></span></td><td class="num"></td><td class="num"></td><td class="path"></td>`;
      tr.cells[0].firstChild.style.background = cssColor(i);
      tr.cells[1].textContent = fmt(ns);
      tr.cells[2].textContent = CCTValues.percent(100 * ns / (total || 1));
      const path = CCTValues.path(pathOf(i).map(nameOf));
      tr.cells[3].textContent = ltr(path);
      tr.title = path;
      tr.onclick = () => select(i, true);
      body.appendChild(tr);
    }
    $("legend-more").textContent = legend.length > D.palette.length
      ? `${legend.length - D.palette.length} lighter call paths are coloured by function name.` : "";
  }

  // ------------------------------------------------------------------ tree panel
  const kids = Array.from({ length: n }, () => []);
  const roots = [];
  for (let i = 0; i < n; i++) (parent[i] < 0 ? roots : kids[parent[i]]).push(i);
  let whole = null; // inclusive time over the whole run, for sibling order
  const open = new Set(), showAll = new Set(), rowOf = new Map();
  const SHOWN = 50;
  function sortKids(list) { return list.slice().sort((a, b) => whole[b] - whole[a] || a - b); }
  // 8 px a level, at most 200 px: deep call paths keep room for their names (the row's
  // title has the whole path).
  const indent = (level) => Math.min(level * 8, 200) + 2;
  function renderTree() {
    const root = $("tree");
    root.textContent = ""; rowOf.clear();
    const frag = document.createDocumentFragment();
    const walk = (list, level) => {
      const sorted = sortKids(list), cut = showAll.has(level === 0 ? -1 : parent[list[0]]) ? sorted.length : SHOWN;
      for (const i of sorted.slice(0, cut)) {
        const row = document.createElement("div");
        row.className = "tn" + (i === selected ? " selected" : "");
        row.setAttribute("role", "treeitem");
        row.dataset.node = i;
        row.style.paddingLeft = indent(level) + "px";
        row.innerHTML = `<span class="tw"></span><span class="sw"></span><span class="nm"></span><span class="tm"></span>`;
        row.children[0].textContent = kids[i].length ? (open.has(i) ? "▾" : "▸") : "";
        row.children[2].textContent = nameOf(i);
        row.title = CCTValues.path(pathOf(i).map(nameOf));
        frag.appendChild(row); rowOf.set(i, row);
        if (open.has(i)) walk(kids[i], level + 1);
      }
      if (sorted.length > cut) {
        const more = document.createElement("div");
        more.className = "more"; more.style.paddingLeft = (indent(level) + 16) + "px";
        more.textContent = `… ${sorted.length - cut} more`;
        more.onclick = () => { showAll.add(level === 0 ? -1 : parent[list[0]]); renderTree(); };
        frag.appendChild(more);
      }
    };
    walk(roots, 0);
    root.appendChild(frag);
    updateTreeTimes();
  }
  function updateTreeTimes() {
    if (!summary) return;
    rowOf.forEach((row, i) => {
      row.children[1].style.background = cssColor(i);
      row.children[3].textContent = summary.inc[i] > 0 ? fmt(summary.inc[i]) : "–";
      row.classList.toggle("idle", !(summary.inc[i] > 0));
    });
  }
  $("tree").addEventListener("click", (ev) => {
    const row = ev.target.closest(".tn");
    if (!row) return;
    const i = +row.dataset.node;
    if (ev.target.classList.contains("tw") && kids[i].length) {
      if (open.has(i)) open.delete(i); else open.add(i);
      renderTree();
      return;
    }
    select(i === selected ? -1 : i, false);
  });
  function reveal(i) {
    for (let p = parent[i]; p >= 0; p = parent[p]) {
      open.add(p);
      const sorted = sortKids(kids[p]);
      if (sorted.indexOf(i) >= SHOWN) showAll.add(p);
      i = p;
    }
    if (sortKids(roots).indexOf(i) >= SHOWN) showAll.add(-1);
  }
  function select(i, show) {
    selected = i;
    if (i >= 0 && show) reveal(i);
    renderTree();
    for (const tr of $("summary").tBodies[0].rows) tr.classList.toggle("selected", +tr.dataset.node === i);
    const row = rowOf.get(i);
    if (row && show) row.scrollIntoView({ block: "center" });
    draw();
  }

  // ------------------------------------------------------------------ pointer
  const tip = $("tooltip");
  function hit(ev) { // {lane, t, node, start, end, aggregated} under the pointer, or null
    const r = lanesCanvas.getBoundingClientRect();
    const x = (ev.clientX - r.left) * dpr, y = (ev.clientY - r.top) * dpr, gut = Math.round(GUTTER * dpr);
    const { rows } = laneRows();
    const row = rows.find(([, y0, y1]) => y >= y0 && y < y1);
    if (!row) return null;
    const lane = row[0];
    if (x < gut) return { lane, label: true };
    const plot = Math.max(1, lanesCanvas.width - gut), nsPerPx = (view.t1 - view.t0) / plot;
    const col = Math.floor(x - gut), t = view.t0 + (col + 0.5) * nsPerPx; // the column's sample, as drawn
    const src = source(lane, nsPerPx), iv = intervals(lane, src);
    const k = firstEndingAfter(iv, t);
    if (k >= iv.hi || iv.start(k) > t || iv.node(k) < 0) return { lane, t, node: -1 };
    return { lane, t, node: iv.node(k), start: iv.start(k), end: iv.end(k), aggregated: src.aggregated, width: iv.width };
  }
  function showTip(ev, h) {
    if (!h) { tip.hidden = true; return; }
    let html = `<div class="where"></div>`;
    tip.innerHTML = html;
    const where = tip.firstChild;
    where.textContent = D.lanes.label[h.lane] + (h.t !== undefined ? ` · ${fmt(h.t + OFF)}` : "") + ` · ${D.lanes.segments[h.lane].toLocaleString()} intervals`;
    if (h.node >= 0) {
      const head = document.createElement("div");
      if (h.aggregated) {
        head.className = "agg";
        head.textContent = `heaviest call path of ${fmt(h.start + OFF)} – ${fmt(h.end + OFF)} (aggregated, ${fmt(h.width)} buckets)`;
      } else head.textContent = `${fmt(h.start + OFF)} – ${fmt(h.end + OFF)} (${fmt(h.end - h.start)})`;
      tip.appendChild(head);
      const ol = document.createElement("ol");
      for (const p of pathOf(h.node)) {
        const li = document.createElement("li");
        li.textContent = nameOf(p);
        if (p === anc[h.node]) li.className = "cut";
        ol.appendChild(li);
      }
      tip.appendChild(ol);
    } else if (h.node === -1) {
      const idle = document.createElement("div"); idle.textContent = "idle (no traced call running)"; tip.appendChild(idle);
    }
    const counters = laneCounters(h.lane, view.t0, view.t1);
    if (counters.length) {
      const c = document.createElement("div");
      c.className = "counters";
      const seen = Math.max(...counters.map((x) => x.inside));
      c.textContent = seen ? `counters in the view (${seen} samples): ` + counters.map((x) =>
        `${x.name} ${x.how === "increase" ? "+" : x.how === "mean" ? "mean " : ""}${CCTValues.format(x.value, "")}`).join(", ")
        : "counters: no sample inside the view";
      tip.appendChild(c);
    }
    tip.hidden = false;
    const w = tip.offsetWidth, hh = tip.offsetHeight;
    tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - w - 4) + "px";
    tip.style.top = Math.min(ev.clientY + 14, window.innerHeight - hh - 4) + "px";
  }
  let drag = null;
  lanesCanvas.addEventListener("pointerdown", (ev) => {
    drag = { x: ev.clientX, y: ev.clientY, t0: view.t0, t1: view.t1, lane0: view.lane0, moved: false };
    lanesCanvas.setPointerCapture(ev.pointerId);
  });
  lanesCanvas.addEventListener("pointermove", (ev) => {
    if (drag) {
      const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      if (drag.moved) {
        lanesCanvas.classList.add("dragging");
        const r = lanesCanvas.getBoundingClientRect(), len = drag.t1 - drag.t0;
        const shift = -dx * len / Math.max(1, r.width - GUTTER);
        setView(drag.t0 + shift, drag.t1 + shift, drag.lane0 - dy * view.nlanes / r.height, view.nlanes);
        tip.hidden = true;
        return;
      }
    }
    showTip(ev, hit(ev));
  });
  lanesCanvas.addEventListener("pointerup", (ev) => {
    const d = drag; drag = null;
    lanesCanvas.classList.remove("dragging");
    if (d && !d.moved) {
      const h = hit(ev);
      if (h && h.label) showDepth(h.lane === depthLane ? -1 : h.lane);
      else if (h && h.node >= 0) select(h.node, true);
    }
  });
  lanesCanvas.addEventListener("pointerleave", () => { tip.hidden = true; });
  lanesCanvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = lanesCanvas.getBoundingClientRect();
    const f = Math.exp(Math.max(-3, Math.min(3, ev.deltaY * (ev.deltaMode ? 40 : 1) * 0.002)));
    if (ev.shiftKey || ev.clientX - r.left < GUTTER) {
      const at = view.lane0 + (ev.clientY - r.top) / r.height * view.nlanes; // lanes fill the height when zoomable
      const nl = Math.max(1, Math.min(nshown, view.nlanes * f));
      setView(view.t0, view.t1, at - (at - view.lane0) * nl / view.nlanes, nl);
    } else {
      const frac = Math.max(0, (ev.clientX - r.left - GUTTER) / Math.max(1, r.width - GUTTER));
      const at = view.t0 + frac * (view.t1 - view.t0);
      const len = Math.max(20, (view.t1 - view.t0) * f);
      setView(at - frac * len, at - frac * len + len, view.lane0, view.nlanes);
    }
  }, { passive: false });
  function setView(t0, t1, lane0, nl) {
    const len = Math.min(span, Math.max(20, t1 - t0));
    t0 = Math.max(0, Math.min(t0, span - len));
    nl = Math.max(1, Math.min(Math.max(nshown, 1), nl));
    view.t0 = t0; view.t1 = t0 + len;
    view.nlanes = nl; view.lane0 = Math.max(0, Math.min(lane0, nshown - nl));
    viewChanged();
  }

  // ------------------------------------------------------------------ controls
  const slider = $("depth");
  slider.max = maxDepth; slider.value = curDepth;
  // The first depth, when chosen for this trace, says why (it goes once the slider moves).
  const depthText = () => `${curDepth} / ${maxDepth}` + (D.depthReason && curDepth === D.depth ? ` (auto: ${D.depthReason})` : "");
  $("depth-value").textContent = depthText();
  slider.addEventListener("input", () => {
    curDepth = +slider.value;
    $("depth-value").textContent = depthText();
    setColors(); showLegend(); draw(); updateTreeTimes();
  });
  $("reset").onclick = () => {
    $("rank-filter").value = ""; $("kind-filter").value = "all";
    applyFilter();
    setView(0, span, 0, nshown);
  };
  // The lane filter: ranks as --rank takes them (0-3,8) and the kind of location.
  function parseRanks(text) {
    text = text.trim();
    if (!text) return null;
    const spans = [];
    for (const part of text.split(",")) {
      const m = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/.exec(part);
      if (!m || (m[2] !== undefined && +m[2] < +m[1])) return undefined;
      spans.push([+m[1], m[2] === undefined ? +m[1] : +m[2]]);
    }
    return spans;
  }
  function applyFilter() {
    const spans = parseRanks($("rank-filter").value), kind = $("kind-filter").value;
    $("rank-filter").classList.toggle("bad", spans === undefined);
    if (spans === undefined) return;
    const keep = [];
    for (let l = 0; l < lanes; l++) {
      const r = D.lanes.rank[l];
      if (spans && !spans.some(([a, b]) => r >= a && r <= b)) continue;
      if (kind !== "all" && D.lanes.kind[l] !== kind) continue;
      keep.push(l);
    }
    shown = Int32Array.from(keep); nshown = keep.length;
    setView(view.t0, view.t1, 0, nshown);
  }
  $("rank-filter").addEventListener("input", applyFilter);
  $("kind-filter").addEventListener("change", applyFilter);
  if (!D.lanes.kind.includes("gpu")) $("kind-filter").disabled = true;
  if (!D.messages) $("messages-control").hidden = true;
  $("show-messages").addEventListener("change", () => draw());
  $("depth-close").onclick = () => showDepth(-1);
  // Keyboard: W/S zoom time in and out around the middle, A/D pan by a fifth of the view,
  // arrows move the lanes up and down (a page of them with Page Up/Down), + and - show
  // fewer or more lanes, Escape closes the depth view, then the help, then resets.
  window.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || /^(INPUT|TEXTAREA|SELECT)$/.test(ev.target.tagName)) return;
    const len = view.t1 - view.t0, mid = (view.t0 + view.t1) / 2, step = Math.max(1, Math.round(view.nlanes / 10));
    const k = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
    const moves = {
      w: () => setView(mid - len / 3, mid + len / 3, view.lane0, view.nlanes),
      s: () => setView(mid - len * 0.75, mid + len * 0.75, view.lane0, view.nlanes),
      a: () => setView(view.t0 - len / 5, view.t1 - len / 5, view.lane0, view.nlanes),
      d: () => setView(view.t0 + len / 5, view.t1 + len / 5, view.lane0, view.nlanes),
      ArrowLeft: () => setView(view.t0 - len / 5, view.t1 - len / 5, view.lane0, view.nlanes),
      ArrowRight: () => setView(view.t0 + len / 5, view.t1 + len / 5, view.lane0, view.nlanes),
      ArrowUp: () => setView(view.t0, view.t1, view.lane0 - step, view.nlanes),
      ArrowDown: () => setView(view.t0, view.t1, view.lane0 + step, view.nlanes),
      PageUp: () => setView(view.t0, view.t1, view.lane0 - view.nlanes, view.nlanes),
      PageDown: () => setView(view.t0, view.t1, view.lane0 + view.nlanes, view.nlanes),
      "+": () => setView(view.t0, view.t1, view.lane0, view.nlanes / 1.5),
      "-": () => setView(view.t0, view.t1, view.lane0, view.nlanes * 1.5),
      "?": () => { $("help").hidden = !$("help").hidden; },
      Escape: () => {
        if (depthLane >= 0) showDepth(-1);
        else if (!$("help").hidden) $("help").hidden = true;
        else setView(0, span, 0, nshown);
      },
    };
    if (!moves[k]) return;
    ev.preventDefault();
    moves[k]();
  });
  $("help-toggle").onclick = () => { $("help").hidden = !$("help").hidden; };
  $("copy-window").onclick = () => navigator.clipboard && navigator.clipboard.writeText($("window-arg").textContent);
  window.addEventListener("resize", () => { resize(); draw(); });
  $("title").textContent = D.title;
  $("subtitle").textContent = D.subtitle;

  // Hooks for tests and benchmarks: the state, and the summary as numbers.
  window.cctoolTimeline = {
    data: D, view, gutter: GUTTER, get depth() { return curDepth; }, get selected() { return selected; },
    get lastDraw() { return lastDraw; }, get summary() { return summary; }, get legend() { return legend; },
    setView, select, computeSummary, showDepth, applyFilter, firstDrawMs: null,
    get shown() { return Array.from(shown); }, get arrowsDrawn() { return arrowsDrawn; },
    messagesIn, laneCounters,
    get depthLane() { return depthLane; },
    // The summary strip's column x, and the depth view's stacks (node ids, root first).
    stripColumn: (x) => stripColumn(x, (view.t1 - view.t0) / Math.max(1, lanesCanvas.width - Math.round(GUTTER * dpr))),
    depthColumns: () => depthColumns(depthLane, (view.t1 - view.t0) / Math.max(1, lanesCanvas.width - Math.round(GUTTER * dpr)), Math.max(1, lanesCanvas.width - Math.round(GUTTER * dpr))),
  };

  (async () => {
    const t = performance.now();
    A = await unpack();
    const segs = D.lanes.segments, off = A["exact.offsets"];
    exactLane = Array.from({ length: lanes }, (_, l) => segs[l] > 0 && off[l + 1] - off[l] === segs[l]);
    allExact = exactLane.every((x, l) => x || segs[l] === 0);
    whole = new Float64Array(n);
    {
      const nd = A["summary.node"], v = A["summary.ns"];
      for (let k = 0; k < nd.length; k++) whole[nd[k]] += v[k];
      own = Float64Array.from(whole);
      for (let i = n - 1; i >= 0; i--) if (parent[i] >= 0) whole[parent[i]] += whole[i];
    }
    setColors();
    showLegend();
    resize();
    draw();
    computeSummary();
    // Open the heaviest path a few levels down.
    let list = roots;
    for (let d = 0; d < 3 && list.length; d++) { const top = sortKids(list)[0]; open.add(top); list = kids[top]; }
    renderTree();
    window.cctoolTimeline.firstDrawMs = performance.now() - t;
    document.body.dataset.ready = "1";
  })().catch((e) => { $("status").textContent = "This page could not be drawn: " + e; throw e; });
})();
