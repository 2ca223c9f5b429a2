import fractions

import pytest


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


@pytest.mark.parametrize("n", range(12))
def test_fib(n):
    assert fib(n) >= 0


def test_fractions():
    assert sum(fractions.Fraction(1, k) for k in range(1, 40)) > 4
