// history.js: undo and redo of view changes. Each part of the page that owns state a user
// changes (the tree's collapsed set and prune, the selection, the metrics, the table's open
// rows and sort) registers it once with CCT.history.track(name, get, set); after a user's
// change it calls CCT.history.commit(label). A commit stores a snapshot of every tracked
// state when one of them differs from the last snapshot; undo and redo restore snapshots
// through the parts' own setters, which must not commit themselves while restoring
// (CCT.history.restoring is true then).
(() => {
  const LIMIT = 200; // snapshots kept; the oldest go first
  const parts = new Map();
  const listeners = [];
  let past = [], future = [], last = null;

  function snapshot() {
    const snap = {};
    parts.forEach((p, name) => { snap[name] = JSON.stringify(p.get()); });
    return snap;
  }
  function same(a, b) {
    if (!a || !b) return false;
    for (const k of Object.keys(a)) if (a[k] !== b[k]) return false;
    return Object.keys(a).length === Object.keys(b).length;
  }
  function apply(snap) {
    history.restoring = true;
    try {
      parts.forEach((p, name) => {
        if (name in snap && snap[name] !== JSON.stringify(p.get())) p.set(JSON.parse(snap[name]));
      });
    } finally {
      history.restoring = false;
    }
    last = snap;
    listeners.forEach((fn) => fn());
  }

  const history = {
    restoring: false,
    // Register a state; its current value becomes part of the first snapshot.
    track(name, get, set) {
      parts.set(name, { get, set });
      if (last) last[name] = JSON.stringify(get());
    },
    // Record the state after a user's change; returns whether anything changed.
    commit(label) {
      if (history.restoring) return false;
      const now = snapshot();
      if (!last) { last = now; return false; }
      if (same(now, last)) return false;
      past.push({ snap: last, label });
      if (past.length > LIMIT) past.shift();
      future = [];
      last = now;
      listeners.forEach((fn) => fn());
      return true;
    },
    undo() {
      if (!past.length) return false;
      const { snap, label } = past.pop();
      future.push({ snap: last, label });
      apply(snap);
      return true;
    },
    redo() {
      if (!future.length) return false;
      const { snap, label } = future.pop();
      past.push({ snap: last, label });
      apply(snap);
      return true;
    },
    // Take the current state as the starting point (after the page's first view is drawn).
    start() { last = snapshot(); past = []; future = []; listeners.forEach((fn) => fn()); },
    canUndo: () => past.length > 0,
    canRedo: () => future.length > 0,
    nextUndo: () => (past.length ? past[past.length - 1].label : ""),
    nextRedo: () => (future.length ? future[future.length - 1].label : ""),
    on(fn) { listeners.push(fn); },
  };
  CCT.history = history;
})();
