"""Benchmark: ExactAccountant against dp_accounting's PLDAccountant on Gaussian and Laplace.

For GaussianDpEvent(sigma) and LaplaceDpEvent(b) self-composed k times (ADD_OR_REMOVE_ONE),
each row measures, in one process:

* the time of ``compose`` + ``get_epsilon(1e-5)`` + ``get_delta(eps*)`` for ours and for
  ``PLDAccountant()`` (default ``value_discretization_interval`` 1e-4, pessimistic);
* ``eps(1e-5)``: our upper bound, PLD's value, and the truth when an independent value is
  cheap (Gaussian: the composition is G_mu, mu = sqrt(k)/sigma, solved in mpmath);
* ``delta(eps*)`` at ``eps*`` = PLD's eps(1e-5) rounded down to 3 decimals: our upper
  bound, PLD's value and an independent value: Gaussian: ``Phi(-eps/mu + mu/2) - e^eps
  Phi(-eps/mu - mu/2)`` in mpmath; Laplace, k <= 10: the exact loss distribution (atoms
  and the k-fold convolution of the flat part, integrated piecewise by mpmath.quad);
  Laplace, k > 10: Fourier inversion of the exact loss transform in mpmath
  (:func:`laplace_delta_fourier`, no grid; the column ``ref err`` is its error bound,
  relative).  For Laplace, our eps(1e-5) is also checked: the independent delta there must
  be <= 1e-5.  ``(o-P)/ref`` = (ours - PLD's) / reference (negative: ours tighter),
  ``(o-ref)/ref`` = (ours - reference) / reference (must be >= 0).

Flags: ``BELOW`` (ours below the true/independent value), ``LOOSER`` (ours above PLD's
pessimistic value), ``SLOW`` (ours > 3x PLD's time), ``PLD-BELOW-TRUE`` (dp_accounting's
"pessimistic" value is below the true one: it is not an upper bound there, and ours is not
compared with it).  Rows whose PLD run would take very
long (Gaussian with mu = sqrt(k)/sigma > 60: PLD discretises one Gaussian of that width)
are skipped unless ``--all``.

Run: python benchmarks/bench_accountant.py [--quick] [--all] [--kind gaussian|laplace]
     [--k 1 10 ...] [--param 0.5 1 ...]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from fractions import Fraction

import _here  # noqa: F401  (this checkout, not an installed copy)
import mpmath
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

from dpcompose_exact.integrations.dp_accounting import ExactAccountant

TARGET = 1e-5
KS = (1, 10, 100, 1000, 10000)
SIGMAS = (0.5, 1.0, 2.0, 5.0)
BS = (0.5, 1.0, 2.0)


# ---------------------------------------------------------------------------------------
# independent values


def gaussian_delta_mp(mu: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def gaussian_eps_mp(mu: mpmath.mpf, delta: float) -> mpmath.mpf:
    d = mpmath.mpf(delta)
    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    if gaussian_delta_mp(mu, lo) <= d:
        return lo
    while gaussian_delta_mp(mu, hi) > d:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gaussian_delta_mp(mu, mid) > d else (lo, mid)
    return hi


def _irwin_hall(j: int, u: mpmath.mpf) -> mpmath.mpf:
    """Density of the sum of j uniforms on (0, 1) at u."""
    if u <= 0 or u >= j:
        return mpmath.mpf(0)
    s = mpmath.mpf(0)
    for i in range(int(mpmath.floor(u)) + 1):
        s += (-1) ** i * mpmath.binomial(j, i) * (u - i) ** (j - 1)
    return s / mpmath.factorial(j - 1)


def laplace_delta_mp(eps0: mpmath.mpf, k: int, eps: mpmath.mpf) -> mpmath.mpf:
    """delta(eps) of k Laplace uses (loss bound eps0), from the loss distribution itself.

    One loss: atom +eps0 (P-mass 1/2), atom -eps0 (e^-eps0 / 2), density
    e^(-eps0/2) e^(l/2) / 4 on (-eps0, eps0).  Conditioning on j flat parts and m (k - j -
    m) atoms at +eps0 (-eps0), the flat parts sum to y with density proportional to
    e^(y/2) times the j-fold convolution V_j of the indicator of (-eps0, eps0).
    """
    total = mpmath.mpf(0)
    for j in range(k + 1):
        for m in range(k - j + 1):
            n = k - j - m
            w = (
                mpmath.binomial(k, j)
                * mpmath.binomial(k - j, m)
                * mpmath.mpf(2) ** -m
                * (mpmath.exp(-eps0) / 2) ** n
                * (mpmath.exp(-eps0 / 2) / 4) ** j
            )
            x = eps0 * (m - n)
            if j == 0:
                total += w * max(mpmath.mpf(0), 1 - mpmath.exp(eps - x))
                continue
            top = j * eps0
            low = max(-top, eps - x)
            if low >= top:
                continue

            def f(y: mpmath.mpf, j: int = j, x: mpmath.mpf = x) -> mpmath.mpf:
                v = (2 * eps0) ** (j - 1) * _irwin_hall(j, (y + j * eps0) / (2 * eps0))
                return (1 - mpmath.exp(eps - x - y)) * mpmath.exp(y / 2) * v

            cuts = [low] + [-top + 2 * eps0 * i for i in range(1, j) if -top + 2 * eps0 * i > low]
            total += w * mpmath.quad(f, [*cuts, top])
    return total


def _lin_exp(
    a0: mpmath.mpf, b0: int, gm: mpmath.mpf, p: mpmath.mpf, q: mpmath.mpf
) -> mpmath.mpf:
    """``int_p^q (a0 + b0 y) e^(gm y) dy`` in closed form."""

    def prim(y: mpmath.mpf) -> mpmath.mpf:
        return mpmath.exp(gm * y) * ((a0 + b0 * y) / gm - b0 / gm**2)

    return prim(q) - prim(p)


def laplace_delta_fourier(
    eps0: mpmath.mpf, k: int, eps: mpmath.mpf, t_max: float = 1024.0
) -> tuple[mpmath.mpf, mpmath.mpf]:
    """delta(eps) of k Laplace uses by Fourier inversion in mpmath; returns (value, tail bound).

    An independent route (no grid): with the half-tilted measure nu = (1/2) delta_{eps0} +
    (1/2) delta_{-eps0} + (1/4) Leb on (-eps0, eps0), of Laplace transform M(s) = A(s) +
    B(s), A = cosh(s eps0), B = sinh(s eps0)/(2s), delta = e^(-k eps0/2) int g dnu^(*k) with
    g(l) = (e^(l/2) - e^(eps - l/2))_+, whose transform is e^((1/2 - s) eps)/(s^2 - 1/4)
    (Re s > 1/2).  The terms A^k (all atoms: a binomial lattice), k A^(k-1) B and
    C(k,2) A^(k-2) B^2 (one or two flat parts: one-dimensional integrals) are summed
    directly; the rest, O(|B|^3), is integrated on the line Re s = c (the saddle point) up to
    |t| = T, and the part beyond T is bounded by
    e^((1/2 - c) eps) C(k,3) cosh(c eps0)^k (1 + 1/(2T))^(k-3) / (32 T^4 pi).
    """
    e0 = eps0
    half = mpmath.mpf(1) / 2

    def g(x: mpmath.mpf) -> mpmath.mpf:
        return mpmath.exp(x / 2) - mpmath.exp(eps - x / 2) if x > eps else mpmath.mpf(0)

    j0 = (
        mpmath.fsum(
            mpmath.binomial(k, m) * g(e0 * (2 * m - k))
            for m in range(k + 1)
            if e0 * (2 * m - k) > eps
        )
        / mpmath.mpf(2) ** k
    )
    j1 = mpmath.mpf(0)
    for m in range(k):
        x = e0 * (2 * m - (k - 1))
        y0 = max(-e0, eps - x)
        if y0 >= e0:
            continue
        part = 2 * (mpmath.exp((x + e0) / 2) - mpmath.exp((x + y0) / 2)) + 2 * (
            mpmath.exp(eps - (x + e0) / 2) - mpmath.exp(eps - (x + y0) / 2)
        )
        j1 += mpmath.binomial(k - 1, m) * part
    j1 *= k * mpmath.mpf(2) ** -(k - 1) / 4
    # two flat parts: their sum has the density (2 eps0 - |y|)/16 on (-2 eps0, 2 eps0)
    j2 = mpmath.mpf(0)
    for m in range(k - 1):
        x = e0 * (2 * m - (k - 2))
        y0 = max(-2 * e0, eps - x)
        if y0 >= 2 * e0:
            continue
        # int (2 eps0 - |y|) g(x + y) dy in closed form (piecewise linear times exponentials;
        # a quadrature per lattice point was slow at k = 10^4 and failed at b = 2, k = 1000)
        pieces = [(y0, mpmath.mpf(0), 1), (mpmath.mpf(0), 2 * e0, -1)] if y0 < 0 else [
            (y0, 2 * e0, -1)
        ]
        part = mpmath.fsum(
            mpmath.exp(x / 2) * _lin_exp(2 * e0, sl, half, a, b)
            - mpmath.exp(eps - x / 2) * _lin_exp(2 * e0, sl, -half, a, b)
            for a, b, sl in pieces
        )
        j2 += mpmath.binomial(k - 2, m) * part
    j2 *= mpmath.binomial(k, 2) * mpmath.mpf(2) ** -(k - 2) / 16

    def dlogm(c: mpmath.mpf) -> mpmath.mpf:
        m = mpmath.cosh(c * e0) + mpmath.sinh(c * e0) / (2 * c)
        dm = e0 * mpmath.sinh(c * e0) + (c * e0 * mpmath.cosh(c * e0) - mpmath.sinh(c * e0)) / (
            2 * c * c
        )
        return k * dm / m - eps

    lo, hi = half, mpmath.mpf(1)
    while dlogm(hi) < 0:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if dlogm(mid) < 0 else (lo, mid)
    c = max(hi, half + mpmath.mpf(1) / 20)
    mc = mpmath.cosh(c * e0) + mpmath.sinh(c * e0) / (2 * c)
    var = mpmath.diff(
        lambda z: mpmath.log(mpmath.cosh(z * e0) + mpmath.sinh(z * e0) / (2 * z)), c, 2
    )
    width = 1 / mpmath.sqrt(k * var)

    def f(t: mpmath.mpf) -> mpmath.mpf:
        s = c + 1j * t
        a, b = mpmath.cosh(s * e0), mpmath.sinh(s * e0) / (2 * s)
        rest = (
            (a + b) ** k - a**k - k * a ** (k - 1) * b - mpmath.binomial(k, 2) * a ** (k - 2) * b**2
        )
        return mpmath.re(mpmath.exp((half - s) * eps) / (s * s - mpmath.mpf(1) / 4) * rest)

    def tail(t: mpmath.mpf) -> mpmath.mpf:
        return (
            mpmath.exp((half - c) * eps)
            * mpmath.binomial(k, 3)
            * mpmath.cosh(c * e0) ** k
            * (1 + 1 / (2 * t)) ** (k - 3)
            / (32 * t**4 * mpmath.pi)
        )

    scale = mc**k * mpmath.exp((half - c) * eps) * width
    big_t = mpmath.mpf(2)
    while tail(big_t) > mpmath.mpf(10) ** -13 * scale and big_t < t_max:
        big_t *= 2
    step = min(width, mpmath.pi / (eps + k * e0 + 1))
    edge = min(big_t, 40 * width)
    pts = [edge * i / 40 for i in range(41)]
    extra = mpmath.mpf(0)
    if (big_t - edge) / (2 * step) <= 4000:  # the rest of [0, T] integrated too
        t = edge
        while t < big_t:
            t = min(big_t, t + 2 * step)
            pts.append(t)
    else:  # far from the saddle: bounded by the envelope (sampled), added to the error

        def envelope(t: mpmath.mpf) -> mpmath.mpf:
            s = c + 1j * t
            a, b = abs(mpmath.cosh(s * e0)), abs(mpmath.sinh(s * e0) / (2 * s))
            env = (
                (a + b) ** k
                + a**k
                + k * a ** (k - 1) * b
                + mpmath.binomial(k, 2) * a ** (k - 2) * b**2
            )
            return mpmath.exp((half - c) * eps) / abs(s * s - mpmath.mpf(1) / 4) * env

        n = int(min(2000, (big_t - edge) / (width / 2))) + 1
        top = max(envelope(edge + (big_t - edge) * i / n) for i in range(n + 1))
        extra = top * (big_t - edge) / mpmath.pi
    integral = mpmath.quad(f, pts, method="gauss-legendre", maxdegree=4) / mpmath.pi
    factor = mpmath.exp(-k * e0 / 2)
    return factor * (j0 + j1 + j2 + integral), factor * (tail(big_t) + extra)


# ---------------------------------------------------------------------------------------
# one row


def _event(kind: str, param: float, k: int) -> dp_event.DpEvent:
    one = dp_event.GaussianDpEvent(param) if kind == "gaussian" else dp_event.LaplaceDpEvent(param)
    return dp_event.SelfComposedDpEvent(one, k)


def _timed(
    make: object, event: dp_event.DpEvent, eps: float | None
) -> tuple[float, float, float, object]:
    t0 = time.perf_counter()
    acc = make()  # type: ignore[operator]
    acc.compose(event)
    e = acc.get_epsilon(TARGET)
    d = acc.get_delta(eps if eps is not None else e)
    return time.perf_counter() - t0, e, d, acc


def _laplace_ref(eps0: mpmath.mpf, k: int, eps: mpmath.mpf) -> tuple[mpmath.mpf, mpmath.mpf, str]:
    """Independent delta(eps) of k Laplace uses: (value, error bound, method)."""
    if k <= 10:
        return laplace_delta_mp(eps0, k, eps), mpmath.mpf(0), "exact"
    value, err = laplace_delta_fourier(eps0, k, eps)
    return value, err, "Fourier"


def row(kind: str, param: float, k: int) -> dict[str, object]:
    event = _event(kind, param, k)
    pld_t, pld_e, _, pld_acc = _timed(pld_privacy_accountant.PLDAccountant, event, None)
    eps_star = math.floor(pld_e * 1000) / 1000
    pld_d = pld_acc.get_delta(eps_star)  # type: ignore[attr-defined]
    ours_t, ours_e, ours_d, _ = _timed(ExactAccountant, event, eps_star)
    true_e = None
    ref_err = mpmath.mpf(0)
    eps_ok = True
    with mpmath.workdps(40):
        q = Fraction(repr(eps_star))  # the decimal, as ExactAccountant reads the float
        es = mpmath.mpf(q.numerator) / q.denominator
        if kind == "gaussian":
            mu = mpmath.sqrt(k) / mpmath.mpf(repr(param))
            true_d, how = gaussian_delta_mp(mu, es), "analytic"
            true_e = gaussian_eps_mp(mu, TARGET)
        else:
            eps0 = 1 / mpmath.mpf(repr(param))
            true_d, ref_err, how = _laplace_ref(eps0, k, es)
            if k > 1:  # our eps(1e-5) is an upper bound iff the true delta there is <= 1e-5
                qe = Fraction(ours_e)
                d_at, d_err, _ = _laplace_ref(eps0, k, mpmath.mpf(qe.numerator) / qe.denominator)
                eps_ok = d_at - d_err <= mpmath.mpf(TARGET)
    flags = []
    if ours_d < true_d - ref_err or (true_e is not None and ours_e < true_e) or not eps_ok:
        flags.append("BELOW")
    pld_sound = pld_d >= true_d - ref_err and (true_e is None or pld_e >= true_e)
    if not pld_sound:
        flags.append("PLD-BELOW-TRUE")  # dp_accounting's value is not an upper bound here
    elif ours_d > pld_d or ours_e > pld_e:
        flags.append("LOOSER")
    if ours_t > 3 * pld_t:
        flags.append("SLOW")
    return {
        "kind": kind,
        "param": param,
        "k": k,
        "ours_s": ours_t,
        "pld_s": pld_t,
        "eps_ours": ours_e,
        "eps_pld": pld_e,
        "eps_true": float(true_e) if true_e is not None else None,
        "eps_star": eps_star,
        "delta_ours": ours_d,
        "delta_pld": pld_d,
        "delta_ref": float(true_d),
        "rel_pld": float((mpmath.mpf(ours_d) - mpmath.mpf(pld_d)) / true_d),
        "rel_ref": float((mpmath.mpf(ours_d) - true_d) / true_d),
        "ref_err": float(ref_err / true_d),
        "ref": how,
        "flags": ",".join(flags) or "ok",
    }


def _optimistic(b: float, k: int, eps: float) -> float:
    """dp_accounting's optimistic PLD of k Laplace(b) uses: delta(eps), a lower estimate."""
    from dp_accounting.pld import privacy_loss_distribution as pld_mod

    pld = pld_mod.from_laplace_mechanism(
        b, pessimistic_estimate=False, value_discretization_interval=1e-4
    ).self_compose(k)
    return pld.get_delta_for_epsilon(eps)


def _skip(kind: str, param: float, k: int) -> bool:
    return kind == "gaussian" and math.sqrt(k) / param > 60


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a few small rows (seconds)")
    ap.add_argument("--all", action="store_true", help="also the rows where PLD is very slow")
    ap.add_argument("--kind", choices=["gaussian", "laplace"], default=None)
    ap.add_argument("--k", type=int, nargs="*", default=None)
    ap.add_argument("--param", type=float, nargs="*", default=None, help="only these sigma / b")
    args = ap.parse_args(argv)
    if args.quick:
        grid = [("gaussian", 5.0, 10), ("laplace", 1.0, 1), ("laplace", 2.0, 4)]
    else:
        ks = tuple(args.k) if args.k else KS
        grid = [("gaussian", s, k) for s in SIGMAS for k in ks]
        grid += [("laplace", b, k) for b in BS for k in ks]
    if args.kind:
        grid = [g for g in grid if g[0] == args.kind]
    if args.param:
        grid = [g for g in grid if g[1] in args.param]
    head = (
        f"{'kind':8} {'param':>5} {'k':>6} {'ours s':>8} {'PLD s':>8} {'ratio':>6} "
        f"{'eps ours':>14} {'eps PLD':>14} {'eps true':>14} {'eps*':>9} "
        f"{'delta ours':>17} {'delta PLD':>17} {'delta ref':>17} {'(o-P)/ref':>10} "
        f"{'(o-ref)/ref':>11} {'ref err':>8} {'ref':>8}  flags"
    )
    print(head)
    bad = 0
    for kind, param, k in grid:
        if _skip(kind, param, k) and not args.all:
            print(
                f"{kind:8} {param:5} {k:6}  skipped: PLD discretises a Gaussian of width "
                f"mu = {math.sqrt(k) / param:.0f} (minutes to hours); --all runs it"
            )
            continue
        r = row(kind, param, k)
        et = f"{r['eps_true']:14.9f}" if r["eps_true"] is not None else f"{'-':>14}"
        print(
            f"{kind:8} {param:5} {k:6} {r['ours_s']:8.2f} {r['pld_s']:8.2f} "
            f"{r['ours_s'] / r['pld_s']:6.2f} {r['eps_ours']:14.9f} {r['eps_pld']:14.9f} {et} "
            f"{r['eps_star']:9.3f} {r['delta_ours']:17.11e} {r['delta_pld']:17.11e} "
            f"{r['delta_ref']:17.11e} {r['rel_pld']:10.2e} {r['rel_ref']:11.2e} "
            f"{r['ref_err']:8.0e} {r['ref']:>8}  {r['flags']}",
            flush=True,
        )
        bad += "BELOW" in r["flags"].split(",")  # ours below the truth (PLD-BELOW-TRUE is PLD's)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
