"""Every command's JSON validates against the shipped schema, whatever the input mode."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from dpcompose_exact.cli.app import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(scope="module")
def validator():
    text = resources.files("dpcompose_exact").joinpath("schema/output.schema.json").read_text()
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def run_json(capsys, *argv):
    code = main([*argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


COMMANDS = [
    ["compose", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "3"],
    ["compose", "--mech", "0.3,0+0.15,0.02:3", "--mech", "1,1e-6:2"],
    ["compose", "--spec", str(EXAMPLES / "paper.toml")],
    ["compose", "--spec", str(EXAMPLES / "paper.json"), "--decimals-only"],
    ["compose", "-k", "300", "--certified", "--digits", "8"],
    ["compose", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "3", "--method", "theorem3"],
    ["heterogeneous", "--mech", "0.5:2", "--mech", "log(2):1"],
    ["heterogeneous", "--mech", "log(3):2", "--mech", "log(2):3", "--method", "theorem1"],
    ["delta", "-k", "3", "--eps", "0.5,1"],
    ["delta", "--mech", "0.5,0:3", "--eps", "log(2)"],
    ["epsilon", "-k", "3", "--delta", "1e-3", "--delta", "0.5"],
    ["approx", "--gaussian", "1", "--pieces", "2"],
    ["approx", "--laplace", "1", "--pieces", "2", "--side", "below", "-k", "2"],
    # every kind of mechanism
    ["delta", "--mech", "gaussian(1):10", "--eps", "1"],
    ["delta", "--mech", "gaussian(1)@1/100:10", "--mech", "rr(1/2,2):2", "--eps", "1"],
    ["epsilon", "--mech", "laplace(1):3", "--mech", "dlap(log(2),1):2", "--delta", "1e-3"],
    ["delta", "--mech", "log(3),0@1/10:2", "--mech", "0.5,0:1", "--eps", "0.5"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a)[:60])
def test_json_validates(capsys, validator, argv):
    data = run_json(capsys, *argv)
    errors = sorted(validator.iter_errors(data), key=str)
    assert not errors, errors[0].message


def test_audit_json_validates(capsys, validator):
    pytest.importorskip("dp_accounting")
    pytest.importorskip("prv_accountant")
    code = main(["audit", "-k", "3", "--eps", "0.5", "--delta", "1e-3", "--format", "json"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    data = json.loads(out)
    assert not list(validator.iter_errors(data))
    assert data["command"] == "audit" and data["mechanisms"][0]["count"] == 3


def test_same_top_level_keys_whatever_the_input_mode(capsys):
    a = run_json(capsys, "compose", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "3")
    b = run_json(capsys, "compose", "--mech", "0.3,0+0.15,0.02:3")
    c = run_json(capsys, "compose", "--spec", str(EXAMPLES / "figure2.toml"))
    h = run_json(capsys, "heterogeneous", "--mech", "0.3:3")
    assert list(a) == list(b) == list(c) == list(h)
    assert a == b  # the same composition, the same output
    # canonical mechanisms (the front door's): active constraints by increasing eps
    assert c["mechanisms"] == [{"constraints": [["3/20", "1/50"], ["3/10", "0"]], "count": 20}]
    assert h["mechanisms"] == [{"constraints": [["3/10", "0"]], "count": 3}]
    d = run_json(capsys, "delta", "-k", "3", "--eps", "1")
    e = run_json(capsys, "delta", "--mech", "0.3,0+0.15,0.02:3", "--eps", "1")
    assert list(d) == list(e) and d == e


def test_schema_rejects_a_stray_key(validator):
    bad = {
        "command": "compose",
        "mechanisms": [{"constraints": [["1", "0"]], "count": 1}],
        "method": "exact",
        "certified": False,
        "region": [{"epsilon_decimal": "1", "delta_decimal": "0", "k": 3}],
    }
    assert list(validator.iter_errors(bad))
    bad["region"][0].pop("k")
    assert not list(validator.iter_errors(bad))
    bad["region"][0]["delta_structured"] = {"g": "1/20", "num": [1], "den": [1]}
    assert not list(validator.iter_errors(bad))


def test_schema_is_package_data():
    text = Path(__file__).resolve().parent.parent / "pyproject.toml"
    assert 'dpcompose_exact = ["schema/*.json"]' in text.read_text()
