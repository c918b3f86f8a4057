"""The Chernoff-Hoeffding upper value of a mean in [0, 1] (the KL inversion twoscale's ChernoffHoeffding makes),
shared by the lab's first-block scripts."""
import math


def klub(mean, n, delta):
    """The largest b >= mean with kl(mean, b) <= ln(1/delta)/n (bisection; 1 - e^(-ln(1/delta)/n) at mean 0)."""
    L = math.log(1 / delta) / n
    if mean <= 0:
        return -math.expm1(-L)
    lo, hi = mean, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        kl = mean * math.log(mean / mid) + (1 - mean) * (math.log1p(-mean) - math.log1p(-mid))
        lo, hi = (lo, mid) if kl > L else (mid, hi)
    return hi
