// Small workload for node --cpu-prof / --heap-prof: recursion, two callers of one function.
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function work(k) { let s = 0; for (let i = 0; i < k; i++) s += Math.sqrt(i); return s; }
function a() { return work(2e6) + fib(22); }
function b() { return work(1e6); }
function alloc() { const out = []; for (let i = 0; i < 2000; i++) out.push(new Array(500).fill(i)); return out; }
let keep = [];
for (let r = 0; r < 20; r++) { a(); b(); keep.push(alloc()); }
console.log(keep.length);
