"""A parent process and two worker processes share CPU-bound work (for per-process profiles)."""
import multiprocessing


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def main():
    with multiprocessing.Pool(2) as pool:
        pool.map(leaf, [200000, 400000, 200000, 400000])


if __name__ == "__main__":
    main()
