"""Small workload for the profiler corpus: imports (exec -> import -> exec), recursion, threads."""
import json
import sys
import threading


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def encode(k):
    return json.dumps({"k": list(range(k))})


def worker(n):
    total = 0
    for i in range(n):
        total += fib(12) + len(encode(i % 50))
    return total


def main(threads=1):
    import decimal  # an import inside the profiled run
    decimal.Decimal(1) / decimal.Decimal(7)
    if threads > 1:
        ts = [threading.Thread(target=worker, args=(60,)) for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    else:
        worker(120)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
