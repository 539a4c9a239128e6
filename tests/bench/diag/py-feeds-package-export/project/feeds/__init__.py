"""Reading news feeds: RSS 2.0 and Atom, into one list of entries."""
from .atom import parse_atom
from .detect import parse_feed
from .model import Entry
from .rss import parse_rss

__all__ = ["Entry", "parse_feed", "parse_rss"]
