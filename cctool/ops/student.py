"""Student's t distribution for whole degrees of freedom, without a statistics library.

For an integer number of degrees of freedom ``nu`` the probability ``A(t | nu) = P(|T| < t)``
has a closed form in ``theta = atan(t / sqrt(nu))`` (Abramowitz and Stegun 26.7.3 and
26.7.4): for odd ``nu``

    A = 2/pi * (theta + sin(theta) * (cos(theta) + 2/3 cos^3(theta) + ...
        + (2*4*...*(nu-3)) / (1*3*...*(nu-2)) * cos^(nu-2)(theta)))   (just 2 theta / pi for 1)

and for even ``nu``

    A = sin(theta) * (1 + 1/2 cos^2(theta) + (1*3)/(2*4) cos^4(theta) + ...
        + (1*3*...*(nu-3)) / (2*4*...*(nu-2)) * cos^(nu-2)(theta)).

The quantile is found by bisection on ``A``, which rises monotonically in ``t``; 200 halvings
reach the float's resolution. Prediction intervals of the scaling models use it (their
degrees of freedom are points minus coefficients, a whole number).
"""

from __future__ import annotations

import math


def two_sided(t: float, nu: int) -> float:
    """``P(|T| < t)`` for ``T`` with ``nu`` (>= 1) degrees of freedom."""
    if nu < 1:
        raise ValueError("degrees of freedom must be at least 1")
    theta = math.atan(abs(t) / math.sqrt(nu))
    s, c = math.sin(theta), math.cos(theta)
    if nu % 2:
        total, term = 0.0, c
        for k in range(1, nu - 1, 2):  # terms cos^k, k = 1, 3, ..., nu - 2
            total += term
            term *= c * c * (k + 1) / (k + 2)
        return 2.0 / math.pi * (theta + s * total) if nu > 1 else 2.0 * theta / math.pi
    total, term = 0.0, 1.0
    for k in range(0, nu - 1, 2):  # terms cos^k, k = 0, 2, ..., nu - 2
        total += term
        term *= c * c * (k + 1) / (k + 2)
    return s * total


def t_quantile(confidence: float, nu: int) -> float:
    """The ``t`` with ``P(|T| < t) = confidence``: the multiplier of a two-sided interval."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence lies strictly between 0 and 1")
    low, high = 0.0, 1.0
    while two_sided(high, nu) < confidence:
        high *= 2.0
    for _ in range(200):
        mid = 0.5 * (low + high)
        if two_sided(mid, nu) < confidence:
            low = mid
        else:
            high = mid
        if high - low <= 1e-15 * high:
            break
    return 0.5 * (low + high)
