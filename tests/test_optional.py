"""Optional parts without their libraries: one line naming the extra; a regression test
(it used to be a ModuleNotFoundError traceback).

The fast tests hide an installed library in this process (``sys.modules[name] = None``
makes ``import name`` raise); the slow test builds a real virtual environment with only
the core dependencies and ``pip install .``, and runs the CLI and the API there.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import dpcompose_exact as dx
from dpcompose_exact import cli
from dpcompose_exact.errors import DPComposeError, MissingDependencyError
from dpcompose_exact.optional import EXTRAS, install_hint, require

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = (ROOT / "pyproject.toml").read_text()


def _hide(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Make ``import name`` (and its submodules) fail as if it were not installed."""
    for name in names:
        for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            monkeypatch.setitem(sys.modules, mod, None)
        monkeypatch.setitem(sys.modules, name, None)


def _one_line_with_extra(text: str, extra: str) -> None:
    assert text.count("\n") <= 1 and "Traceback" not in text
    assert f'pip install "dpcompose-exact[{extra}]"' in text
    assert f'pip install ".[{extra}]"' in text


def test_every_extra_named_in_a_hint_exists_in_pyproject():
    # the hints name extras that pyproject.toml defines, with the library in them
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    project = tomllib.loads(PYPROJECT)["project"]
    assert project["name"] == "dpcompose_exact"  # pip normalizes it to dpcompose-exact
    extras = project["optional-dependencies"]
    for module, (extra, dist) in EXTRAS.items():
        assert extra in extras, (module, extra)
        if module != "attr":  # attrs comes with dp-accounting
            assert any(req.startswith(dist.split("[")[0]) for req in extras[extra]), module
    assert install_hint("plot") == (
        'pip install "dpcompose-exact[plot]" (in a source checkout: pip install ".[plot]")'
    )


def test_missing_dependency_error_is_both_kinds():
    with pytest.raises(MissingDependencyError, match=r"needs no_such_lib_xyz, which is not"):
        require("no_such_lib_xyz", "a feature", extra="plot")
    assert issubclass(MissingDependencyError, DPComposeError)
    assert issubclass(MissingDependencyError, ImportError)  # except ImportError still works


def test_no_optional_library_is_imported_outside_the_guard():
    # every import of an optional library goes through optional.require, except the
    # places that guard it themselves: the audit's importers (available_accountants), the
    # dp_accounting integration (require() at the top, then the imports) and the adapters
    # of other projects' accountants (tools/audit/peers/: an import that fails is a
    # crashed row of the audit suite)
    allowed = {
        "tools/audit/accountants.py",
        "integrations/dp_accounting.py",
        "integrations/dp_events.py",
        "integrations/opacus.py",
    }
    bad = []
    for path in sorted((ROOT / "dpcompose_exact").rglob("*.py")):
        rel = path.relative_to(ROOT / "dpcompose_exact").as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                peer = rel.startswith("tools/audit/peers/")
                if name.split(".")[0] in EXTRAS and rel not in allowed and not peer:
                    bad.append(f"{rel}:{node.lineno} imports {name}")
    assert bad == []


def test_a_missing_core_library_is_named_as_core(monkeypatch):
    # numpy is a core dependency of the noise routes; a broken install used to
    # name the dp-accounting extra and "subsampled" noise where nothing was subsampled
    _hide(monkeypatch, "numpy")
    with pytest.raises(MissingDependencyError, match="Laplace noise .* needs numpy, a core") as e:
        require("numpy", "Laplace noise (the loss grid)")
    assert "[" not in str(e.value) and "pip install numpy" in str(e.value)
    deps = " ".join(__import__("tomllib").loads(PYPROJECT)["project"]["dependencies"])
    for lib in ("numpy", "scipy", "tqdm", "cachetools"):
        assert lib in deps


def test_plot_cli_without_matplotlib_is_one_line(tmp_path, capsys, monkeypatch):
    _hide(monkeypatch, "matplotlib")
    code = cli.main(["plot", "--dp", "1,0", "-k", "2", "-o", str(tmp_path / "f.png")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("dpcompose: error: plot needs matplotlib, which is not installed")
    _one_line_with_extra(err, "plot")
    assert not (tmp_path / "f.png").exists()


def test_api_without_the_libraries(monkeypatch):
    comp = dx.compose(dx.Mechanism([("1", "0")]), k=2)
    _hide(monkeypatch, "matplotlib", "dp_accounting", "prv_accountant", "opendp")
    calls = {
        "plot": (comp.plot, "Composition.plot() needs matplotlib"),
        "dp-accounting": (comp.to_dp_accounting, "to_dp_accounting() needs dp-accounting"),
        "audit": (comp.to_prv, "to_prv() needs prv-accountant"),
        "opendp": (comp.to_opendp, "to_opendp() needs opendp"),
    }
    for extra, (call, needle) in calls.items():
        with pytest.raises(MissingDependencyError, match=r"\(in a source checkout") as info:
            call()
        assert needle in str(info.value)
        _one_line_with_extra(str(info.value), extra)


def test_exact_accountant_import_without_dp_accounting(monkeypatch):
    # was: ModuleNotFoundError: No module named 'attr'
    _hide(monkeypatch, "dp_accounting", "attr")
    monkeypatch.delitem(sys.modules, "dpcompose_exact.integrations.dp_accounting", raising=False)
    with pytest.raises(MissingDependencyError, match="ExactAccountant .* needs dp-accounting"):
        importlib.import_module("dpcompose_exact.integrations.dp_accounting")
    try:
        from dpcompose_exact.integrations.dp_accounting import ExactAccountant  # noqa: F401
    except ImportError as exc:  # what a user's `except ImportError` sees
        _one_line_with_extra(str(exc), "dp-accounting")
    else:  # pragma: no cover
        pytest.fail("the import did not fail")


def test_audit_and_sweep_without_their_libraries(tmp_path, capsys, monkeypatch):
    _hide(monkeypatch, "dp_accounting", "prv_accountant", "dask", "distributed")
    assert cli.main(["audit", "--dp", "1,0", "-k", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpcompose: error:") and "not installed" in err
    _one_line_with_extra(err, "audit")
    # before: about 600 characters, the install hint three times
    assert err.count("dpcompose-exact[audit]") == 1 and len(err) < 200, err
    grid = tmp_path / "g.toml"
    grid.write_text(
        textwrap.dedent(
            """
            [[mechanism]]
            constraints = [["{eps}", "0"]]
            count = 2
            [grid]
            eps = ["1"]
            [query]
            delta_at_epsilon = ["1"]
            """
        )
    )
    assert cli.main(["sweep", str(grid), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert "a parallel sweep (or run with --serial) needs dask" in err
    _one_line_with_extra(err, "sweep")
    assert cli.main(["sweep", str(grid), "--serial"]) == 0  # the core needs no extra


def test_audit_plot_without_matplotlib(tmp_path, capsys, monkeypatch):
    pytest.importorskip("dp_accounting")
    pytest.importorskip("prv_accountant")
    _hide(monkeypatch, "matplotlib")
    out = str(tmp_path / "a.png")
    assert cli.main(["audit", "--dp", "1,0", "-k", "2", "--plot", out]) == 2
    err = capsys.readouterr().err
    assert "dpcompose audit --plot needs matplotlib" in err
    _one_line_with_extra(err, "audit")


# ---------------------------------------------------------------------------------------
# a real environment: `pip install .` with the core dependencies only


def _link_core(site: Path) -> None:
    """Make the core dependencies (and setuptools, to build) importable in ``site``.

    They are linked from this interpreter's installation (no download); the optional
    libraries are not.
    """
    from importlib.metadata import PackageNotFoundError, distribution

    dists = [
        "sympy", "mpmath", "gmpy2", "python-flint", "numpy", "scipy", "tqdm", "cachetools",
        "setuptools",
    ]
    if sys.version_info < (3, 11):
        dists.append("tomli")
    for name in dists:
        try:
            dist = distribution(name)
        except PackageNotFoundError:  # pragma: no cover - setuptools is not a core need
            continue
        base = Path(dist.locate_file(""))
        tops = {Path(str(f)).parts[0] for f in dist.files or ()}
        for top in sorted(tops):
            src = base / top
            if top in ("..", "__pycache__") or not src.exists() or (site / top).exists():
                continue
            (site / top).symlink_to(src)


@pytest.mark.slow
def test_a_venv_with_only_the_core_dependencies(tmp_path):
    import shutil

    t0 = time.perf_counter()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    _link_core(site)
    src = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "_build")
    for part in ("dpcompose_exact", "proofs_checks"):
        shutil.copytree(ROOT / part, src / part, ignore=ignore)
    for part in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / part, src / part)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    pip = [py, "-m", "pip", "install", "-q", "--no-deps"]
    if importlib.util.find_spec("wheel") is not None:  # build offline with what is here
        pip += ["--no-build-isolation", "--no-index"]
    # else pip fetches the build backend (setuptools, wheel) into an isolated environment
    built = subprocess.run(
        [*pip, str(src)], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    if built.returncode and "--no-index" not in pip and "HTTP" in built.stderr + built.stdout:
        pytest.skip("no index to fetch the build backend from")  # pragma: no cover
    assert built.returncode == 0, built.stderr[-2000:]

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv), capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path
        )

    missing = run(
        str(py),
        "-c",
        "import importlib.util as u; print([m for m in "
        "('matplotlib', 'dp_accounting', 'attr', 'prv_accountant', 'opendp', 'dask', "
        "'pyarrow') if u.find_spec(m)])",
    )
    assert missing.stdout.strip() == "[]", missing.stderr  # really without the extras
    dpc = str(venv / "bin" / "dpcompose")
    ok = run(dpc, "delta", "--dp", "1,0", "-k", "2", "--eps", "1")
    assert ok.returncode == 0 and ok.stdout, ok.stderr  # the core works
    # Laplace noise is a core route: numpy and scipy are core dependencies (it
    # failed with "subsampled Gaussian and Laplace noise needs numpy ... [dp-accounting]")
    lap = run(dpc, "epsilon", "--mech", "laplace(1):5", "--delta", "1e-5")
    assert lap.returncode == 0 and "laplace" in lap.stdout, lap.stderr

    plot = run(dpc, "plot", "--dp", "1,0", "-k", "2", "-o", str(tmp_path / "f.png"))
    assert plot.returncode == 2 and plot.stdout == ""
    assert "plot needs matplotlib" in plot.stderr
    _one_line_with_extra(plot.stderr, "plot")

    audit = run(dpc, "audit", "--dp", "1,0", "-k", "2")
    assert audit.returncode == 2
    _one_line_with_extra(audit.stderr, "audit")

    grid = tmp_path / "g.toml"
    grid.write_text(
        '[[mechanism]]\nconstraints = [["{e}", "0"]]\ncount = 2\n'
        '[grid]\ne = ["1"]\n[query]\ndelta_at_epsilon = ["1"]\n'
    )
    swept = run(dpc, "sweep", str(grid), "--workers", "1")
    assert swept.returncode == 2
    _one_line_with_extra(swept.stderr, "sweep")

    api = run(
        str(py),
        "-c",
        textwrap.dedent(
            """
            import dpcompose_exact as dx
            from dpcompose_exact.errors import MissingDependencyError
            c = dx.compose(dx.Mechanism([("1", "0")]), k=2)
            for f in (c.plot, c.to_dp_accounting, c.to_prv, c.to_opendp):
                try:
                    f()
                except MissingDependencyError as exc:
                    print(exc)
            try:
                from dpcompose_exact.integrations.dp_accounting import ExactAccountant
            except ImportError as exc:
                print(f"{type(exc).__name__}: {exc}")
            """
        ),
    )
    lines = api.stdout.splitlines()
    assert api.returncode == 0 and len(lines) == 5, (api.stdout, api.stderr)
    for line, extra in zip(lines, ("plot", "dp-accounting", "audit", "opendp", "dp-accounting")):
        _one_line_with_extra(line, extra)
    assert lines[-1].startswith("MissingDependencyError: ExactAccountant")
    assert "attr" not in lines[-1]  # was: No module named 'attr'
    assert time.perf_counter() - t0 < 120


def test_audit_of_an_event_file_without_dp_accounting_names_the_extra(capsys, monkeypatch):
    # before: "unknown DpEvent 'SelfComposedDpEvent': No module named 'dp_accounting'"
    _hide(monkeypatch, "dp_accounting", "prv_accountant")
    assert cli.main(["audit", "--events", str(ROOT / "examples" / "rr_selfcomposed.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpcompose: error: the audit of an event tree needs dp-accounting")
    assert "unknown DpEvent" not in err and err.count("dpcompose-exact[audit]") == 1
    _one_line_with_extra(err, "audit")
    from dpcompose_exact.tools.audit import event_from_json

    with pytest.raises(MissingDependencyError, match=r"needs dp-accounting.*\[audit\]"):
        event_from_json({"class_name": "GaussianDpEvent", "noise_multiplier": 1.0})


def test_opacus_integration_import_without_opacus(monkeypatch):
    _hide(monkeypatch, "opacus")
    monkeypatch.delitem(sys.modules, "dpcompose_exact.integrations.opacus", raising=False)
    with pytest.raises(MissingDependencyError, match="Opacus accountant .* needs opacus") as info:
        importlib.import_module("dpcompose_exact.integrations.opacus")
    _one_line_with_extra(str(info.value), "opacus")
