// A CPU-bound program for node --prof: main calls middle and other, both end in leaf.
function leaf(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i) * (i % 7); return s; }
function middle(n) { return leaf(n) + leaf(n / 2); }
function other(n) { let s = 0; for (let k = 0; k < 4; k++) s += leaf(n / 4); return s; }
function main() { let t = 0; for (let r = 0; r < 20; r++) t += middle(2e6) + other(2e6); return t; }
console.log(main().toFixed(0));
