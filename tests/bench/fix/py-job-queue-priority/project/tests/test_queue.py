from jobs.queue import HIGH, LOW, URGENT, WorkQueue


def test_fifo_for_equal_priority():
    q = WorkQueue()
    for name in ("a", "b", "c"):
        q.submit(name)
    assert q.drain() == ["a", "b", "c"]


def test_urgent_first():
    q = WorkQueue()
    q.submit("thumbnail", LOW)
    q.submit("invoice", HIGH)
    q.submit("password-reset", URGENT)
    q.submit("report")
    assert q.drain() == ["password-reset", "invoice", "report", "thumbnail"]


def test_take_by_tag():
    q = WorkQueue()
    q.submit("a", tags=["mail"])
    q.submit("b", HIGH, tags=["pdf"])
    assert q.take("mail").name == "a"


def test_retry_then_dead():
    q = WorkQueue(max_attempts=2)
    q.submit("flaky")
    job = q.take()
    assert q.retry(job)
    job = q.take()
    assert not q.retry(job) and q.dead == [job]
