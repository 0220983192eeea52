"""Make docs/img/dpsgd_band.png and docs/dpsgd_table.tex: DP-SGD as a paper shows it.

1000 steps of the Gaussian mechanism (sigma = 24/25, the noise ``dx.get_noise_multiplier``
gives for eps = 2 at delta = 1e-5) on Poisson subsamples of rate 1/100: its privacy
profile delta(eps) as a certified band, and its eps(delta) as a LaTeX table.  Run it from
the repository root: ``python docs/gen_dpsgd.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dpcompose_exact as dx  # noqa: E402
from dpcompose_exact.presentation.plot import plot_profiles  # noqa: E402


def main() -> None:
    """Write the figure and the table."""
    t0 = time.process_time()
    steps = dx.compose(dx.gaussian_noise("24/25").subsample("1/100"), 1000)
    band = steps.profile_band(eps_max=4, points=41)
    plot_profiles(
        [("1000 x gaussian(24/25)@1/100", band)],
        ROOT / "docs" / "img" / "dpsgd_band.png",
        title="DP-SGD privacy profile, certified",
        size=(4.5, 3.6),
    )
    (ROOT / "docs" / "dpsgd_table.tex").write_text(
        steps.to_latex(
            label="tab:dpsgd",
            caption="Certified $\\varepsilon(\\delta)$ of 1000 "
            "DP-SGD steps ($\\sigma = 0.96$, sampling rate $0.01$).",
        )
    )
    seconds = time.process_time() - t0
    print(f"wrote docs/img/dpsgd_band.png and docs/dpsgd_table.tex ({seconds:.1f} s CPU)")


if __name__ == "__main__":
    main()
