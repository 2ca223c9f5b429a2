// Small CPU-bound program; node writes its own trace events (B/E pairs and X events).
function leaf(n) { let s = 0; for (let i = 0; i < n; i++) s += i * i; return s; }
function main() { let t = 0; for (let r = 0; r < 3; r++) t += leaf(5e6); return t; }
console.log(main());
