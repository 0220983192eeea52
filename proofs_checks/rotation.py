"""Check 7: normal-rotation derivative formulas and the rotated-line conversion.

Mathematics (docs/theory.md, section 9).  For a differentiable trade-off function ``f`` the normal
rotation is ``u = (x - f(x))/sqrt2``, ``g(u) = (x + f(x))/sqrt2``.  With ``f`` a generic sympy
``Function`` and ``x`` as the curve parameter, ``g' = (dg/dx)/(du/dx)`` and
``g'' = (dg'/dx)/(du/dx)``.  Verified as identities in ``f, f', f''``:

1. ``g'(u) = (1 + f'(x_u)) / (1 - f'(x_u))``;
2. ``g''(u) = 2 sqrt2 f''(x_u) / (1 - f'(x_u))^3``;
3. evenness: the mirrored point ``(f(x), x)`` of a symmetric ``f`` maps to ``(-u, v)``, and
   ``u(0) = -f(0)/sqrt2 = z``;
4. the line ``beta_II = 1 - delta - e^eps beta_I`` becomes ``v = A u + B`` with
   ``e^eps = (1 - A)/(1 + A)`` and ``delta = 1 - sqrt2 B/(1 + A)`` (``A, B`` are computed from
   the rotation of the line, then the claimed inverse formulas are checked);
5. Prop. 1's equation is the meeting condition of the tangents at ``(t+z)/2`` and ``t/2``
   at ``u = t``; Prop. 2's chord through ``(0, f(0))``, ``(t*, f(t*))`` has
   ``e^eps1 = (f(0) - f(t*))/t*``, and the chord through ``(t*, f(t*))`` and ``(c, c)`` has
   ``e^eps2 = (f(t*) - c)/(c - t*)`` and intercept ``1 - delta2`` with
   ``delta2 = 1 - c - c e^eps2``.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy

from proofs_checks._result import CheckResult

NAME = "normal_rotation"
CLAIM = "g'=(1+f')/(1-f'), g''=2sqrt2 f''/(1-f')^3 for generic f; rotated line -> (eps,delta)"

SQ2 = sympy.sqrt(2)
P, Q = sympy.symbols("fp fpp")
A_, B_ = sympy.symbols("A B")


def default_formulas() -> dict[str, Callable[..., sympy.Expr]]:
    """Return the section-9 formulas as callables.

    Keys: ``g1(fp)``, ``g2(fp, fpp)``, ``exp_eps(A)``, ``delta(A, B)``.
    """
    return {
        "g1": lambda fp: (1 + fp) / (1 - fp),
        "g2": lambda fp, fpp: 2 * SQ2 * fpp / (1 - fp) ** 3,
        "exp_eps": lambda a: (1 - a) / (1 + a),
        "delta": lambda a, b: 1 - SQ2 * b / (1 + a),
    }


def _zero(e: sympy.Expr) -> bool:
    return sympy.cancel(sympy.together(sympy.radsimp(e))) == 0


def check_rotation(
    quick: bool = False, *, formulas: dict[str, Callable[..., sympy.Expr]] | None = None
) -> CheckResult:
    """Claim: items 1-5 of the module docstring hold identically.

    Scope: generic ``f`` (sympy ``Function``), symbolic ``eps``, ``delta``, ``t``, ``z``, ``c``.

    Args:
        quick: unused.
        formulas: replacement formulas (hook for perturbation tests), keys as in
            :func:`default_formulas`.

    Returns:
        The check result; a failure names the formula and the nonzero difference.
    """
    fm = default_formulas()
    fm.update(formulas or {})
    x = sympy.Symbol("x")
    f = sympy.Function("f")(x)
    u = (x - f) / SQ2
    v = (x + f) / SQ2
    g1 = sympy.diff(v, x) / sympy.diff(u, x)
    g2 = sympy.diff(g1, x) / sympy.diff(u, x)

    def plain(e: sympy.Expr) -> sympy.Expr:
        e = e.subs(sympy.Derivative(f, (x, 2)), Q)
        return e.subs(sympy.Derivative(f, x), P)

    bad: list[str] = []
    for name, got, claimed in (
        ("g'", plain(g1), fm["g1"](P)),
        ("g''", plain(g2), fm["g2"](P, Q)),
    ):
        if not _zero(got - claimed):
            diff = sympy.cancel(got - claimed)
            bad.append(
                f"{name}: derivative - formula = {diff}; at f'=-2, f''=1: "
                f"{diff.subs({P: -2, Q: 1})}"
            )
    # 3. evenness and z.
    fx = sympy.Symbol("fx")
    um, vm = (fx - x) / SQ2, (fx + x) / SQ2
    uu, vv = (x - fx) / SQ2, (x + fx) / SQ2
    if not (_zero(um + uu) and _zero(vm - vv)):
        bad.append("mirror point (f(x), x) does not map to (-u, v)")
    f0 = sympy.Symbol("f0")
    if not _zero(((0 - f0) / SQ2) - (-f0 / SQ2)):
        bad.append("u(0) != z")
    # 4. rotated line.
    xe, d, t = sympy.symbols("X delta t", positive=True)
    b = 1 - d - xe * t
    ul, vl = (t - b) / SQ2, (t + b) / SQ2
    a_val = sympy.cancel(sympy.diff(vl, t) / sympy.diff(ul, t))
    b_val = sympy.cancel(vl - a_val * ul)
    if sympy.diff(b_val, t) != 0:
        bad.append("rotated line is not of the form v = A u + B")
    for name, got, want in (
        ("e^eps", fm["exp_eps"](a_val), xe),
        ("delta", fm["delta"](a_val, b_val), d),
    ):
        if not _zero(got - want):
            diff = sympy.cancel(sympy.radsimp(got - want))
            bad.append(
                f"line conversion {name}: formula - truth = {diff}; at e^eps=2, "
                f"delta=1/10: {diff.subs({xe: 2, d: sympy.Rational(1, 10)})}"
            )
    # 5. Prop. 1 meeting condition and Prop. 2 chords.
    gf = sympy.Function("g")
    tt, z = sympy.symbols("t z")
    g_d = sympy.Function("gprime")  # the values g'(u) enter only algebraically
    u1, u2 = (tt + z) / 2, tt / 2
    tangent1 = gf(u1) + g_d(u1) * (tt - u1)
    tangent2 = gf(u2) + g_d(u2) * (tt - u2)
    lhs = gf(u1) + g_d(u1) * (tt - z) / 2
    rhs = gf(u2) + g_d(u2) * tt / 2
    if not (sympy.expand(tangent1 - lhs) == 0 and sympy.expand(tangent2 - rhs) == 0):
        bad.append("Prop. 1 equation is not the tangents' meeting condition at u = t")
    f0, ft, ts, c = sympy.symbols("f0 ft tstar c", positive=True)
    e1 = (f0 - ft) / ts
    e2 = (ft - c) / (c - ts)
    d2 = 1 - c - c * e2
    for name, ok in (
        ("Prop. 2 chord 1 slope", _zero((0 * e1 + f0 - e1 * ts) - ft)),
        ("Prop. 2 chord 2 through (t*, f(t*))", _zero((1 - d2 - e2 * ts) - ft)),
        ("Prop. 2 chord 2 through (c, c)", _zero((1 - d2 - e2 * c) - c)),
    ):
        if not ok:
            bad.append(f"{name} fails")
    return CheckResult(NAME, not bad, "generic f; symbolic eps, delta, t, z, c", bad)
