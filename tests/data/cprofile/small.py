"""Small workload for the profile corpus (Python 2.7 and 3.x): an import, recursion, calls."""
import json


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def encode(k):
    return json.dumps({"k": list(range(k))})


def main():
    total = 0
    for i in range(40):
        total += fib(10) + len(encode(i))
    return total


if __name__ == "__main__":
    main()
