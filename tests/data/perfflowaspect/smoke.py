import time

import perfflowaspect.aspect


@perfflowaspect.aspect.critical_path()
def bas():
    time.sleep(0.002)


@perfflowaspect.aspect.critical_path()
def bar():
    time.sleep(0.003)
    bas()


@perfflowaspect.aspect.critical_path()
def foo():
    time.sleep(0.001)
    bar()
    bas()


if __name__ == "__main__":
    for _ in range(3):
        foo()
    bar()
