"""Small CPU-bound program with nested calls, profiled by py-spy, Austin and viztracer."""


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def middle(n):
    return leaf(n) + leaf(n // 2)


def other(n):
    return sum(leaf(k) for k in range(0, n, n // 20))


def main():
    total = 0
    for _ in range(3):
        total += middle(1500000)
        total += other(150000)
    return total


if __name__ == "__main__":
    main()
