// Small program that profiles itself with runtime/pprof: CPU and heap.
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var sink [][]byte

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func spin(iter int) float64 {
	s := 0.0
	for i := 0; i < iter; i++ {
		s += float64(i%7) * 0.5
	}
	return s
}

func allocate(n, size int) {
	for i := 0; i < n; i++ {
		sink = append(sink, make([]byte, size))
	}
}

func work() int {
	t := 0
	for r := 0; r < 4; r++ {
		t += fib(33)
		t += int(spin(60000000))
		allocate(200, 4096)
	}
	return t
}

func main() {
	cpu, _ := os.Create("cpu.pb.gz")
	pprof.StartCPUProfile(cpu)
	work()
	pprof.StopCPUProfile()
	cpu.Close()
	runtime.GC()
	heap, _ := os.Create("heap.pb.gz")
	pprof.WriteHeapProfile(heap)
	heap.Close()
}
