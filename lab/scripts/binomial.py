"""The 1% binomial quantile the coverage tallies compare a held count with."""
from math import comb


def q01(n, p=0.95):
    """The largest k with P(X < k) ≤ 0.01 for X ~ Binomial(n, p)."""
    c = 0.0
    for k in range(n + 1):
        pk = comb(n, k) * p**k * (1 - p)**(n - k)
        if c + pk > 0.01: return k
        c += pk
