"""Pagination of in-memory result lists for the catalogue's search views."""
from dataclasses import dataclass


@dataclass(frozen=True)
class Page:
    items: list
    number: int
    total_pages: int
    total_items: int

    @property
    def has_next(self):
        return self.number < self.total_pages

    @property
    def has_previous(self):
        return self.number > 1

    def label(self):
        if not self.total_items:
            return "No results"
        return f"Page {self.number} of {self.total_pages}"


def page_count(total_items, per_page):
    """How many pages are needed to show total_items, per_page at a time."""
    if per_page < 1:
        raise ValueError("per_page must be at least 1")
    return max(1, total_items // per_page)


def paginate(items, number=1, per_page=10):
    """Return page `number` (1-based) of items; out-of-range numbers are clamped."""
    items = list(items)
    total_pages = page_count(len(items), per_page)
    number = min(max(1, number), total_pages)
    start = (number - 1) * per_page
    return Page(items[start:start + per_page], number, total_pages, len(items))


def page_window(page, radius=2):
    """Page numbers to show around the current one, e.g. [3, 4, 5, 6, 7]."""
    low = max(1, page.number - radius)
    high = min(page.total_pages, page.number + radius)
    return list(range(low, high + 1))
