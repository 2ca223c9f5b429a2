"""Two worker processes and a thread each: viztracer records one pid per process."""
import multiprocessing as mp
import threading
import time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        leaf(2000)


def work(k):
    t = threading.Thread(target=spin, args=(0.02 * k,))
    t.start()
    spin(0.03)
    time.sleep(0.01)
    t.join()


def main():
    procs = [mp.Process(target=work, args=(k,)) for k in (1, 2)]
    for p in procs:
        p.start()
    spin(0.02)
    for p in procs:
        p.join()


if __name__ == "__main__":
    main()
