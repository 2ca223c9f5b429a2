<?php
// Xdebug profiler workload: recursion and a function with two callers.
function fib($n) { return $n < 2 ? $n : fib($n - 1) + fib($n - 2); }
function work($k) { $s = 0; for ($i = 0; $i < $k; $i++) { $s += sqrt($i); } return $s; }
function a() { return work(200) + fib(6); }
function b() { return work(100); }
$t = 0;
for ($r = 0; $r < 2; $r++) { $t += a() + b(); }
echo $t, "\n";
