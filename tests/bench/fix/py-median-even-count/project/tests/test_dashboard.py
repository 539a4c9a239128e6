from latency.dashboard import parse_log, render
from latency.stats import median, percentile

LOG = [
    "GET /users 10",
    "GET /users 30",
    "GET /users 20",
    "POST /login 100",
    "POST /login 40",
    "garbage line",
    "POST /login 60",
    "POST /login 80",
]


def test_parse_skips_garbage():
    assert sorted(parse_log(LOG)) == ["GET /users", "POST /login"]


def test_median_odd():
    assert median([3, 1, 2]) == 2


def test_dashboard_rows():
    assert render(LOG) == [
        "GET /users       n=3    median=20.0 p95=30.0",
        "POST /login      n=4    median=70.0 p95=100.0",
    ]


def test_percentile_bounds():
    assert percentile([5, 1, 9], 100) == 9
