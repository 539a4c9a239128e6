from listing import paginate
from listing.pages import page_window


def test_first_page():
    page = paginate(range(25), 1, per_page=10)
    assert page.items == list(range(10))
    assert page.has_next and not page.has_previous


def test_even_split():
    page = paginate(range(20), 2, per_page=10)
    assert page.items == list(range(10, 20))
    assert page.label() == "Page 2 of 2"


def test_partial_last_page_is_reachable():
    page = paginate(range(23), 3, per_page=10)
    assert page.label() == "Page 3 of 3"
    assert page.items == [20, 21, 22]


def test_fewer_items_than_a_page():
    page = paginate(range(5), 1, per_page=10)
    assert page.label() == "Page 1 of 1" and not page.has_next


def test_empty_results():
    page = paginate([], 1)
    assert page.items == [] and page.label() == "No results"


def test_window_is_clamped():
    assert page_window(paginate(range(100), 1, per_page=10)) == [1, 2, 3]
