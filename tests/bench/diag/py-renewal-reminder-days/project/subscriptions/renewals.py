"""Renewal reminders: sent a configurable number of days before renewal."""
from dataclasses import dataclass
from datetime import date, timedelta

DEFAULT_REMINDER_DAYS = "7"


@dataclass
class Subscription:
    customer: str
    plan: str
    renews_on: date
    auto_renew: bool = True


def reminder_date(renews_on: date, days_before: int) -> date:
    return renews_on - timedelta(days=days_before)


def reminders_due(subs: list[Subscription], settings: dict[str, str], today: date) -> list[str]:
    """Customers whose reminder goes out today; manual renewals only."""
    days = settings.get("reminder_days", DEFAULT_REMINDER_DAYS)
    return [
        s.customer
        for s in subs
        if not s.auto_renew and reminder_date(s.renews_on, days) == today
    ]
