"""Which route computes a composition: the one router of any mechanisms, and why.

:func:`compose_mechanisms` reads each mechanism's loss pair
(:class:`~dpcompose_exact.regions.protocol.LossPair`), never its class, and decides:

* every pair finite and symmetric: the exact, certified or bounds route chosen by cost
  (:func:`~.finiteroutes.choose_route`, :func:`~.finiteroutes.compose_routed`);
* asymmetric finite pairs (exactly subsampled mechanisms): both directions composed exactly;
* noise (Gaussian, Laplace, subsampled noise) with or without finite pairs: the finite part
  composed exactly and the noise conditioned on its loss (docs/theory.md, section 19): the
  Gaussian closed form (section 18), the one-use closed form, the far-tail bracket or
  Hoeffding's ends next to a certified loss grid (section 15), else a certified loss grid;
  the finite pairs on the noise's grid when their exact composition is large or refused.

A count is refused only where its route's cost grows with ``k``
(:func:`check_route_counts`).  The route's choice among finite pairs, its options and its
names (:class:`Method`, :class:`Route`, :class:`ComposeOptions`, :class:`Problem`) live in
:mod:`.finiteroutes` and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from ..errors import InvalidParameterError, ResourceLimitError
from ..numbers.format import rat_str
from .finiteroutes import ComposeOptions, Method, Route, compose_routed
from .results import Exactness, PrivacyResult

__all__ = ["compose_mechanisms", "check_route_counts"]


#: the default options (frozen): the auto route and every default of ComposeOptions
_DEFAULT_OPTIONS = ComposeOptions()


def _label(items: Sequence[tuple[Any, int]]) -> str:
    return ", ".join(f"{n} x {m.describe()}" for m, n in items)


#: the routes whose cost grows with k, by the form of the loss pair they compose
_GROWING_ROUTES = {
    "finite": "the exact, certified and bounds routes of finite pairs",
    "asymmetric": "exact subsampling (both directions composed exactly)",
    "asymmetric bounds": "exact subsampling (both directions composed exactly)",
    "noise": "the certified loss grids (Laplace and subsampled noise)",
}


def check_route_counts(items: Sequence[tuple[Any, Any, int]]) -> None:
    """Refuse a count past the largest ``k`` of the route that composes it.

    ``items``: ``(mechanism, pair form, count)``.  A cap belongs only where a route's cost
    grows with ``k``: the Gaussian closed form (``mu^2 = k (sensitivity / sigma)^2``,
    docs/theory.md, section 18) composes any ``k``; every other route is held to
    :data:`~dpcompose_exact.regions.specs.MAX_COUNT` uses of a mechanism.

    Raises:
        ResourceLimitError: a count over the largest ``k`` of its route (the message names
            the route and that ``k``).
    """
    from ..regions.specs import MAX_COUNT

    for m, form, n in items:
        route = _GROWING_ROUTES.get(getattr(form, "value", form))
        if route is not None and n > MAX_COUNT:
            raise ResourceLimitError(
                f"k = {n} uses of {m.describe()}: over k = {MAX_COUNT}, the largest k of "
                f"{route} (its cost grows with k); only Gaussian noise (its closed form) "
                "composes any k"
            )


def compose_mechanisms(
    items: Sequence[tuple[Any, int]], options: ComposeOptions = _DEFAULT_OPTIONS
) -> tuple[PrivacyResult, Route]:
    """Compose any list of ``(mechanism, count)``: the one place that decides how.

    Every mechanism speaks :class:`~dpcompose_exact.regions.protocol.MechanismLike`: the
    router reads its :class:`~dpcompose_exact.regions.protocol.LossPair` and never its class.

    * every pair finite and symmetric: :func:`compose_routed` (exact, certified or
      bounds, by :func:`choose_route`);
    * finite pairs with asymmetric ones (exactly subsampled mechanisms): both directions
      composed exactly (:mod:`.subsample`), or two-sided bounds when a subsampled pair's
      losses left the exact field;
    * noise (Gaussian, Laplace, subsampled noise) with or without finite symmetric pairs:
      the finite part composed exactly and the noise part conditioned on its loss
      (:mod:`.mixed`): the Gaussian closed form when every noise is Gaussian, a certified
      Laplace grid when it is one Laplace mechanism, else a certified loss grid, of width
      ``grid`` (None: each grid's default; a finer grid gives a narrower enclosure); when
      the exact finite part has many loss values or is refused, the finite pairs
      (asymmetric ones by their two directions) go on the noise's loss grid
      (:mod:`.gridfinite`, :mod:`.gridmixed`).

    Returns:
        ``(result, route)``, ``route.why`` saying what was chosen and why.
    """
    from ..regions.protocol import PairForm

    method, memory_limit, grid = options.method, options.memory_limit, options.grid

    kept = [(m, int(n)) for m, n in items if n]
    if not kept:
        raise InvalidParameterError("nothing to compose: every count is 0")
    pairs = [(m.loss_pair(), n) for m, n in kept]
    check_route_counts([(m, lp.form, n) for (m, n), (lp, _) in zip(kept, pairs)])
    forms = {lp.form for lp, _ in pairs}
    if forms == {PairForm.FINITE}:
        return compose_routed(
            [(lp.directions()[0], n) for lp, n in pairs],  # type: ignore[index]
            options,
        )
    mode = Method.parse(method)
    label = _label(kept)
    noise_forms = {PairForm.GAUSSIAN, PairForm.NOISE}
    if not forms & noise_forms:
        if mode not in (Method.AUTO, Method.EXACT):
            raise InvalidParameterError(
                f"method {mode.value}: asymmetric finite pairs (subsampled mechanisms) are "
                "composed exactly (method 'exact')"
            )
        from .subsample import compose_subsampled_mechanisms

        result = compose_subsampled_mechanisms(pairs, memory_limit=memory_limit, label=label)
        if result.kind is Exactness.EXACT:
            return result, Route(
                Method.EXACT,
                "asymmetric finite pairs (subsampled mechanisms): both directions composed exactly",
            )
        return result, Route(
            Method.BOUNDS,
            "subsampled mechanisms with epsilons outside the exact field: certified bounds",
        )
    if mode not in (Method.AUTO, Method.BOUNDS):
        raise InvalidParameterError(
            f"method {mode.value}: noise mechanisms (Gaussian, Laplace, subsampled noise) "
            "have no exact composition; use method 'auto' or 'bounds' (certified)"
        )
    if PairForm.ASYMMETRIC_BOUNDS in forms:
        # a weaker and a stronger exactly subsampled pair: the composition with either is
        # an upper or a lower bound (composition keeps the order of trade-off functions)
        from .subsample import SubsampledBounds

        sides = []
        for side in (0, 1):
            chosen = [(lp.sides()[side], n) for lp, n in pairs]
            sides.append(_compose_with_noise(chosen, memory_limit, label, grid))
        why = sides[1][1].why.replace("; certified to any number of digits", "") + (
            "; subsampled mechanisms with epsilons outside the exact field enter as a "
            "stronger and a weaker exact pair: certified bounds"
        )
        return SubsampledBounds(sides[0][0], sides[1][0], label), Route(Method.BOUNDS, why)  # type: ignore[arg-type]
    return _compose_with_noise(pairs, memory_limit, label, grid)


def _compose_with_noise(
    pairs: Sequence[tuple[Any, int]],
    memory_limit: int | None,
    label: str,
    grid: Fraction | None = None,
    exact_finite: bool = False,
) -> tuple[PrivacyResult, Route]:
    """Finite symmetric pairs (maybe none) next to noise: :mod:`.mixed`.

    ``exact_finite``: the finite symmetric part enumerated whatever its size (the
    ``eps(delta)`` queries of a list whose finite part went on the grid, below
    :data:`~.mixed.EXACT_FINITE_EPS` loss values).
    """
    from ..regions.protocol import PairForm
    from .gridfinite import exact_size
    from .mixed import (
        EXACT_FINITE_EPS,
        DirectedFinitePart,
        FinitePart,
        GaussianPart,
        MixedComposition,
        finite_on_grid,
        grid_part,
        plain_laplace_eps0,
    )

    finite_forms = (PairForm.FINITE, PairForm.ASYMMETRIC)
    finite = [(lp.directions()[0], n) for lp, n in pairs if lp.form is PairForm.FINITE]
    noise = [(lp, n) for lp, n in pairs if lp.form not in finite_forms]
    directed = [(lp, n) for lp, n in pairs if lp.form in finite_forms]
    part: FinitePart | DirectedFinitePart
    gaussian = all(lp.form is PairForm.GAUSSIAN for lp, _ in noise)
    if any(lp.form is PairForm.ASYMMETRIC for lp, _ in directed):
        # each kind by its two directions (a symmetric one: its PLD, both ways alike)
        kinds = [
            (lp.directions() if lp.form is PairForm.ASYMMETRIC else lp.directions()[0], n)
            for lp, n in directed
        ]
        if finite_on_grid(kinds, gaussian):
            return _finite_on_grid(
                noise, kinds, label, grid, "its loss values are many (asymmetric, both directions)"
            )
        try:
            part = DirectedFinitePart(directed, memory_limit)
        except ResourceLimitError as exc:
            return _finite_on_grid(
                noise, kinds, label, grid,
                f"its exact composition is refused (asymmetric, both directions; {exc})",
            )
        finite = directed  # type: ignore[assignment]
    else:
        if finite and not exact_finite and finite_on_grid(finite, gaussian):
            exact = None
            plain_laplace = plain_laplace_eps0(noise) is not None
            if not gaussian and not plain_laplace and exact_size(finite) <= EXACT_FINITE_EPS:
                # eps(delta) from the exact part: its search beats the grid's small-delta
                # routes at these sizes; delta(eps) stays on the grid (section 19).  Not
                # next to plain Laplace: the shared grid answers it at once (Laplace x10 +
                # the paper's pair x50: 0.3 s, width 6e-8; the sum over the exact part's
                # losses on the Laplace grid: 4.4 s, width 3e-6)
                def exact() -> PrivacyResult:
                    return _compose_with_noise(pairs, memory_limit, label, grid, True)[0]

            return _finite_on_grid(
                noise, finite, label, grid, "its loss values are many", exact_eps=exact
            )
        region = None
        if finite:
            try:
                result, _ = compose_routed(
                    finite,
                    ComposeOptions(Method.EXACT, closed_forms=False, memory_limit=memory_limit),
                )
            except ResourceLimitError as exc:
                return _finite_on_grid(
                    noise, finite, label, grid, f"its exact composition is refused ({exc})"
                )
            region = result.region
        part = FinitePart(region)
    sub = " (asymmetric, both directions)" if part.directions != ("both",) else ""
    if all(lp.form is PairForm.GAUSSIAN for lp, _ in noise):
        mu2 = sum((lp.gaussian_mu2() * n for lp, n in noise), Fraction(0))
        what = "Gaussian noise" + (f" next to finite pairs{sub}" if finite else "")
        why = (
            f"{what}: the Gaussian closed form (mu^2 = {rat_str(mu2)})"
            + (", conditioned on the exact loss of the finite part" if finite else "")
            + "; certified to any number of digits"
        )
        return MixedComposition(part, GaussianPart(mu2), label), Route(Method.CERTIFIED, why)
    if not finite and len(noise) == 1 and noise[0][1] == 1:
        from .oneuse import one_use_part

        one = one_use_part(noise[0][0])
        if one is not None:  # one use of subsampled noise: its closed form (section 15)
            why = (
                "one use of subsampled noise: the one-use closed form (a difference of noise "
                "tails at the crossing point); certified to any number of digits"
            )
            return MixedComposition(FinitePart(None), one, label), Route(Method.CERTIFIED, why)
    if not finite and len(noise) == 1:  # one subsampled Gaussian: its far tails bracketed
        from .fartails import far_tails

        tails = far_tails(noise[0][0], noise[0][1], lambda: grid_part(noise, grid)[2], label)
        if tails is not None:
            why = "noise mechanisms: " + (
                "certified two-sided bounds on a loss grid (both directions)"
                if tails.on_grid
                else tails.describe()
            )
            return tails, Route(Method.BOUNDS, why)
    if not finite and len(noise) == 1:  # many subsampled Laplace uses: Hoeffding's ends
        from .hoeffding import hoeffding_ends

        ends = hoeffding_ends(
            noise[0][0], noise[0][1], lambda: grid_part(noise, grid)[2], label
        )
        if ends is not None:
            return ends, Route(
                Method.BOUNDS,
                "noise mechanisms: certified two-sided bounds on a loss grid (both "
                "directions); each end also by Hoeffding's bounds on the sum of the bounded "
                "losses (the grid's lower end loses about k times its width; they answer "
                "alone where the grid is refused for its size)",
            )
    part_on_grid, how, alone = grid_part(noise, grid)
    if not finite:  # the grid answers by itself (one tilt per query, not a sum)
        return alone, Route(Method.BOUNDS, f"noise mechanisms: {how}")
    why = (
        f"noise mechanisms: {how}; the finite part{sub} composed exactly and summed over its losses"
    )
    return MixedComposition(part, part_on_grid, label), Route(Method.BOUNDS, why)


def _finite_on_grid(
    noise: Sequence[tuple[Any, int]],
    finite: Sequence[tuple[Any, int]],
    label: str,
    grid: Fraction | None,
    reason: str,
    exact_eps: Callable[[], PrivacyResult] | None = None,
) -> tuple[PrivacyResult, Route]:
    """Noise and finite pairs on one certified loss grid (:mod:`.gridmixed`).

    ``finite``: ``[(kind, count), ...]``, a symmetric pair's PLD or an asymmetric pair's
    ``(forward, reverse)`` PLDs.  ``exact_eps``: builds the composition with the finite
    part enumerated, which answers ``eps(delta)`` (None: the grid answers every query).
    """
    from .gridmixed import PerQueryComposition, grid_with_finite, largest_list_loss
    from .mixed import EXACT_FINITE_EPS, _grid_item

    def on_grid() -> PrivacyResult:
        return grid_with_finite(  # type: ignore[no-any-return]
            [(_grid_item(lp), n) for lp, n in noise], finite, grid, label,
            largest=lambda: largest_list_loss(noise, finite),
        )

    why = (
        "noise mechanisms and finite pairs on one certified loss grid (the finite part is "
        f"not enumerated: {reason}); certified two-sided bounds"
    )
    if exact_eps is None:
        comp = on_grid()
    else:
        comp = PerQueryComposition(on_grid, exact_eps, label)
        why += (
            f"; eps(delta) with the finite part composed exactly (at most {EXACT_FINITE_EPS} "
            "loss values)"
        )
    return comp, Route(Method.BOUNDS, why)
