"""Allocation workload for scalene and memray: two allocating functions under two callers."""


def make_rows(n):
    return [list(range(50)) for _ in range(n)]


def make_text(n):
    return ["x" * 1000 for _ in range(n)]


def build():
    keep = []
    for _ in range(2):
        keep.append(make_rows(2000))
        keep.append(make_text(3000))
    return keep


def main():
    total = 0
    for _ in range(1):
        total += len(build())
    return total


if __name__ == "__main__":
    main()
