"""A recursion 3,000 calls deep, for pyinstrument's JSON of a deep stack."""
import sys

sys.setrecursionlimit(10000)


def down(n):
    if n == 0:
        total = 0
        for i in range(300_000):
            total += i * i
        return total
    return down(n - 1) + 1


def main():
    for _ in range(3):
        down(3000)


main()
