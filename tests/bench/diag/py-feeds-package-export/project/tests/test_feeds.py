from feeds import parse_atom, parse_feed, parse_rss

RSS = """<rss version="2.0"><channel><title>Blog</title>
<item><title>First</title><link>https://example.org/1</link><pubDate>Mon, 06 May 2024 09:00:00 +0000</pubDate></item>
<item><title>Second</title><link>https://example.org/2</link><pubDate>Tue, 07 May 2024 09:00:00 +0000</pubDate></item>
</channel></rss>"""

ATOM = """<feed xmlns="http://www.w3.org/2005/Atom"><title>News</title>
<entry><title>Launch</title><link href="https://example.org/launch"/><updated>2024-05-01T12:00:00Z</updated></entry>
<entry><title>Patch</title><link href="https://example.org/patch"/><updated>2024-05-03T08:30:00Z</updated></entry>
</feed>"""


def test_rss_entries():
    assert [e.title for e in parse_rss(RSS)] == ["First", "Second"]


def test_atom_is_part_of_the_public_api():
    entries = parse_atom(ATOM)
    assert [e.link for e in entries] == ["https://example.org/launch", "https://example.org/patch"]


def test_parse_feed_sorts_newest_first():
    assert [e.title for e in parse_feed(ATOM)] == ["Patch", "Launch"]
    assert [e.title for e in parse_feed(RSS)] == ["Second", "First"]
