from charts.histogram import Histogram


def test_counts():
    h = Histogram(0, 10, bins=5).extend([0, 1, 2.5, 3, 9.9, -1, 11])
    assert h.counts == [2, 2, 0, 0, 1]
    assert h.outside == 2


def test_grades_up_to_full_marks():
    grades = [55, 67, 72, 88, 91, 100, 100]
    h = Histogram(50, 100, bins=5).extend(grades)
    assert h.counts == [1, 1, 1, 1, 3]
    assert h.outside == 0


def test_render():
    text = Histogram(0, 4, bins=2).extend([1, 1, 3]).render(bar_width=4)
    assert text.splitlines() == ["     0-2      | #### 2", "     2-4      | ## 1"]
