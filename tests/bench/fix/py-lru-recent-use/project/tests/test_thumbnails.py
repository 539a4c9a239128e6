from thumbnails import ThumbnailService


def make_service(size):
    rendered = []

    def render(image_id, px):
        rendered.append(image_id)
        return f"<{image_id}@{px}>"

    return ThumbnailService(render, cache_size=size), rendered


def test_cached_thumbnail_is_not_rendered_twice():
    svc, rendered = make_service(4)
    assert svc.thumbnail("a") == "<a@128>"
    svc.thumbnail("a")
    assert rendered == ["a"]
    assert svc.cache.hit_rate() == 0.5


def test_recently_viewed_survives_eviction():
    svc, rendered = make_service(2)
    svc.thumbnail("a")
    svc.thumbnail("b")
    svc.thumbnail("a")  # viewed again, so "b" is now the stalest
    svc.thumbnail("c")
    svc.thumbnail("a")
    assert rendered == ["a", "b", "c"]


def test_capacity_is_respected():
    svc, _ = make_service(3)
    for name in "abcdef":
        svc.thumbnail(name)
    assert len(svc.cache) == 3 and svc.cache.evictions == 3
