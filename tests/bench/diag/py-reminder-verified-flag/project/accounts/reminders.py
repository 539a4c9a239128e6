"""Which accounts get the "please verify your e-mail address" reminder.

`email_verified` is True or False for accounts created since the sign-up
rework; accounts imported from the old system have None (unknown) and must
not be nagged: support verifies them by hand.
"""
from dataclasses import dataclass
from typing import Optional


@dataclass
class Account:
    username: str
    email: str
    email_verified: Optional[bool]
    reminders_sent: int = 0
    unsubscribed: bool = False


MAX_REMINDERS = 3


def needs_reminder(account):
    if account.unsubscribed or account.reminders_sent >= MAX_REMINDERS:
        return False
    if account.email_verified == False:
        return True
    return False


def reminder_batch(accounts):
    """Usernames to remind, in the order given; marks each as reminded once more."""
    due = [a for a in accounts if needs_reminder(a)]
    for a in due:
        a.reminders_sent += 1
    return [a.username for a in due]
