from timesheet.report import parse_entries, weekly_report

WEEK = """
# week 12
2024-03-18 09:00 10:35 website
2024-03-18 11:00 11:40 support
2024-03-19 14:10 16:00 website
2024-03-20 08:30 09:05 support
""".splitlines()


def test_parse_entries():
    assert parse_entries(WEEK)[0] == ("website", 95 * 60)


def test_weekly_report():
    assert weekly_report(WEEK) == [
        "project  time    share",
        "website  3h 25m   73%",
        "support  1h 15m   27%",
        "total    4h 40m  100%",
    ]


def test_short_week():
    assert weekly_report(["2024-03-18 09:00 09:20 admin"])[1] == "admin    20m   100%"
