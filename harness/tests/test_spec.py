"""Spec parsing and validation: good specs resolve, bad ones fail with one
line that names the key, the value and what is allowed."""

from __future__ import annotations

import pytest

from abyss_harness import cli, grid, reproduce
from abyss_harness.spec import SameAs, SpecError, parse_spec

BASE = """
name = "t"
[fixed]
workload = "ycsb"
[axes]
cc = ["no_wait", "silo"]
threads = [1, 2]
"""


def parse(text: str, **kw):
    return parse_spec(text, "t.toml", cores=kw.pop("cores", 4), **kw)


def error(text: str, **kw) -> str:
    with pytest.raises(SpecError) as e:
        parse(text, **kw)
    msg = str(e.value)
    assert "\n" not in msg, "errors are one line"
    assert msg.startswith("t.toml: ")
    return msg


def test_minimal_spec_resolves() -> None:
    spec = parse(BASE)
    assert spec.name == "t" and spec.command == "run" and spec.reps == 3
    (sw,) = spec.sweeps
    assert sw.label == "main"
    assert sw.fixed == {"workload": "ycsb"}
    assert sw.axes == {"cc": ["no_wait", "silo"], "threads": [1, 2]}


def test_the_command_is_run() -> None:
    assert parse('command = "run"\n' + BASE).command == "run"
    msg = error('command = "bench ts"\n' + BASE)
    assert "command" in msg and "tsalloc" in msg and "bench-ts.toml" in msg
    assert "the only command is 'run'" in error('command = "bench"\n' + BASE)


def test_unknown_top_level_key_is_named_with_a_suggestion() -> None:
    msg = error('titel = "x"\n' + BASE)
    assert "titel" in msg and "unknown key" in msg and "'title'" in msg


def test_unknown_parameter_is_named_with_a_suggestion() -> None:
    msg = error(BASE.replace('workload = "ycsb"', 'workload = "ycsb"\nthreds = 2'))
    assert "fixed.threds" in msg and "'threads'" in msg


def test_axis_value_out_of_range() -> None:
    msg = error(BASE + "theta = [0.5, 1.5]\n")
    assert "axes.theta[1]" in msg and "1.5" in msg and "0 to 0.9999" in msg


def test_axis_value_of_wrong_type() -> None:
    msg = error(BASE.replace("threads = [1, 2]", 'threads = [1, "two"]'))
    assert "axes.threads[1]" in msg and "'two'" in msg and "integer" in msg


def test_unknown_scheme_lists_the_schemes() -> None:
    msg = error(BASE.replace('"silo"]', '"silo", "2pl"]'))
    assert "axes.cc[2]" in msg and "'2pl'" in msg and "tictoc" in msg and "no_wait" in msg


def test_unknown_scheme_in_per_scheme() -> None:
    msg = error(BASE + "[per_scheme.hstor]\npartitions = 2\n")
    assert "per_scheme.hstor" in msg and "'hstore'" in msg


def test_ycsb_parameter_in_a_tpcc_sweep_is_refused() -> None:
    msg = error(BASE.replace('"ycsb"', '"tpcc"') + "theta = [0.0]\n")
    assert "theta" in msg and "ycsb only" in msg and "tpcc" in msg


def test_workload_is_required_and_cannot_be_swept() -> None:
    assert "workload" in error(BASE.replace('workload = "ycsb"', ""))
    msg = error(BASE.replace('workload = "ycsb"', "") + 'workload = ["ycsb", "tpcc"]\n')
    assert "workload" in msg and "[[sweep]]" in msg


def test_fixed_value_must_be_single_and_axis_must_be_a_list() -> None:
    assert "single value" in error(BASE.replace('workload = "ycsb"', 'workload = "ycsb"\ntheta = [0.1]'))
    assert "list of values" in error(BASE + "theta = 0.5\n")
    assert "at least one value" in error(BASE + "theta = []\n")
    assert "appears twice" in error(BASE + "theta = [0.5, 0.5]\n")


def test_engine_specific_string_checks() -> None:
    assert "batch:N" in error(BASE + 'ts_alloc = ["batch:0"]\n')
    assert "sum to 90" in error(BASE.replace('"ycsb"', '"tpcc"') + 'tpcc_mix = ["neworder=40,payment=50"]\n')
    spec = parse(BASE + 'ts_alloc = ["atomic", "batch:16", "clock"]\n')
    assert spec.sweeps[0].axes["ts_alloc"] == ["atomic", "batch:16", "clock"]


def test_ranges_and_cores() -> None:
    spec = parse(BASE.replace("threads = [1, 2]", 'threads = "1..cores"'), cores=4)
    assert spec.sweeps[0].axes["threads"] == [1, 2, 3, 4]
    spec = parse(BASE.replace("threads = [1, 2]", 'threads = "1..cores/x2"'), cores=12)
    assert spec.sweeps[0].axes["threads"] == [1, 2, 4, 8, 12]
    spec = parse(BASE.replace('workload = "ycsb"', 'workload = "ycsb"\npartitions = "cores"'), cores=6)
    assert spec.sweeps[0].fixed["partitions"] == 6
    assert "not a range" in error(BASE.replace("threads = [1, 2]", 'threads = "1-4"'))
    assert "empty range" in error(BASE.replace("threads = [1, 2]", 'threads = "4..2"'))


def test_on_off_flags_accept_booleans() -> None:
    spec = parse(BASE + "dl_detect = [true, false]\n")
    assert spec.sweeps[0].axes["dl_detect"] == ["on", "off"]


def test_same_as_must_name_a_set_integer_parameter() -> None:
    spec = parse(BASE + "[per_scheme.silo]\npartitions = { same_as = \"threads\" }\n")
    assert spec.sweeps[0].per_scheme == {"silo": {"partitions": SameAs("threads")}}
    assert "same_as 'rows'" in error(BASE + "[per_scheme.silo]\npartitions = { same_as = \"rows\" }\n")
    assert "integer parameter" in error(BASE + "[per_scheme.silo]\npartitions = { same_as = \"theta\" }\n")


def test_sweeps_layer_over_the_top_level_and_full_scale_over_both() -> None:
    text = BASE + """
[full_scale]
fixed = { rows = 20971520 }
axes = { threads = "1..cores/x2" }
[[sweep]]
label = "low"
fixed = { theta = 0.0 }
[[sweep]]
label = "high"
fixed = { theta = 0.8, threads = 1 }
"""
    low, high = parse(text).sweeps
    assert low.fixed["theta"] == 0.0 and low.axes["threads"] == [1, 2]
    assert high.fixed["threads"] == 1 and "threads" not in high.axes
    low, high = parse(text, full_scale=True, cores=8).sweeps
    assert low.fixed["rows"] == 20971520 and low.axes["threads"] == [1, 2, 4, 8]
    assert "threads" not in high.fixed and high.axes["threads"] == [1, 2, 4, 8]


def test_several_sweeps_need_distinct_labels() -> None:
    assert "label" in error(BASE + "[[sweep]]\n[[sweep]]\n")
    assert "used by two" in error(BASE + '[[sweep]]\nlabel = "a"\n[[sweep]]\nlabel = "a"\n')


def test_plots_are_checked() -> None:
    assert "not a metric" in error(BASE + '[[plot]]\nkind = "lines"\ny = "speed"\n')
    assert "'threads'" in error(BASE + '[[plot]]\nkind = "lines"\nx = "thread"\n')
    assert "not one of" in error(BASE + '[[plot]]\nkind = "pie"\n')
    spec = parse(BASE + '[[plot]]\nkind = "lines"\nx = "threads"\ny = "type_payment_throughput"\n')
    assert spec.plots[0].y == "type_payment_throughput"


def test_invalid_toml_is_one_line() -> None:
    assert "not valid TOML" in error("name = \n")


@pytest.mark.parametrize("full_scale", [False, True])
def test_every_packaged_spec_parses_and_expands(full_scale: bool) -> None:
    paths = reproduce.spec_paths()
    assert "demo" in paths and "abyss-fig8" in paths and "bench-ts" in paths
    for name, path in paths.items():
        spec = reproduce.load(name, full_scale=full_scale, cores=2)
        assert spec.name == name, f"{path}: the file is named after its spec"
        assert grid.runs(spec), name
        assert spec.description, f"{name} says what it runs"
        # Every packaged spec reproduces a paper's figure, but for abyss's own:
        # the demo, the bench tables and the timeseries study.
        if name not in ("demo", "timeseries") and not name.startswith("bench-"):
            assert spec.figure, f"{name} says what it reproduces"


def test_cli_reports_a_bad_spec_in_one_line_with_exit_2(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(BASE.replace('"silo"]', '"silo", "2pl"]'), encoding="utf-8")
    code = cli.main(["sweep", str(bad), "--dry-run", "--results", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0 and "abyss sweep:" in err and "'2pl'" in err
    assert not (tmp_path / "r").exists(), "nothing runs on bad input"


def test_prime_runs_is_checked() -> None:
    assert parse(BASE).prime_runs == 0
    assert parse("prime_runs = 2\n" + BASE).prime_runs == 2
    assert "0 to 10" in error("prime_runs = 11\n" + BASE)
    assert "0 to 10" in error("prime_runs = true\n" + BASE)


def test_set_fixes_or_sweeps_a_parameter_in_every_sweep() -> None:
    text = BASE + '[per_scheme.silo]\nrows = 64\n[[sweep]]\nlabel = "a"\n[[sweep]]\nlabel = "b"\n' \
                  'fixed = { threads = 4, theta = 0.5 }\n'
    spec = parse(text, overrides={"duration": "0.3", "threads": "1,8", "theta": "0.9", "rows": "4096"})
    for sw in spec.sweeps:
        assert sw.fixed["duration"] == 0.3 and sw.fixed["theta"] == 0.9 and sw.fixed["rows"] == 4096
        assert sw.axes["threads"] == [1, 8] and "threads" not in sw.fixed
        assert sw.per_scheme == {"silo": {}}, "a --set value wins over a per-scheme one"
    assert spec.overrides == {"duration": 0.3, "theta": 0.9, "rows": 4096, "threads": [1, 8]}
    assert spec.to_json()["overrides"] == spec.overrides
    spec = parse(BASE, overrides={"threads": "1..cores", "cc": "silo"}, cores=4)
    assert spec.sweeps[0].axes["threads"] == [1, 2, 3, 4] and spec.sweeps[0].fixed["cc"] == "silo"
    spec = parse(BASE, overrides={"pin": "true", "dl_detect": "off"})
    assert spec.sweeps[0].fixed["pin"] is True and spec.sweeps[0].fixed["dl_detect"] == "off"


def test_set_keeps_a_text_value_whole_and_drops_schemes_no_longer_run() -> None:
    tpcc = BASE.replace('"ycsb"', '"tpcc"')
    spec = parse(tpcc, overrides={"tpcc_mix": "neworder=40,payment=60"})
    assert spec.sweeps[0].fixed["tpcc_mix"] == "neworder=40,payment=60"
    spec = parse(BASE + "[per_scheme.silo]\nrows = 64\n", overrides={"cc": "no_wait,none"})
    assert spec.sweeps[0].axes["cc"] == ["no_wait", "none"] and spec.sweeps[0].per_scheme == {}


def test_set_errors_name_the_flag() -> None:
    assert "--set thread: unknown parameter" in error(BASE, overrides={"thread": "2"})
    assert "'threads'" in error(BASE, overrides={"thread": "2"})
    assert "--set theta" in error(BASE, overrides={"theta": "2"})
    assert "--set.cc[1]" in error(BASE, overrides={"cc": "silo,2pl"})
    assert "applies to workload ycsb only" in error(BASE.replace('"ycsb"', '"tpcc"'), overrides={"theta": "0.5"})


def test_parameter_flags_become_set_words() -> None:
    own = {"--reps", "--set", "--dry-run", "--results"}
    argv = ["spec", "--duration", "0.3", "--reps", "3", "--warmup=0.1", "--pin", "--threads", "1,2",
            "--dry-run", "--seed", "-1", "--set", "rows=64"]
    assert cli.parameter_flags(argv, own) == [
        "spec", "--set", "duration=0.3", "--reps", "3", "--set", "warmup=0.1", "--set", "pin=true",
        "--set", "threads=1,2", "--dry-run", "--set", "seed=-1", "--set", "rows=64"]


def test_cli_takes_engine_flags_as_parameters(tmp_path, capsys) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text(BASE, encoding="utf-8")
    code = cli.main(["sweep", str(spec), "--duration", "0.3", "--theta=0.5", "--dry-run", "--results",
                     str(tmp_path / "r"), "--prime-runs", "2"])
    out = capsys.readouterr().out
    assert code == 0 and "--duration 0.3" in out and "--theta 0.5" in out
    assert "prime x2" in out
    code = cli.main(["sweep", str(spec), "--thetaa", "0.5", "--dry-run"])
    err = capsys.readouterr().err
    assert code == 2 and "--set thetaa: unknown parameter" in err and "'theta'" in err
    with pytest.raises(SystemExit) as e:
        cli.main(["sweep", str(spec), "--prime-runs", "11", "--dry-run"])
    assert e.value.code == 2
