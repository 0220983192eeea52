"""Symbolic verification of the identities of the paper (theory chapter: ``docs/theory.md``).

Each check proves an identity for symbolic parameters (``x_i = e^{eps_i}``, ``delta_i``,
mixture weights as symbols; ``k`` fixed within a stated range) rather than testing numbers.
Where a concrete ``eps`` only decides the *ordering* of loss values, the check enumerates
the chambers of that ordering and proves the identity in each (docs/theory.md, section 3).  The code
is an independent re-implementation of the formulas with sympy / exact integer arithmetic;
it does not import :mod:`dpcompose_exact`.

Checks (module: docs/theory.md, section):

1. :mod:`proofs_checks.pair` -- the paper's alpha pair realises ``f_{eps,delta}`` (section 1).
2. :mod:`proofs_checks.thm2_thm3` -- Theorem 2 = Theorem 3 = enumeration (sections 5-7).
3. :mod:`proofs_checks.kov` -- KOV closed form = enumeration (section 4).
4. :mod:`proofs_checks.remark2` -- Remark 2 as the eps2 = 0 double-DP case (section 8).
5. :mod:`proofs_checks.mixture` -- Appendix H conjugates = Minkowski edge merge (section 2).
6. :mod:`proofs_checks.thm1` -- Theorem 1 closed form = enumeration (section 5).
7. :mod:`proofs_checks.rotation` -- normal-rotation formulas (section 9).
8. :mod:`proofs_checks.conjecture` -- the n-constraint conjecture, step by step, with every cell
   of the n = 3 tie arrangement (section 10; the proof is docs/proofs/conjecture.md).

Use :func:`proofs_checks.runner.run` or ``python -m proofs_checks``.

Apart from these checks, :mod:`proofs_checks.subsampled_reference` is a numeric but certified
reference for k uses of the Poisson-subsampled Gaussian (``python -m
proofs_checks.subsampled_reference [--quick]``): closed-form one-use masses in ball
arithmetic, composed by exact integer products; it shares no code with the package's engines.
"""

from proofs_checks._result import CheckResult
from proofs_checks.runner import list_checks, run

__all__ = ["CheckResult", "list_checks", "run"]
