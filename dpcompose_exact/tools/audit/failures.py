"""Why a library crashed: the audit's crashed rows, classified with reproductions.

A ``crashed`` row of the suite (:mod:`~dpcompose_exact.tools.audit.suite`) says which
exception the library raised.  :data:`FAILURES` lists the failures the audit has traced to
the library itself (the adapters were fixed where the fault was theirs): for each one the
exception, what the library says it supports (quoted from its docstrings, its error
messages or its package metadata) and a minimal reproduction that imports only the
library and exits 1 while the failure is there.  :func:`classify` matches a row's note; the
suite appends ``[library failure KEY]`` to the note, and ``--repro`` writes the
reproduction of each failure met (``crash_KEY.py``).  A crashed row that matches none is
``unclassified`` (its note says so), which a test of the standard suite forbids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["LibraryFailure", "FAILURES", "TIME_LIMIT", "classify", "failure"]


@dataclass(frozen=True)
class LibraryFailure:
    """A failure of an audited library, traced and reproduced.

    Attributes:
        key: a short name (``prv-small-delta``).
        library: the module the adapter imports (a row's ``library``).
        pattern: a regular expression searched in a crashed row's note.
        exception: the exception, as the library raises it.
        supports: the library's own words on what it supports, quoted, with where.
        verdict: whose failure it is and why, in one or two sentences.
        repro: a script importing only the library that exits 1 while it fails.
    """

    key: str
    library: str
    pattern: str
    exception: str
    supports: str
    verdict: str
    repro: str

    def matches(self, library: str, note: str) -> bool:
        """The row of ``library`` with ``note`` shows this failure (any library: ``""``)."""
        ours = library == self.library or not self.library
        return ours and re.search(self.pattern, note) is not None


_EXIT = """
except {exc} as error:
    print("fails:", type(error).__name__, error)
    sys.exit(1)
print("no longer fails:", reported)
"""

_FOURIER = "import sys\nimport fourier_accountant as fa\n\n"


def _traced(
    *,
    key: str,
    library: str,
    pattern: str,
    exception: str,
    supports: str,
    verdict: str,
    prelude: str,
    attempt: str,
) -> LibraryFailure:
    """A failure whose reproduction is ``prelude``, then ``attempt`` in a ``try`` block.

    ``attempt`` (unindented) sets ``reported`` by the failing call; the script exits 1 on
    the exception named first in ``exception`` (``ValueError: ...``), else prints that
    the failure is gone.
    """
    body = "".join(f"    {line}\n" if line else "\n" for line in attempt.splitlines())
    name = re.match(r"\w+", exception)
    assert name is not None, exception
    repro = f"{prelude}try:\n{body}" + _EXIT.format(exc=name.group(0))
    return LibraryFailure(key, library, pattern, exception, supports, verdict, repro)


FAILURES: tuple[LibraryFailure, ...] = (
    _traced(
        key="prv-small-delta",
        library="prv_accountant",
        pattern=r"Floating point errors will dominate",
        exception=(
            "ValueError: Floating point errors will dominate for such small values of "
            "delta. Increase delta or reduce domain size."
        ),
        supports=(
            "PRVAccountant.compute_epsilon refuses a delta below "
            "np.finfo(np.longdouble).eps * len(domain) + delta_error, in its own words: "
            '"Floating point errors will dominate for such small values of delta. Increase '
            'delta or reduce domain size." (prv_accountant/discrete_privacy_random_variable.py)'
        ),
        verdict=(
            "The library's documented limit: eps(delta) at delta = 1e-10 is refused, not "
            "wrong.  Not an adapter fault (no option lowers the bound without a coarser grid)."
        ),
        prelude="""import sys
import prv_accountant as prv

acc = prv.PRVAccountant(prvs=[prv.PoissonSubsampledGaussianMechanism(1.0, 1.0)],
                        max_self_compositions=[100], eps_error=0.01, delta_error=1e-9)
""",
        attempt="""reported = acc.compute_epsilon(1e-10, [100])
""",
    ),
    _traced(
        key="prv-truncated-mean",
        library="prv_accountant",
        pattern=r"Discrete mean differs from continuous mean significantly",
        exception="RuntimeError: Discrete mean differs from continuous mean significantly.",
        supports=(
            'PRVAccountant.__init__: ":param prvs: Sequence of `PrivacyRandomVariable` to be '
            'composed."; PrivacyRandomVariable asks of a subclass its cdf ("Compute the '
            "cumulative distribution function of this privacy random variable at point t "
            'conditioned on the value being finite", its one abstract method) and its rdp '
            '("Compute RDP of this mechanism of order alpha"), the domain being sized from '
            "the rdp (compute_safe_domain_size, remark 5.6 of the paper); the library's own "
            "PureDPMechanism is such a step cdf (prv_accountant/privacy_random_variables/)"
        ),
        verdict=(
            "The library's failure: PrivacyRandomVariableTruncated.mean() integrates the "
            "cdf with scipy.integrate.quad between fixed breakpoints (t_min, -0.1, ..., 0.1, "
            "t_max) that miss the atoms of a step cdf.  For eps = log 3 randomized response "
            "x1000 (eps_error 0.01, delta_error 1e-9) the pair's exact Renyi divergence "
            "sizes the domain to [-744, 744], quad misses the jump at -log 3 and returns a "
            "mean of 0.05 (the pair's is 0.549), and CellCentred.discretise stops "
            "(prv_accountant/discretisers.py).  Given PureDPMechanism's own rdp, "
            "(alpha - 1) eps / alpha, which is below the pair's (0 against the KL divergence "
            "0.549 as alpha -> 1), the domain is [-294, 294], the check passes and the upper "
            "bounds fall below the truth (the prv_classes rows of the same case)."
        ),
        prelude="""import math
import sys

import prv_accountant as prv


class RandomizedResponse(prv.PureDPMechanism):
    \"\"\"The library's eps-DP pair (its cdf), with the pair's exact Renyi divergence.\"\"\"

    def rdp(self, alpha):
        top = 1 / (1 + math.exp(-self.eps))  # the P0-mass at loss +eps
        s = top * math.exp((alpha - 1) * self.eps) + (1 - top) * math.exp((1 - alpha) * self.eps)
        return math.log(s) / (alpha - 1)


""",
        attempt="""acc = prv.PRVAccountant(prvs=[RandomizedResponse(eps=math.log(3))],
                        max_self_compositions=[1000], eps_error=0.01, delta_error=1e-9)
reported = acc.compute_delta(100.0, [1000])
""",
    ),
    _traced(
        key="opacus-prv-small-delta",
        library="opacus",
        pattern=r"Floating point errors will dominate",
        exception=(
            "ValueError: Floating point errors will dominate for such small values of "
            "delta. Increase delta or reduce domain size."
        ),
        supports=(
            'PRVAccountant.get_epsilon: "delta: target delta", "delta_error: acceptable level '
            'of error in delta" (default delta / 1000); DiscretePRV.compute_epsilon, '
            "Opacus's copy of prv_accountant's code (opacus/accountants/analysis/prv/prvs.py), "
            "refuses a delta with np.finfo(np.longdouble).eps * domain.size > delta - "
            'delta_error, in its own words: "Floating point errors will dominate for such '
            'small values of delta. Increase delta or reduce domain size."'
        ),
        verdict=(
            "The library's documented limit, as in prv_accountant (prv-small-delta): "
            "get_epsilon(delta=1e-15) of 10^4 DP-SGD steps (sigma 0.5, q 1e-4) is refused, not "
            "wrong; the domain Opacus sizes itself has 1358086 points, so it refuses every "
            "delta below 1.5e-13.  Not an adapter fault (the adapter passes only delta)."
        ),
        prelude="""import sys

from opacus.accountants import PRVAccountant

accountant = PRVAccountant()
accountant.history = [(0.5, 0.0001, 10000)]  # (noise_multiplier, sample_rate, steps)
""",
        attempt="""reported = accountant.get_epsilon(delta=1e-15)
""",
    ),
    _traced(
        key="random-allocation-eps-zero",
        library="random_allocation",
        pattern=r"epsilon must be positive",
        exception="ValueError: epsilon must be positive, got 0.0",
        supports=(
            "PrivacyParams._validate_parameters (random_allocation/comparisons/structs.py): "
            '"if self.epsilon is not None and self.epsilon <= 0: raise ValueError(f"epsilon '
            'must be positive, got {self.epsilon}")"; the README: "Exactly one value in '
            '{delta, epsilon} should be set to None"'
        ),
        verdict=(
            "The library's stated limit: delta(0) (the total variation distance) is refused "
            "by PrivacyParams before local_delta runs, as every scheme's delta(eps) is."
        ),
        prelude="""import sys

from random_allocation.comparisons.structs import PrivacyParams, SchemeConfig
from random_allocation.other_schemes.local import local_delta

""",
        attempt="""\
params = PrivacyParams(sigma=0.5, num_steps=1, num_selected=1, num_epochs=1, epsilon=0.0)
reported = local_delta(params, SchemeConfig())
""",
    ),
    _traced(
        key="fourier-no-subsampling",
        library="fourier_accountant",
        pattern=r"OverflowError: cannot convert float infinity to integer",
        exception="OverflowError: cannot convert float infinity to integer",
        supports=(
            'get_delta_R / get_epsilon_R: "q (np.ndarray | float): Subsampling ratios, i.e., '
            'how large are batches relative to the dataset"; q = 1 (the whole dataset, plain '
            "Gaussian noise) is not excluded, but common._evaluate_pld takes np.log(1 - q)"
        ),
        verdict=(
            "The library's failure: q = 1 divides by zero inside "
            "int(np.floor(nx * (L + np.log(1 - q)) / (2 * L))).  Plain Gaussian noise has no "
            "other entry point in fourier-accountant."
        ),
        prelude=_FOURIER,
        attempt="""reported = fa.get_delta_R(target_eps=1.0, sigma=1.0, q=1.0, ncomp=100)
""",
    ),
    _traced(
        key="fourier-eps-zero",
        library="fourier_accountant",
        pattern=r"target_eps must be a positive number",
        exception="ValueError: target_eps must be a positive number",
        supports=(
            'get_delta_R: "target_eps (float): Target epsilon"; compute_delta._get_delta '
            'checks "target_eps must be a positive number"'
        ),
        verdict=("The library's stated limit: delta(0) (the total variation distance) is refused."),
        prelude=_FOURIER,
        attempt="""reported = fa.get_delta_R(target_eps=0.0, sigma=1.0, q=0.01, ncomp=100)
""",
    ),
    _traced(
        key="fourier-zero-pld",
        library="fourier_accountant",
        pattern=r"Epsilon out of \[-L,L\] window",
        exception="ValueError: Epsilon out of [-L,L] window, please check the parameters.",
        supports=(
            'get_epsilon_R: "L must be chosen large enough to cover the computed epsilon, '
            'otherwise a ValueError is raised. Try increasing L if this happens."'
        ),
        verdict=(
            "The library's failure, not the window's: for 10^6 compositions (sigma 0.7, "
            "q 1e-4) get_delta_R is 0.0 at every eps (1e-9 and 1.1248 alike), so the Newton "
            "iteration of get_epsilon_R divides by a zero derivative and leaves [-20, 20], "
            "although the certified eps(1e-6) = 1.1248 lies well inside it; with L = 40 it "
            'raises "Computation reached an infinite value" instead.'
        ),
        prelude=_FOURIER,
        attempt="""\
reported = fa.get_epsilon_R(target_delta=1e-6, sigma=0.7, q=1e-4, ncomp=10**6, L=20.0,
                            nx=10**6)
""",
    ),
    _traced(
        key="fourier-overflow",
        library="fourier_accountant",
        pattern=r"Computation reached an infinite value",
        exception=(
            "ValueError: Computation reached an infinite value. This can happen if sigma is "
            "chosen too small, please check the parameters."
        ),
        supports=(
            'the error message itself: "This can happen if sigma is chosen too small"; the '
            'docstring: "corner cases exist where this function sometimes returns inaccurate '
            'values"'
        ),
        verdict=(
            "The library's failure: at q = 1e-5 (10^4 steps, sigma = 1, not a small sigma) "
            "common._evaluate_pld overflows in F_prod * FF1**ncomp (numpy: \"overflow "
            'encountered in power"), the characteristic function of the discretised loss '
            "being above 1 in modulus; the certified delta(0.1) is at most 3.2e-19."
        ),
        prelude=_FOURIER,
        attempt="""reported = fa.get_delta_R(target_eps=0.1, sigma=1.0, q=1e-5, ncomp=10000, L=20.0,
                          nx=10**6)
""",
    ),
    _traced(
        key="gdpnum-tradeoff-order",
        library="gdpnum",
        pattern=r"AssertionError(:\s*(\[|$)| \(assert np\.all\(np\.diff\(alphas_symm)",
        exception="AssertionError (assert np.all(np.diff(alphas_symm) >= 0), converter.py)",
        supports=(
            'CTDAccountant.get_mu_and_regret, documented in the README as "a pessimistic '
            'value for mu"; no range of sample rates is excluded'
        ),
        verdict=(
            "The library's failure: at q = 1e-5 (10^4 steps, sigma = 1) PLDConverter's "
            "symmetrised trade-off points come out unsorted and its own assertion stops "
            "get_mu_and_regret (and so every number of the adapter's two series)."
        ),
        prelude="""import sys
import gdpnum

acct = gdpnum.CTDAccountant()
for _ in range(10000):
    acct.step(noise_multiplier=1.0, sample_rate=1e-05)
""",
        attempt="""reported = acct.get_mu_and_regret()
""",
    ),
    _traced(
        key="autodp-afa-gamma",
        library="autodp",
        pattern=r"KeyError: 'gamma'",
        exception="KeyError: 'gamma'",
        supports=(
            "mechanism_zoo.SubsampleGaussianMechanism's own comment: \"mech_add = "
            "SubsampleGaussianMechanism({'prob':prob, 'sigma':sigma, 'coeff': coeff}, "
            "phi_off=False, neighboring='add_only')\" ... \"eps = "
            'max(mech_add.approxDP(delta), mch_remove.approxDP(delta))"'
        ),
        verdict=(
            "The library's failure: __init__ keeps only prob, sigma and coeff of params, and "
            "phi_bank.phi_subsample_gaussian_p reads params['gamma'] when the characteristic "
            "function is evaluated (ComposeAFA), so the documented call always fails."
        ),
        prelude="""import sys
from autodp import mechanism_zoo, transformer_zoo

""",
        attempt="""mech = mechanism_zoo.SubsampleGaussianMechanism(
    {'prob': 0.01, 'sigma': 1.0, 'coeff': 1000}, phi_off=False, RDP_off=True,
    neighboring='add_only')
reported = transformer_zoo.ComposeAFA()([mech], [1]).get_approx_delta(1.0)
""",
    ),
    _traced(
        key="opake-import",
        library="opake_accounting",
        pattern=r"__weakref__ slot disallowed",
        exception=(
            "TypeError: __weakref__ slot disallowed: either we already got one, or "
            "__itemsize__ != 0"
        ),
        supports=(
            'the wheel\'s metadata: "Requires-Python: >=3.11, <3.14" and "Programming '
            'Language :: Python :: 3.11"'
        ),
        verdict=(
            "The library's failure: import opake.accounting fails on Python 3.11 (a "
            "dataclass with slots=True and weakref_slot=True over a base that has a "
            "__weakref__ slot; 3.12.1 fails too, 3.13.0 imports it).  The audit drives the "
            "extension "
            "module opake_accounting.abi3.so directly, so no row crashes on it."
        ),
        prelude="""import sys

""",
        attempt="""import opake.accounting  # noqa: F401
reported = "imported"
""",
    ),
)
"""The failures traced to the libraries, by key."""


TIME_LIMIT = LibraryFailure(
    key="time-limit",
    library="",
    pattern=r"time limit\)",
    exception="TimeoutError: ... did not answer within 60 s of CPU time (time limit)",
    supports=(
        "no cost bound is stated by the library; the audit gives every adapter, built-in or "
        "not, the same limit on one case: 60 s of CPU time of the thread that runs the "
        "library (option time_limit; 30 times as much wall-clock time when it waits), the "
        "CPU seconds spent are in the row's note"
    ),
    verdict=(
        "The library's failure to answer the case within the audit's CPU-time limit (the "
        "case is a query its users run, such as 10^6 DP-SGD steps): the row is crashed, the "
        "others go on.  The script runs the library's call under the same CPU-time limit "
        "(SIGPROF) and exits 1 while it does not finish."
    ),
    repro="",  # one script per timed-out case (timeout_ACCOUNTANT_CASE.py), not one per key
)
"""A library past the audit's time limit (any library; :func:`classify` tries it last)."""


def classify(library: str, note: str) -> LibraryFailure | None:
    """The failure a crashed row of ``library`` with ``note`` shows (None: unclassified)."""
    return next((f for f in (*FAILURES, TIME_LIMIT) if f.matches(library, note)), None)


def failure(key: str) -> LibraryFailure:
    """The failure named ``key``.

    Raises:
        KeyError: no such failure.
    """
    for f in (*FAILURES, TIME_LIMIT):
        if f.key == key:
            return f
    raise KeyError(key)
