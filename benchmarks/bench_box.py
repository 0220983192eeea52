"""Benchmark: the practitioner's box, ours against dp_accounting's PLD, same process.

Draws ``N`` settings uniformly from the box with a printed seed (log scale where a range
spans decades) and, per setting, prints our CPU seconds for a certified enclosure of the
query (``dx.compose(...)``, the query, ``.interval(8)``), dp_accounting's CPU seconds for the
same query on its PLD (grid 1e-4, pessimistic, self-composed, same process), their ratio,
our enclosure and its relative width ``(hi - lo) / hi``, and PLD's pessimistic and
optimistic values (the optimistic PLD untimed).  Our enclosure is printed as the command
line prints one (:func:`enclosure_text`: the digits it certifies, rounded outward, never
through a double, so a delta below the doubles' range shows as ``1.4e-10514``, not 0),
and its width and the PLD checks are computed on the exact fractions.  The box:

* Poisson-subsampled Gaussian, sigma in [0.5, 20], q in [1e-5, 0.5] or q = 1 (one draw in
  ten), k in [1, 10^6];
* Poisson-subsampled Laplace, b in [0.5, 20], the same q and k;
* heterogeneous lists: one of the above next to one to four of randomized response
  (``p`` in [0.05, 0.95], 2 to 8 buckets), discrete Laplace (``a`` in 1/10, ..., 2) and the
  multi-constraint mechanism (0.3, 0) + (0.15, 0.02) of the paper, counts in [1, 10^4];
* one query per setting: eps(delta), delta in [1e-15, 1e-2], or delta(eps), eps in
  [0.05, 50] (even odds).

A setting whose CPU time passes ``--budget`` seconds is stopped (``SIGPROF``) and shown as
``>budget``.  The process's address space is capped (``--memory-cap`` GiB, default 8): a
side that needs more raises ``MemoryError`` instead of waking the OOM killer, and a PLD
that runs out (plain Laplace at k about 3e5 and more) is shown as ``OOM``, without a ratio,
and counted in the summary.  Peak memory is measured in a second, untimed pass of each side
(our grid caches cleared first), each in a child process forked for it (:func:`_rss_peak`):
the growth of its peak resident set size over its size at the start (Linux: the peak is
reset through ``/proc/self/clear_refs``; FLINT's balls, freed memory the allocator keeps
and numpy's buffers all count), ``--memory traced`` the bytes ``tracemalloc`` traces in
this process instead (Python's and numpy's allocations only; the only pass elsewhere).  The
``mem x`` column is ours over PLD's, each at least :data:`MEM_FLOOR` (a PLD of a few
thousand losses grows by next to nothing).  The summary line gives the worst and
median ratio, the worst relative width (eps and delta queries apart), the counts of
enclosures with lower end 0 and of refusals (a ``DPComposeError``, shown in the row, left
out of the ratios and widths), the worst ratio of peak memory against PLD's (with our
largest peak and PLD's there, MiB), and the
counts of the ``check`` column (:func:`check`): our enclosure against an independent
reference where a closed form exists (:func:`reference`, mpmath: Gaussian noise at rate 1,
one use of subsampled Gaussian noise).

A row whose PLD value lies on the wrong side of our certified enclosure (the optimistic
above its upper end, the pessimistic below its lower end) gets a note in brackets that
names whose error it is (:func:`pld_check`, untimed): ``PLD's error`` with the measured
defect of dp_accounting's PLD -- ``exp underflow`` (``get_epsilon_for_delta`` past a loss
of about 700), ``tail truncation`` (``self_compose``'s 1e-15 per part at infinite loss
and wrapped into its FFT window, for the optimistic estimate too), ``FFT round-off`` --
or, when none of those accounts for it, what an independent certified reference settled
for that setting (:data:`SETTLED`: ``PLD's error (settled by ...)``), else
``UNEXPLAINED`` (then our enclosure is in doubt).  The summary counts them.  The settings
and the references behind these causes: tests/test_pld_discrepancy.py and
docs/ecosystem.md ("What the suites found").

``--quick``: 4 settings from the box with k and counts at most 100 and delta at least
1e-9 (a smoke run for the test suite; its figures are not measurements).

``--kinds``: only the settings of these shapes (a comma list of ``gaussian``, ``laplace``
and ``mixed``: a heterogeneous list); every setting is still drawn, so the rows keep the
numbers of the full run.

``--min-k K``: only the large-k corner of the box: one subsampled noise kind alone
(Gaussian or Laplace, odds 4 to 3, q and the scale and the query drawn as above), its count
log-uniform in ``[K, 10^6]`` (the default, 1, draws the whole box as above, unchanged).

Run (from the repository root): PYTHONPATH=. python benchmarks/bench_box.py [--seed 0]
[-n 40] [--budget 300] [--no-memory] [--memory rss|traced] [--quick] [--kinds mixed,laplace]
[--min-k 100000]
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import random
import re
import signal
import statistics
import time
import tracemalloc
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import _here  # noqa: F401  (this checkout, not an installed copy)

#: the paper's multi-constraint mechanism (0.3, 0) + (0.15, 0.02) (docs/theory.md, section 1)
PAPER = [("3/10", "0"), ("3/20", "1/50")]


@dataclass
class Setting:
    """One draw from the box: a list of (kind, parameters, count) and one query."""

    items: list[tuple[str, dict[str, Any], int]] = field(default_factory=list)
    query: str = "eps"  # "eps": eps(delta); "delta": delta(eps)
    at: str = "1e-5"

    def label(self) -> str:
        """A short text of the setting (exact parameters as drawn)."""
        parts = []
        for kind, p, k in self.items:
            if kind in ("gaussian", "laplace"):
                rate = "" if p["q"] == "1" else f"@{p['q']}"
                parts.append(f"{kind[:3]}({p['scale']}){rate}x{k}")
            elif kind == "rr":
                parts.append(f"rr({p['p']},{p['buckets']})x{k}")
            elif kind == "dlap":
                parts.append(f"dlap({p['a']})x{k}")
            else:
                parts.append(f"paper x{k}")
        return " + ".join(parts) + f" {self.query}({self.at})"

    def shape(self) -> str:
        """``"mixed"`` for a heterogeneous list, else the noise's kind."""
        return "mixed" if len(self.items) > 1 else self.items[0][0]


def _log_uniform(rng: random.Random, lo: float, hi: float) -> float:
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def _dec(x: float, digits: int = 3) -> str:
    """A short decimal string of a float (the exact parameter both libraries are given)."""
    return f"{x:.{digits}g}"


def draw(rng: random.Random, quick: bool, min_k: int = 1) -> Setting:
    """One setting, uniform over the box (log scale where a range spans decades).

    ``min_k > 1``: one subsampled noise kind alone (Gaussian or Laplace), its count drawn
    log-uniformly from ``[min_k, 10^6]`` (the large-k corner of the box; the default draw,
    ``min_k = 1``, is unchanged).
    """
    if min_k > 1:
        return _draw_large(rng, min_k)
    kmax, cmax = (100, 100) if quick else (10**6, 10**4)
    s = Setting()
    shape = rng.choices(["gaussian", "laplace", "mixed"], weights=[4, 3, 3])[0]
    noise = shape if shape != "mixed" else rng.choice(["gaussian", "laplace"])
    q = "1" if rng.random() < 0.1 else _dec(_log_uniform(rng, 1e-5, 0.5))
    scale = _dec(_log_uniform(rng, 0.5, 20.0))
    k = max(1, round(_log_uniform(rng, 1, cmax if shape == "mixed" else kmax)))
    s.items.append((noise, {"q": q, "scale": scale}, k))
    if shape == "mixed":
        for kind in rng.sample(["rr", "dlap", "paper"], rng.randint(1, 3)):
            count = max(1, round(_log_uniform(rng, 1, cmax)))
            if kind == "rr":
                params = {"p": _dec(rng.uniform(0.05, 0.95), 2), "buckets": rng.randint(2, 8)}
            elif kind == "dlap":
                params = {"a": f"{rng.randint(1, 20)}/10"}
            else:
                params = {}
            s.items.append((kind, params, count))
    if rng.random() < 0.5:
        s.query, s.at = "eps", _dec(_log_uniform(rng, 1e-9 if quick else 1e-15, 1e-2), 2)
    else:
        s.query, s.at = "delta", _dec(_log_uniform(rng, 0.05, 50.0), 3)
    return s


def _draw_large(rng: random.Random, min_k: int) -> Setting:
    """One setting of one noise kind with ``k`` in ``[min_k, 10^6]`` (log scale)."""
    noise = rng.choices(["gaussian", "laplace"], weights=[4, 3])[0]
    q = "1" if rng.random() < 0.1 else _dec(_log_uniform(rng, 1e-5, 0.5))
    scale = _dec(_log_uniform(rng, 0.5, 20.0))
    k = round(_log_uniform(rng, min_k, 10**6))
    s = Setting([(noise, {"q": q, "scale": scale}, k)])
    if rng.random() < 0.5:
        s.query, s.at = "eps", _dec(_log_uniform(rng, 1e-15, 1e-2), 2)
    else:
        s.query, s.at = "delta", _dec(_log_uniform(rng, 0.05, 50.0), 3)
    return s


def ours(s: Setting) -> tuple[Fraction, Fraction]:
    """Our certified enclosure of the setting's query (a fresh composition)."""
    import dpcompose_exact as dx

    items = []
    for kind, p, k in s.items:
        if kind in ("gaussian", "laplace"):
            make = dx.gaussian_noise if kind == "gaussian" else dx.laplace_noise
            mech = make(p["scale"])
            items.append((mech if p["q"] == "1" else mech.subsample(p["q"]), k))
        elif kind == "rr":
            items.append((dx.randomized_response(p["p"], p["buckets"]), k))
        elif kind == "dlap":
            items.append((dx.discrete_laplace(p["a"]), k))
        else:
            items.append((dx.Mechanism(PAPER), k))
    comp = dx.compose(items)
    value = comp.epsilon(s.at) if s.query == "eps" else comp.delta(s.at)
    lo, hi = value.interval(8)
    return Fraction(lo), Fraction(hi)


def _paper_pld(k: int, pessimistic: bool) -> Any:
    from dp_accounting.pld import privacy_loss_distribution as pldm

    z1, z2, d2 = math.exp(0.3), math.exp(0.15), 0.02
    oma = d2 * (1 + z1) / (z1 - z2)
    p0 = {0: oma * z1 / (z1 + 1), 1: (1 - oma) * z2 / (z2 + 1), 2: (1 - oma) / (z2 + 1),
          3: oma / (z1 + 1)}
    p1 = {x: p0[3 - x] for x in p0}
    return pldm.from_two_probability_mass_functions(
        {x: math.log(v) for x, v in p1.items() if v},
        {x: math.log(v) for x, v in p0.items() if v},
        pessimistic_estimate=pessimistic,
        value_discretization_interval=1e-4,
    ).self_compose(k)


def pld_of(s: Setting, pessimistic: bool = True) -> Any:
    """dp_accounting's ``PrivacyLossDistribution`` of the setting (grid 1e-4, self-composed)."""
    from dp_accounting.pld import privacy_loss_distribution as pldm

    opts = {"pessimistic_estimate": pessimistic, "value_discretization_interval": 1e-4}
    total = None
    for kind, p, k in s.items:
        if kind == "gaussian":
            one = pldm.from_gaussian_mechanism(
                float(p["scale"]), 1, sampling_prob=float(p["q"]), use_connect_dots=pessimistic,
                **opts,
            )
        elif kind == "laplace":
            one = pldm.from_laplace_mechanism(
                float(p["scale"]), 1, sampling_prob=float(p["q"]), use_connect_dots=pessimistic,
                **opts,
            )
        elif kind == "rr":
            one = pldm.from_randomized_response(float(p["p"]), p["buckets"], **opts)
        elif kind == "dlap":
            one = pldm.from_discrete_laplace_mechanism(float(Fraction(p["a"])), 1, **opts)
        else:
            one = None
        part = _paper_pld(k, pessimistic) if one is None else one.self_compose(k)
        total = part if total is None else total.compose(part)
    return total


def theirs(s: Setting, pessimistic: bool = True) -> float:
    """dp_accounting's PLD value of the setting's query (grid 1e-4)."""
    total = pld_of(s, pessimistic)
    if s.query == "eps":
        return total.get_epsilon_for_delta(float(s.at))
    return total.get_delta_for_epsilon(float(s.at))


def _gauss_delta(q: Any, sigma: Any, k: int, eps: Any) -> Any:
    """``delta(eps)`` of the setting in mpmath, where a closed form exists (else None).

    Gaussian noise at rate 1: the Gaussian closed form with ``mu = sqrt(k) / sigma``.  One use
    at a rate ``q < 1``: both directions of ``A = q N(1, s^2) + (1 - q) N(0, s^2)`` and
    ``B = N(0, s^2)`` at the crossing point of the likelihood ratio, the larger.
    """
    import mpmath

    sf = lambda x: mpmath.erfc(x / mpmath.sqrt(2)) / 2  # noqa: E731
    if q == 1:
        mu = mpmath.sqrt(k) / sigma
        return sf(eps / mu - mu / 2) - mpmath.e**eps * sf(eps / mu + mu / 2)
    if k != 1:
        return None
    et, best = mpmath.e**eps, mpmath.mpf(0)
    # forward: the set {L > eps} = {x > x*}, 1 - q + q e^{beta(x*)} = e^eps
    x = (mpmath.log((et - 1 + q) / q) * sigma**2 + mpmath.mpf(1) / 2) if et > 1 - q else None
    if x is None:
        best = 1 - et
    else:
        best = q * sf((x - 1) / sigma) + (1 - q) * sf(x / sigma) - et * sf(x / sigma)
    # reverse: the set {A/B < e^-eps} = {x < x*}, under B minus e^eps times under A
    ie = 1 / et
    if ie > 1 - q:
        x = mpmath.log((ie - 1 + q) / q) * sigma**2 + mpmath.mpf(1) / 2
        rev = sf(-x / sigma) - et * (q * sf((1 - x) / sigma) + (1 - q) * sf(-x / sigma))
        best = max(best, rev)
    return best


def reference(s: Setting) -> tuple[Any, Any] | None:
    """An independent enclosure (mpmath, 30 digits) of the setting's value, or None.

    Only where a closed form exists (:func:`_gauss_delta`: Gaussian noise at rate 1, or one
    use of subsampled Gaussian noise); ``eps(delta)`` by bisection on it (delta decreases in
    eps).
    """
    import mpmath

    if len(s.items) != 1 or s.items[0][0] != "gaussian":
        return None
    _, p, k = s.items[0]
    with mpmath.workdps(30):
        q, sigma, at = (_mp(x) for x in (p["q"], p["scale"], s.at))
        if _gauss_delta(q, sigma, k, mpmath.mpf(1)) is None:
            return None
        if s.query == "delta":
            v = _gauss_delta(q, sigma, k, at)
            return v * (1 - mpmath.mpf(10) ** -20), v * (1 + mpmath.mpf(10) ** -20)
        a, b = mpmath.mpf(0), mpmath.mpf(1)
        if _gauss_delta(q, sigma, k, a) <= at:
            return mpmath.mpf(0), mpmath.mpf(0)
        while _gauss_delta(q, sigma, k, b) > at:
            a, b = b, 2 * b
        for _ in range(80):
            m = (a + b) / 2
            a, b = (m, b) if _gauss_delta(q, sigma, k, m) > at else (a, m)
        return a, b


def _mp(text: str) -> Any:
    """An exact decimal string as an mpmath number (at the working precision)."""
    import mpmath

    x = Fraction(text)
    return mpmath.mpf(x.numerator) / x.denominator


def check(enc: tuple[Fraction, Fraction], ref: Any) -> str:
    """Our enclosure judged against the independent reference, where one exists.

    ``ref in``: the reference lies in ours; ``REF OUT (value)``: it does not (our failure);
    ``-``: no closed form for this setting.  (PLD's values are judged apart: a value on the
    wrong side of ours gets the note of :func:`pld_check`, which names whose error it is.)
    """
    if ref is None:
        return "-"
    inside = Fraction(str(ref[1])) >= enc[0] and Fraction(str(ref[0])) <= enc[1]
    return "ref in" if inside else f"REF OUT ({float(ref[0]):.10g})"


# -- whose error: a PLD value on the wrong side of our certified enclosure -----------------

#: A PLD value beyond our enclosure by at most this (relative) is float rounding, not judged.
PLD_SLACK = 1e-9

#: ... nor by at most the least positive double (a delta below the doubles' range is 0 there).
PLD_TINY = Fraction(5e-324)


def _dense_pmfs(pld: Any) -> list[Any]:
    """The PLD's remove and add PMFs as dense PMFs (one when it is symmetric).

    dp_accounting has no public accessor for the PMFs and their arrays: this reads the
    private ``_pmf_remove``/``_pmf_add`` and, below, a dense PMF's ``_probs``,
    ``_lower_loss``, ``_discretization`` and ``_infinity_mass`` (dp_accounting 0.4 to 0.6).
    """
    pmfs = [pld._pmf_remove] if pld._symmetric else [pld._pmf_remove, pld._pmf_add]
    return [m.to_dense_pmf() for m in pmfs]


def _tail(pmf: Any, eps: float) -> tuple[float, float, float]:
    """``(delta(eps), its infinite-loss part, FFT round-off scale)`` of one dense PMF.

    ``delta(eps) = inf_mass + sum_{l > eps} p_l (1 - e^(eps - l))`` as dp_accounting computes
    it (``expm1``: no underflow at any loss).  The round-off scale is the negative mass at
    losses above ``eps`` doubled: the exact PMF has no negative entry, so every negative one
    is the FFT's error, and as much again hides in the positive entries.
    """
    import numpy as np

    losses = (np.arange(len(pmf._probs)) + pmf._lower_loss) * pmf._discretization
    above = pmf._probs[losses > eps]
    noise = 2.0 * float(-above[above < 0].sum())
    return float(pmf.get_delta_for_epsilon(eps)), float(pmf._infinity_mass), noise


#: settings whose PLD discrepancy no defect measured here accounts for, but an independent
#: certified reference has settled (by :meth:`Setting.label`): what it showed
SETTLED = {
    "gau(1.7)@0.0542x78610 eps(8e-14)": (
        "settled by proofs_checks/subsampled_reference.py, exact integer composition on "
        "the grid 2^-18: eps(8e-14) in [118.3858967, 118.6881161], PLD's 119.83 above "
        "the truth by at least 1.14; its delta at our upper end, 5.7e-13, is above the "
        "certified upper bound there, 1.003e-13 (grid 2^-17), past its measured round-off"
    ),
    "gau(1.09)@0.0375x68624 eps(1.9e-15)": (
        "settled by proofs_checks/subsampled_reference.py, exact integer composition on "
        "the grid 2^-17: eps(1.9e-15) in [149.2344723, 149.7601280], PLD's 153.20 above "
        "the truth by at least 3.43; its delta at our upper end, 6.0e-14, is above the "
        "certified upper bound there, 2.271e-15, past its measured round-off"
    ),
}


def pld_cause(
    s: Setting, value: float, pessimistic: bool, lo: Fraction | float, hi: Fraction | float
) -> str:
    """Why dp_accounting's ``value`` is on the wrong side of our enclosure ``[lo, hi]``.

    Its optimistic value above ``hi`` or its pessimistic value below ``lo`` cannot both be
    right if the truth lies in ``[lo, hi]``; each cause below is a measured defect of
    dp_accounting's PLD (0.6.0, ``dp_accounting/pld/pld_pmf.py``), checked on the PLD's
    own delta curve at our end of the enclosure:

    * ``exp underflow``: ``get_epsilon_for_delta`` accumulates ``exp(-loss) * mass``, which
      is 0 in doubles past a loss of about 700; it then returns the first loss (from the
      top) whose tail mass reaches delta, a quantile above eps(delta), while the PLD's own
      delta curve (``-expm1(eps - loss)``, exact in doubles) is already at most delta at
      ``hi``;
    * ``tail truncation``: ``DensePLDPmf.self_compose`` keeps only the window that a
      Chernoff bound says holds all but ``tail_mass_truncation`` (1e-15) of the mass, adds
      that 1e-15 to the infinite loss for the optimistic estimate too, and its circular FFT
      (``common.self_convolve``, a transform as long as the window) wraps the mass outside
      the window back into it, up to as much again, at the top losses among others;
      without twice the infinite mass the PLD's delta at ``hi`` is at most delta;
    * ``FFT round-off``: the composed PMF's round-off (:func:`_tail`'s scale) covers the
      gap between the PLD's delta and the query's at our end.

    Args:
        s: the setting.
        value: dp_accounting's value of the query.
        pessimistic: which estimate ``value`` is.
        lo, hi: our certified enclosure (exact fractions: a delta below the doubles' range
            is not 0 here; floats are taken as they are).

    When none of these accounts for it but an independent certified reference settled the
    setting (:data:`SETTLED`), the note says what that reference showed.

    Returns:
        ``"PLD's error (cause, figures)"``, or ``"UNEXPLAINED (...)"`` when neither a
        measured defect nor a settled reference accounts for it (then our enclosure is in
        doubt).
    """
    pmfs = _dense_pmfs(pld_of(s, pessimistic))
    side = "pess < lo" if pessimistic else "opt > hi"
    if s.query == "eps":
        delta, at = float(s.at), float(lo if pessimistic else hi)
        tails = [_tail(m, at) for m in pmfs]
        d_at = max(t[0] for t in tails)
        finite = max(t[0] - 2 * t[1] for t in tails)
        noise = max(t[2] for t in tails)
        fig = f"its delta at {at:.10g}: {d_at:.6g} vs {delta:.6g}"
        if not pessimistic and d_at <= delta:
            return f"PLD's error ({side}: exp underflow in get_epsilon_for_delta; {fig})"
        if pessimistic and d_at >= delta:
            return f"PLD's error ({side}: get_epsilon_for_delta off its delta curve; {fig})"
        if not pessimistic and finite <= delta:
            inf = max(t[1] for t in tails)
            return f"PLD's error ({side}: tail truncation, {inf:.2g} at infinity; {fig})"
        if abs(d_at - delta) <= noise:
            return f"PLD's error ({side}: FFT round-off {noise:.2g}; {fig})"
        if s.label() in SETTLED:
            return f"PLD's error ({side}: {SETTLED[s.label()]}; {fig})"
        return f"UNEXPLAINED ({side}; {fig}, round-off {noise:.2g})"
    eps = float(s.at)
    tails = [_tail(m, eps) for m in pmfs]
    noise = max(t[2] for t in tails)
    fig = f"delta {value:.4g}, ours [{_text(lo, 4)}, {_text(hi, 4)}]"
    if not pessimistic and max(t[0] - 2 * t[1] for t in tails) <= hi:
        inf = max(t[1] for t in tails)
        return f"PLD's error ({side}: tail truncation, {inf:.2g} at infinity; {fig})"
    gap = (Fraction(lo) - Fraction(value)) if pessimistic else (Fraction(value) - Fraction(hi))
    if gap <= Fraction(noise):
        return f"PLD's error ({side}: FFT round-off {noise:.2g}; {fig})"
    if s.label() in SETTLED:
        return f"PLD's error ({side}: {SETTLED[s.label()]}; {fig})"
    return f"UNEXPLAINED ({side}; {fig}, round-off {noise:.2g})"


def pld_check(
    s: Setting, pess: Any, opt: Any, lo: Fraction | float, hi: Fraction | float
) -> str | None:
    """The note of a row whose PLD value is off our enclosure (None: both on their side).

    The comparison is exact (a float is a fraction), so an enclosure below the doubles'
    range is not taken for ``[0, 0]``; a PLD value within the least positive double of it
    (0 for such a delta) is float rounding (:data:`PLD_TINY`).
    """
    notes = []
    lo_q, hi_q, slack = Fraction(lo), Fraction(hi), Fraction(PLD_SLACK)
    # a float against a fraction compares exactly (and an infinite eps as infinite)
    if isinstance(opt, float) and opt > hi_q * (1 + slack) + PLD_TINY:
        notes.append(pld_cause(s, opt, False, lo, hi))
    if isinstance(pess, float) and pess < lo_q * (1 - slack) - PLD_TINY:
        notes.append(pld_cause(s, pess, True, lo, hi))
    return "; ".join(notes) or None


class _OverBudget(Exception):
    pass


def _on_prof(signum: int, frame: Any) -> None:
    raise _OverBudget


def _timed(f: Any, budget: float) -> tuple[float, Any]:
    """CPU seconds of ``f()`` and its value (None past the budget, the message if refused)."""
    from dpcompose_exact.errors import DPComposeError

    gc.collect()
    signal.setitimer(signal.ITIMER_PROF, budget)
    t0 = time.process_time()
    try:
        value = f()
    except _OverBudget:
        value = None
    except DPComposeError as exc:
        value = f"refused ({type(exc).__name__}: {str(exc)[:60]})"
    except MemoryError:
        value = "out of memory"
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    return time.process_time() - t0, value


def _peak(f: Any, budget: float) -> int | None:
    """Peak traced bytes of ``f()`` (numpy's buffers included), None past the budget."""
    gc.collect()
    tracemalloc.start()
    signal.setitimer(signal.ITIMER_PROF, budget)
    from dpcompose_exact.errors import DPComposeError

    try:
        f()
        return tracemalloc.get_traced_memory()[1]
    except (_OverBudget, DPComposeError, MemoryError):
        return None
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        tracemalloc.stop()


#: a side's peak memory counts at least this much in the ``mem x`` ratio (bytes)
MEM_FLOOR = 4 << 20


def _status(key: str) -> int:
    """A size of this process from ``/proc/self/status`` (``VmRSS``, ``VmHWM``), in bytes."""
    with open("/proc/self/status") as fh:
        return int(re.search(key + r":\s+(\d+)", fh.read()).group(1)) * 1024


def _rss_peak(f: Any, budget: float) -> int | None:
    """Growth of the peak resident set size of ``f()`` in a forked child (None: failed).

    The child (a copy of this process, its imports and warm caches shared) resets its peak
    to its current size (``/proc/self/clear_refs``, Linux 4.0 on), runs ``f()`` within the
    CPU ``budget`` and reports ``VmHWM - VmRSS`` at the start through a pipe; None past the
    budget, refused, out of memory, or where the kernel cannot reset the peak.
    """
    gc.collect()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: measure, report, exit without cleanup
        os.close(r)
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
            base = _status("VmRSS")
            signal.setitimer(signal.ITIMER_PROF, budget)
            f()
            signal.setitimer(signal.ITIMER_PROF, 0)
            os.write(w, str(max(_status("VmHWM") - base, 0)).encode())
        except BaseException:  # noqa: BLE001 (any failure: no figure)
            pass
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 64):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return int(data) if data else None


def _text(x: Fraction | float, digits: int) -> str:
    """``x`` to ``digits`` significant digits, also below the doubles' range (no float)."""
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    from dpcompose_exact.numbers.format import fraction_decimal

    return fraction_decimal(x, digits)


def enclosure_text(lo: Fraction, hi: Fraction, digits: int = 7) -> tuple[str, str]:
    """Our enclosure as the command line prints it: the digits it certifies, outward.

    The ends are exact decimals (``ours`` reads them from ``Value.interval``) and are printed
    by the package's own formatter (``numbers.format.short_enclosure``, the one behind the
    CLI's tables): to the first digit where they differ, plus one, at most ``digits``, the
    lower end rounded down and the upper up, and never through a double, so a delta of
    ``1.00393e-2806`` shows as itself, not as 0.
    """
    from dpcompose_exact.numbers.format import fraction_decimal, short_enclosure

    ends = [fraction_decimal(x, 40) for x in (lo, hi)]  # exact: 8 digits (``ours``)
    if Fraction(ends[0]) != lo or Fraction(ends[1]) != hi:
        raise ValueError(f"not a short decimal: [{lo}, {hi}]")
    return short_enclosure(ends[0], ends[1], digits)


def _num(x: float | str | None) -> str:
    if isinstance(x, str):  # PLD out of memory (the cap) or refused
        return f"{'OOM' if 'memory' in x else 'refused':>12}"
    return f"{x:12.7g}" if x is not None else f"{'-':>12}"


def _cap_memory(gib: float) -> None:
    """Cap this process's address space (a PLD past it raises MemoryError, not the OOM killer)."""
    import resource

    if gib > 0:
        cap = int(gib * 2**30)
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (cap if hard < 0 else min(cap, hard), hard))


def _clear_caches() -> None:
    from dpcompose_exact.engines import subsample_grid

    subsample_grid._cell_masses.cache_clear()  # a fresh mechanism: the grid is rebuilt
    from dpcompose_exact.engines import gridcells

    gridcells.mixed_masses.cache_clear()  # (and the split's fine lattice)


def main(argv: list[str] | None = None) -> int:
    """Print the table and the summary line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0, help="the draws' seed (printed)")
    ap.add_argument("-n", type=int, default=40, help="settings drawn (default 40)")
    ap.add_argument("--budget", type=float, default=300.0, help="CPU seconds per setting")
    ap.add_argument("--no-memory", action="store_true", help="skip the memory pass")
    ap.add_argument(
        "--memory", choices=("rss", "traced"), default="rss",
        help="the memory pass: peak RSS growth in a forked child per side (default; Linux), "
        "or tracemalloc's bytes in this process",
    )
    ap.add_argument("--quick", action="store_true", help="4 small settings (smoke run)")
    ap.add_argument(
        "--memory-cap", type=float, default=8.0,
        help="address-space cap in GiB (default 8; 0: none): a side past it is 'out of memory'",
    )
    ap.add_argument(
        "--kinds", default="gaussian,laplace,mixed",
        help="only these shapes, a comma list of gaussian, laplace, mixed (rows keep their "
        "numbers)",
    )
    ap.add_argument(
        "--min-k", type=int, default=1,
        help="draw only one subsampled noise kind with k in [MIN_K, 10^6] (default 1: the "
        "whole box)",
    )
    args = ap.parse_args(argv)
    n = 4 if args.quick else args.n
    _cap_memory(args.memory_cap)
    try:
        import dp_accounting  # noqa: F401
    except ImportError:
        print("# dp_accounting is not installed: nothing to compare against")
        return 0
    rng = random.Random(args.seed)
    settings = [draw(rng, args.quick, args.min_k) for _ in range(n)]
    kinds = {x.strip() for x in args.kinds.split(",")}
    unknown = kinds - {"gaussian", "laplace", "mixed"}
    if unknown:
        ap.error(f"--kinds: unknown shape(s) {sorted(unknown)}; valid: gaussian, laplace, mixed")
    chosen = [i for i, s in enumerate(settings) if s.shape() in kinds]
    print(
        f"# the practitioner's box, seed {args.seed}, {n} settings"
        + (f" ({len(chosen)} of shape {args.kinds})" if len(chosen) < n else "")
        + (f", k >= {args.min_k}" if args.min_k > 1 else "")
        + "; CPU seconds; PLD grid 1e-4"
    )
    # warm-up: imports and first calls of both libraries, untimed
    warm = Setting([("gaussian", {"q": "0.1", "scale": "2"}, 2)], "eps", "1e-5")
    ours(warm), theirs(warm)
    print(f"{'#':>3} {'ours s':>8} {'PLD s':>7} {'ratio':>7} | {'lo':>13} {'hi':>13} "
          f"{'rel width':>9} | {'PLD pess':>12} {'PLD opt':>12} | {'mem x':>6} | check | "
          "setting")
    checks = {"ref in": 0, "REF OUT": 0}
    ratios, widths, mems, zeros, refused = [], {"eps": [], "delta": []}, [], 0, 0
    rss = args.memory == "rss" and os.path.exists("/proc/self/clear_refs") and hasattr(os, "fork")
    peak = _rss_peak if rss else _peak
    peaks: list[tuple[int, int]] = []  # (ours, PLD) bytes, where both were measured
    pld_oom = 0
    off: list[str] = []  # the notes of rows with a PLD value off our enclosure
    for i in chosen:
        s, note, verdict = settings[i], None, "-"
        _clear_caches()
        t_ours, enc = _timed(lambda s=s: ours(s), args.budget)
        t_pld, pess = _timed(lambda s=s: theirs(s), args.budget)
        _, opt = _timed(lambda s=s: theirs(s, pessimistic=False), args.budget)
        mem = "-"
        if not args.no_memory:
            _clear_caches()
            m_ours = peak(lambda s=s: ours(s), args.budget)
            m_pld = peak(lambda s=s: theirs(s), args.budget)
            if m_ours is not None and m_pld is not None:
                mems.append(max(m_ours, MEM_FLOOR) / max(m_pld, MEM_FLOOR))
                peaks.append((m_ours, m_pld))
                mem = f"{mems[-1]:6.2f}"
        ratio = t_ours / max(t_pld, 1e-3)
        pld_failed = isinstance(pess, str)  # PLD out of memory: no ratio, no PLD check
        if not isinstance(enc, str) and not pld_failed:  # a refusal has no ratio
            ratios.append(ratio)
        if pld_failed:
            pld_oom += 1
        opt = opt if not isinstance(opt, str) else None
        if enc is None or isinstance(enc, str):
            cols = f"{'>' + _dec(args.budget) + ' s':>13} {'':>13} {'-':>9}"
            if isinstance(enc, str):
                cols, refused = f"{enc:<37}", refused + 1
            else:
                widths[s.query].append(math.inf)
        else:
            lo, hi = enc
            rel = (hi - lo) / hi if hi > 0 else Fraction(0)
            zeros += lo == 0 and hi > 0
            widths[s.query].append(float(rel))
            lo_t, hi_t = enclosure_text(lo, hi)
            cols = f"{lo_t:>13} {hi_t:>13} {float(rel):9.2e}"
            verdict = check(enc, reference(s))
            checks["ref in"] += verdict == "ref in"
            checks["REF OUT"] += verdict.startswith("REF OUT")
            note = None if pld_failed else pld_check(s, pess, opt, lo, hi)
            if note:
                off.append(note)
        shown = f"{'-':>6} " if pld_failed else f"{ratio:6.2f}x"
        print(f"{i:3d} {t_ours:8.2f} {t_pld:7.2f} {shown} | {cols} | {_num(pess)} "
              f"{_num(opt)} | {mem:>6} | {verdict} | {s.label()}" + (f"  [{note}]" if note else ""),
              flush=True)
    worst = {q: (f"{max(w):.2e}" if w else "-") for q, w in widths.items()}
    blamed = sum("UNEXPLAINED" not in n for n in off)
    ratios = ratios or [math.nan]
    most = ""
    if peaks:
        big = max(peaks)
        most = (f" (ours at most {big[0] / 2**20:.0f} MiB, PLD {big[1] / 2**20:.0f} MiB "
                f"there; {'RSS' if rss else 'traced'})")
    print(
        f"summary seed {args.seed}: ratio worst {max(ratios):.2f}x median "
        f"{statistics.median(ratios):.2f}x (answered settings); worst rel. width eps "
        f"{worst['eps']} delta {worst['delta']}; lower end 0: {zeros}; refused: {refused}; "
        f"PLD out of memory: {pld_oom}; "
        f"worst peak memory vs PLD {(f'{max(mems):.2f}x' if mems else '-')}{most}; "
        f"PLD off our enclosure: {len(off)} (PLD's error {blamed}, unexplained "
        f"{len(off) - blamed}); references: {checks['ref in']} inside, {checks['REF OUT']} "
        "outside"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
