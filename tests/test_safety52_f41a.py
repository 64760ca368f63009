

# -- N10: the generic --out example is one the destination rules accept ------------------------------------------

def test_generic_out_example_is_not_refused_where_given(tmp_path: Path, monkeypatch) -> None:
    import planner

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(Path(planner.__file__).parent / "catalog")  # 'reports' here is inside the shipped catalog
    err = _err("plan", QLORA, "--format", "json", "--out", "")
    # the home folder's reports is offered instead: $HOME/reports passes the rules
    assert err == f"Error: --out: is empty; give a directory for the reports, e.g. --out {tmp_path / 'reports'}.\n", err


def test_generic_out_example_stays_reports_where_it_passes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    err = _err("plan", QLORA, "--format", "json", "--out", "")
    assert err.endswith("e.g. --out reports (or --out . for the current directory).\n"), err
