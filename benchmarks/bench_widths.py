"""Benchmark: relative widths of delta(eps) enclosures of the subsampled Gaussian, a sweep.

Seeded settings drawn from the range users run: the sampling rate ``q`` log-uniform in
[1e-6, 1], ``eps`` log-uniform in [1e-4, 50], the noise ``sigma`` log-uniform in [0.5, 20],
the count ``k`` log-uniform in [1, 10^4] (one setting in three has ``k = 1``, where a
closed form exists).  Each drawn number is kept to three significant digits and passed
exactly (a fraction).  For each setting the table prints our certified enclosure of
delta(eps) (``dx.compose(dx.gaussian_noise(sigma).subsample(q), k).delta(eps)``; Poisson
subsampling, add/remove, sensitivity 1), its relative width ``(hi - lo) / lo`` (as the CLI
prints it: ``-`` when the lower end is 0), our CPU time (a fresh grid each time), and a
reference:

* ``k = 1``: the one-use closed form in mpmath at 40 digits, the larger of the two
  hockey-stick integrals (``P = (1-q) N(0, s^2) + q N(1, s^2)`` against ``Q = N(0, s^2)``
  and back; the likelihood ratio is monotone in x, so each integral is a difference of
  normal tails at the one crossing point), marked ``in`` when it lies inside the enclosure;
* ``k > 1``: dp_accounting's PLD (``from_gaussian_mechanism``, grid 1e-4) pessimistic and
  optimistic estimates, a bracket (not certified), marked ``meets`` when it meets ours
  (below about 1e-14 its numbers are its truncated tail's mass: no bracket there).

A last line gives the worst relative width (``inf`` when some lower end is 0), how many
lower ends are 0, the worst width among positive lower ends, and the number of settings
above the goal of 1e-3.

Run: python benchmarks/bench_widths.py [--quick] [--n 30] [--seed 2026]
"""

from __future__ import annotations

import argparse
import math
import random
import time
from fractions import Fraction

import _here  # noqa: F401  (this checkout, not an installed copy)

GOAL = Fraction(1, 1000)
#: below this dp_accounting's deltas are its tail-truncation mass, not the value's bracket
PLD_FLOOR = 1e-14


def _three_digits(x: float) -> Fraction:
    """``x`` kept to three significant digits, as an exact fraction."""
    return Fraction(f"{x:.3g}")


def _sci(x: Fraction) -> str:
    """``x`` in the form ``1.23e+45`` (also beyond the doubles' range)."""
    if x == 0:
        return f"{0.0:9.2e}"
    e = math.floor(math.log10(x.numerator) - math.log10(x.denominator))
    m = float(x / Fraction(10) ** e)
    if m >= 9.995:
        m, e = m / 10, e + 1
    return f"{m:.2f}e{e:+03d}".rjust(9)


def draw(rng: random.Random, i: int, quick: bool) -> tuple[Fraction, Fraction, Fraction, int]:
    """One setting ``(q, eps, sigma, k)``; ``quick`` keeps ``k`` at most 10."""
    q = _three_digits(10 ** rng.uniform(-6, 0))
    eps = _three_digits(10 ** rng.uniform(-4, math.log10(50)))
    sigma = _three_digits(10 ** rng.uniform(math.log10(0.5), math.log10(20)))
    top = 1 if quick else 4
    k = 1 if i % 3 == 0 else max(1, round(10 ** rng.uniform(0, top)))
    return q, eps, sigma, k


def one_use(q: Fraction, eps: Fraction, sigma: Fraction, digits: int = 40):
    """delta(eps) of one use of the Poisson-subsampled Gaussian (mpmath, ``digits`` digits).

    ``P = (1-q) N(0, s^2) + q N(1, s^2)``, ``Q = N(0, s^2)``: ``p/q`` grows with ``x``, so
    ``H_e(P||Q)`` integrates over ``x > a`` with ``(1-q) + q exp((2a-1)/(2 s^2)) = e^eps``,
    and ``H_e(Q||P)`` over ``x < b`` with the same left side equal to ``e^-eps`` (empty when
    ``e^-eps <= 1 - q``).
    """
    import mpmath as mp

    with mp.workdps(digits):
        qm = mp.mpf(q.numerator) / q.denominator
        e = mp.mpf(eps.numerator) / eps.denominator
        s = mp.mpf(sigma.numerator) / sigma.denominator

        def tail(x):  # P(N(0, 1) > x)
            return mp.erfc(x / mp.sqrt(2)) / 2

        a = s**2 * mp.log((mp.exp(e) - 1 + qm) / qm) + mp.mpf(1) / 2
        forward = (1 - qm) * tail(a / s) + qm * tail((a - 1) / s) - mp.exp(e) * tail(a / s)
        backward = mp.mpf(0)
        inner = mp.exp(-e) - 1 + qm
        if inner > 0:
            b = s**2 * mp.log(inner / qm) + mp.mpf(1) / 2
            backward = tail(-b / s) - mp.exp(e) * (
                (1 - qm) * tail(-b / s) + qm * tail((1 - b) / s)
            )
        return max(forward, backward, mp.mpf(0))


def pld_bracket(q: Fraction, eps: Fraction, sigma: Fraction, k: int) -> tuple[float, float]:
    """dp_accounting's (optimistic, pessimistic) delta(eps), grid 1e-4 (not certified)."""
    from dp_accounting.pld import privacy_loss_distribution as pldm

    out = []
    for pessimistic in (False, True):
        pld = pldm.from_gaussian_mechanism(
            float(sigma), 1, pessimistic_estimate=pessimistic,
            value_discretization_interval=1e-4, sampling_prob=float(q),
            use_connect_dots=pessimistic,
        ).self_compose(k)
        out.append(pld.get_delta_for_epsilon(float(eps)))
    return out[0], out[1]


def main(argv: list[str] | None = None) -> int:
    """Print the sweep (``--quick``: three settings with ``k`` at most 10)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three small settings")
    parser.add_argument("--n", type=int, default=30, help="number of settings (default 30)")
    parser.add_argument("--seed", type=int, default=2026, help="seed of the draws")
    args = parser.parse_args(argv)
    import flint

    import dpcompose_exact as dx
    from dpcompose_exact.engines import subsample_grid
    from dpcompose_exact.engines.bounds import reported_width

    try:
        import dp_accounting  # noqa: F401

        have_pld = True
    except ImportError:
        have_pld = False
        print("# dp_accounting is not installed: settings with k > 1 have no reference")
    n = 3 if args.quick else args.n
    rng = random.Random(args.seed)
    settings = [draw(rng, i, args.quick) for i in range(n)]
    print(
        f"# {n} settings, seed {args.seed}: Poisson-subsampled Gaussian, sensitivity 1, "
        "add/remove; certified delta(eps), relative width (hi - lo)/lo, CPU s, reference"
    )
    print(
        f"{'q':>9} {'eps':>9} {'sigma':>6} {'k':>5} | {'delta lo':>11} {'delta hi':>11} "
        f"{'rel width':>9} {'CPU s':>7} | reference"
    )
    worst, worst_at, over, total = Fraction(0), None, 0, 0.0
    zeros: list[tuple[Fraction, Fraction, Fraction, int]] = []  # lower end 0
    for q, eps, sigma, k in settings:
        subsample_grid._cell_masses.cache_clear()  # a fresh mechanism: the grid is rebuilt
        t0 = time.process_time()
        v = dx.compose(dx.gaussian_noise(str(sigma)).subsample(str(q)), k).delta(str(eps))
        took = time.process_time() - t0
        total += took
        v = v.probability()
        lo_a, hi_a = v.ends()
        w = reported_width(v)
        if w is None or not w.is_finite():
            rel, shown = None, "-"
        else:
            man, exp = (int(t) for t in w.upper().mid().man_exp())
            rel = Fraction(man) * Fraction(2) ** exp
            shown = _sci(rel)
        if rel is None or rel > GOAL:
            over += 1
        if rel is None:
            zeros.append((q, eps, sigma, k))
        elif rel > worst:
            worst, worst_at = rel, (q, eps, sigma, k)
        lo_text, hi_text = v.interval(5)  # decimal strings: no underflow below 1e-308
        lo, hi = Fraction(lo_text), Fraction(hi_text)  # exact: no 0 below 1e-308
        if k == 1:
            import mpmath as mp

            ref = one_use(q, eps, sigma)
            with mp.workdps(40):
                inside = flint.arb(mp.nstr(ref, 35)).overlaps(flint.arb(lo_a).union(hi_a))
            note = f"one-use closed form {mp.nstr(ref, 12)} {'in' if inside else 'OUTSIDE'}"
        elif have_pld:
            opt, pess = pld_bracket(q, eps, sigma, k)
            slack = 1 + Fraction(1, 10**9)
            # an optimistic end at the floor is its truncation, no lower bracket
            low_ok = opt <= PLD_FLOOR or Fraction(opt) <= hi * slack
            meets = low_ok and lo <= Fraction(pess) * slack
            note = f"PLD [{opt:.6g}, {pess:.6g}] " + (
                "(at its truncation floor: no bracket)"
                if pess <= PLD_FLOOR
                else "meets" if meets else "MISSES"
            )
        else:
            note = "no reference"
        print(
            f"{float(q):9.3g} {float(eps):9.3g} {float(sigma):6.3g} {k:>5} | {lo_text:>11} "
            f"{hi_text:>11} {shown:>9} {took:7.2f} | {note}"
        )

    def at(setting: tuple[Fraction, Fraction, Fraction, int] | None) -> str:
        if setting is None:
            return ""
        q, eps, sigma, k = setting
        return f" at q={float(q):.3g} eps={float(eps):.3g} sigma={float(sigma):.3g} k={k}"

    print(
        f"worst relative width: {'inf' if zeros else _sci(worst).strip()}"
        f"{at(zeros[0] if zeros else worst_at)}; {len(zeros)} of {n} lower ends are 0; "
        f"worst with a positive lower end: {_sci(worst).strip()}{at(worst_at)}; "
        f"{over} of {n} settings above {float(GOAL):g}; total CPU {total:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
