"""Allocations for memray: two sites under two callers, some freed, a peak in the middle."""


def grab(n):
    return bytearray(n)


def table(n):
    return [grab(64 * 1024) for _ in range(n)]


def buffer(n):
    return grab(n * 1024 * 1024)


def main():
    kept = table(40)
    big = buffer(8)
    del big
    more = table(20)
    return len(kept) + len(more)


main()
