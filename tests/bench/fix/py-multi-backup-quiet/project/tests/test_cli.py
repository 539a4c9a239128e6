import os

from backup.cli import main


def make_tree(root):
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.txt").write_text("alpha")
    (root / "b.log").write_text("bravo")


def test_copies_and_reports(tmp_path, capsys):
    make_tree(tmp_path / "src")
    assert main([str(tmp_path / "src"), str(tmp_path / "dst")]) == 0
    out = capsys.readouterr().out
    assert "copied  docs/a.txt (5 bytes)" in out
    assert out.splitlines()[-1] == "2 copied, 0 unchanged, 0 failed"
    assert (tmp_path / "dst" / "b.log").read_text() == "bravo"


def test_exclude(tmp_path, capsys):
    make_tree(tmp_path / "src")
    main([str(tmp_path / "src"), str(tmp_path / "dst"), "--exclude", "*.log"])
    assert not (tmp_path / "dst" / "b.log").exists()


def test_quiet_prints_nothing_on_success(tmp_path, capsys):
    make_tree(tmp_path / "src")
    assert main(["--quiet", str(tmp_path / "src"), str(tmp_path / "dst")]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert (tmp_path / "dst" / "docs" / "a.txt").exists()


def test_quiet_still_reports_errors(tmp_path, capsys):
    make_tree(tmp_path / "src")
    (tmp_path / "dst").mkdir()
    (tmp_path / "dst" / "docs").write_text("a file where a folder should be")
    assert main([str(tmp_path / "src"), str(tmp_path / "dst"), "--quiet"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "error   docs/a.txt" in captured.err
