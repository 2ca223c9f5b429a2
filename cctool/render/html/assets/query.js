// query.js: a selection as a `cctool query` (string dialect) that matches exactly the
// selected nodes. `cctool query` keeps every node on a matching chain, so a query can
// name a node's ancestors only when they are selected too. The first form that fits wins:
//   1. the selection is one call path from a root: a path query, one name per level;
//   2. it is a whole subtree: its top node followed by ("*");
//   3. anything else: one condition per group of nodes, the most general that is still
//      exact: a name (every node of that name is selected), a name at a depth, a name at a
//      depth on a source line, and only then node ids (with the name, for the reader).
// Every condition is checked against the whole profile here, so the result is exact.

CCT.quote = (s) => '"' + String(s).replace(/\\/g, "\\\\").replace(/"/g, '\\"') + '"';

CCT.selectionQuery = function (model, ids) {
  const sel = Array.from(new Set(ids)).sort((a, b) => a - b);
  if (!sel.length) return "";
  return pathQuery(model, sel) || subtreeQuery(model, sel) || nodesQuery(model, sel);
};

function variable(k) { return k < 26 ? String.fromCharCode(97 + k) : "v" + k; }
function hasName(model, i) { return model.nameCode[i] >= 0; }
function nameIs(model, v, i) { return `${v}."name" = ${CCT.quote(model.name(i))}`; }

// Form 1: a root and a chain of its descendants, each the parent of the next.
function pathQuery(model, sel) {
  if (model.parent[sel[0]] >= 0 || !sel.every((i) => hasName(model, i))) return null;
  for (let k = 1; k < sel.length; k++) if (model.parent[sel[k]] !== sel[k - 1]) return null;
  if (countChains(model, sel) !== 1) return null;
  const pattern = sel.map((_, k) => `(".", ${variable(k)})`).join("->");
  const conds = sel.map((i, k) => nameIs(model, variable(k), i));
  conds.splice(1, 0, `${variable(0)}."depth" = 0`);
  return `MATCH ${pattern}\nWHERE ${conds.join("\n  AND ")}`;
}

// How many chains from a root follow the names of `sel` level by level.
function countChains(model, sel) {
  let level = model.roots.filter((r) => model.nameCode[r] === model.nameCode[sel[0]]);
  for (let k = 1; k < sel.length && level.length; k++) {
    const code = model.nameCode[sel[k]], next = [];
    for (const i of level) for (const c of model.children(i)) if (model.nameCode[c] === code) next.push(c);
    level = next;
  }
  return level.length;
}

// Form 2: the selection is node t and everything below it (a contiguous preorder block).
function subtreeQuery(model, sel) {
  const t = sel[0];
  if (model.size[t] < 2 || sel.length !== model.size[t] || sel[sel.length - 1] !== t + sel.length - 1) return null;
  return `MATCH (".", p)->("*")\nWHERE ${exactConditions(model, [t]).join("\n   OR ")}`;
}

// Form 3: conditions on single nodes, OR-ed.
function nodesQuery(model, sel) {
  return `MATCH (".", p)\nWHERE ${exactConditions(model, sel).join("\n   OR ")}`;
}

// Conditions on p that together match exactly the nodes `sel` (one variable, so the
// query never multiplies out into alternatives).
function exactConditions(model, sel) {
  const chosen = new Uint8Array(model.n);
  sel.forEach((i) => { chosen[i] = 1; });
  const all = (ids) => ids.every((i) => chosen[i]);
  const index = nameIndex(model);
  const out = [], byDepth = new Map(), rest = [];
  const byCode = groupBy(sel.filter((i) => hasName(model, i)), (i) => model.nameCode[i]);
  for (const [code, ids] of byCode) {
    if (all(index.get(code))) { out.push(nameIs(model, "p", ids[0])); continue; }
    for (const [d, same] of groupBy(ids, (i) => model.depth[i])) {
      const peers = index.get(code).filter((j) => model.depth[j] === d);
      if (all(peers)) {
        if (!byDepth.has(d)) byDepth.set(d, []);
        byDepth.get(d).push(same[0]);
      } else {
        rest.push(...sourceConditions(model, same, peers, chosen, out));
      }
    }
  }
  for (const [d, firsts] of [...byDepth].sort((a, b) => a[0] - b[0])) {
    const names = firsts.map((i) => nameIs(model, "p", i));
    const either = names.length > 1 ? `(${names.join(" OR ")})` : names[0];
    out.push(`(p."depth" = ${d} AND ${either})`);
  }
  rest.push(...sel.filter((i) => !hasName(model, i)));
  for (const i of rest.sort((a, b) => a - b)) {
    out.push(hasName(model, i) ? `(p."node" = ${i} AND ${nameIs(model, "p", i)})` : `p."node" = ${i}`);
  }
  return out;
}

// Nodes that share name and depth with unselected ones: try their source line (and file).
// Adds the exact conditions to `out` and returns the nodes still left.
function sourceConditions(model, same, peers, chosen, out) {
  let left = same;
  for (const keys of [["line"], ["file", "line"]]) {
    if (!keys.every((k) => k in model.attrs)) continue;
    const key = (i) => JSON.stringify(keys.map((k) => model.attr(k, i)));
    const groups = groupBy(peers, key), next = [];
    for (const [k, ids] of groupBy(left, key)) {
      const values = keys.map((a) => model.attr(a, ids[0]));
      if (values.some((v) => v === null || (typeof v === "number" && !Number.isFinite(v)))
          || !groups.get(k).every((j) => chosen[j])) { next.push(...ids); continue; }
      const attrs = keys.map((a, j) => `p.${CCT.quote(a)} = ${literal(values[j])}`);
      out.push(`(p."depth" = ${model.depth[ids[0]]} AND ${nameIs(model, "p", ids[0])} AND ${attrs.join(" AND ")})`);
    }
    left = next;
    if (!left.length) break;
  }
  return left;
}

function literal(v) { return typeof v === "number" ? String(v) : CCT.quote(v); }

function groupBy(items, key) {
  const out = new Map();
  for (const x of items) {
    const k = key(x);
    if (!out.has(k)) out.set(k, []);
    out.get(k).push(x);
  }
  return out;
}

// Node ids by name code, built once per model.
function nameIndex(model) {
  if (!model.byName) model.byName = groupBy(Array.from({ length: model.n }, (_, i) => i),
    (i) => model.nameCode[i]);
  return model.byName;
}
