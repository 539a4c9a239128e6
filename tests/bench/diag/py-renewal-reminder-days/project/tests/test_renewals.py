from datetime import date

from subscriptions.renewals import Subscription, reminder_date, reminders_due
from subscriptions.settings import load_settings

SUBS = [
    Subscription("acme", "pro", date(2024, 7, 10), auto_renew=False),
    Subscription("globex", "team", date(2024, 7, 10)),
    Subscription("initech", "pro", date(2024, 7, 6), auto_renew=False),
]


def test_reminder_date():
    assert reminder_date(date(2024, 3, 1), 1) == date(2024, 2, 29)


def test_configured_days_before():
    settings = load_settings("# renewal job\nreminder_days = 3\nsender = billing@example.org\n")
    assert reminders_due(SUBS, settings, date(2024, 7, 7)) == ["acme"]
    assert reminders_due(SUBS, settings, date(2024, 7, 3)) == ["initech"]


def test_default_is_a_week():
    assert reminders_due(SUBS, {}, date(2024, 7, 3)) == ["acme"]
