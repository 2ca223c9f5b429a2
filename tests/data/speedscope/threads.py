"""Two worker threads and the main thread share CPU-bound work (for per-thread profiles)."""
import threading


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def worker(n):
    for _ in range(3):
        leaf(n)


def main():
    threads = [threading.Thread(target=worker, args=(300000 * (k + 1),)) for k in range(2)]
    for t in threads:
        t.start()
    leaf(500000)
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
