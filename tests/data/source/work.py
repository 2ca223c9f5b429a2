"""A small workload for cProfile: a hot inner function called from a loop."""


def inner(n):
    total = 0
    for k in range(n):
        total += k * k % 7
    return total


def outer(reps, n):
    return sum(inner(n) for _ in range(reps))


def main():
    print(outer(200, 2000))


if __name__ == "__main__":
    main()
