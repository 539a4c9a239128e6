from termfmt.wrap import columns, wrap

TEXT = "Synchronise the local mirror with the remote and prune stale branches"


def test_short_text_is_one_line():
    assert wrap("hello there", 20) == ["hello there"]


def test_lines_fit_width():
    for width in (12, 16, 20, 25, 33):
        for line in wrap(TEXT, width):
            assert len(line) <= width, (width, line)


def test_exact_fit():
    assert wrap("aaaa bbbb cccc", 9) == ["aaaa bbbb", "cccc"]


def test_columns():
    rows = [("-v", "more output"), ("--mirror", "mirror path")]
    assert columns(rows, width=30) == ["-v        more output", "--mirror  mirror path"]


def test_no_line_one_past_width():
    assert wrap("aaaa bbbb cccc", 8) == ["aaaa", "bbbb", "cccc"]
