from .atom import parse_atom
from .rss import parse_rss


def parse_feed(xml_text):
    """Entries of an RSS or Atom document, newest first."""
    if "<feed" in xml_text[:500]:
        entries = parse_atom(xml_text)
    else:
        entries = parse_rss(xml_text)
    return sorted(entries, key=lambda e: e.published, reverse=True)
