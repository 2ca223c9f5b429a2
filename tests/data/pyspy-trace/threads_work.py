"""Two worker threads and the main thread doing different pure-Python work."""
import threading
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def squares(n):
    return sum(i * i for i in range(n))


def worker_fib():
    end = time.time() + 1.0
    while time.time() < end:
        fib(18)


def worker_squares():
    end = time.time() + 1.0
    while time.time() < end:
        squares(20000)


def main():
    threads = [threading.Thread(target=worker_fib, name="fib"),
               threading.Thread(target=worker_squares, name="squares")]
    for t in threads:
        t.start()
    squares(2_000_000)
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
