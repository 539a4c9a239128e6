import pytest

from salesreport import parse_sales, render, revenue_by

EXPORT = """date,region,product,units,price
2024-03-01,north,kettle,2,25.00
2024-03-01,south,toaster,1,40.00
2024-03-02,north,toaster,3,40.00

2024-03-02,east,kettle,1,25.00
"""


def test_all_sales_are_counted():
    sales = parse_sales(EXPORT)
    assert [s.product for s in sales] == ["kettle", "toaster", "toaster", "kettle"]


def test_revenue_by_region():
    assert revenue_by(parse_sales(EXPORT), "region") == [
        ("north", 170.0),
        ("south", 40.0),
        ("east", 25.0),
    ]


def test_columns_in_any_order():
    text = "price,units,product,region,date\n9.5,2,mug,west,2024-01-01\n"
    assert parse_sales(text)[0].revenue == 19.0


def test_missing_column():
    with pytest.raises(ValueError, match="price"):
        parse_sales("date,region,product,units\n")


def test_render_header_line():
    assert render(parse_sales(EXPORT)).splitlines()[0] == "4 sales, revenue 235.00"
