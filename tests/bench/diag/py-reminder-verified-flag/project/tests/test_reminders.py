from accounts.reminders import Account, needs_reminder, reminder_batch


def test_unverified_accounts_are_reminded():
    assert needs_reminder(Account("ana", "ana@example.org", False))
    assert not needs_reminder(Account("ben", "ben@example.org", True))


def test_legacy_accounts_with_unknown_status_are_left_alone():
    assert not needs_reminder(Account("old", "old@example.org", None))


def test_batch_respects_limits_and_counts():
    accounts = [
        Account("ana", "ana@example.org", False),
        Account("old", "old@example.org", None),
        Account("cy", "cy@example.org", False, reminders_sent=3),
        Account("dee", "dee@example.org", False, unsubscribed=True),
        Account("eve", "eve@example.org", False, reminders_sent=1),
    ]
    assert reminder_batch(accounts) == ["ana", "eve"]
    assert [a.reminders_sent for a in accounts] == [1, 0, 3, 0, 2]
