"""Summaries of sales exports (CSV text with a header row)."""
import csv
import io
from collections import defaultdict
from dataclasses import dataclass


@dataclass
class Sale:
    date: str
    region: str
    product: str
    units: int
    price: float

    @property
    def revenue(self):
        return self.units * self.price


REQUIRED = ("date", "region", "product", "units", "price")


def parse_sales(text):
    """Parse CSV text whose first row names the columns (in any order)."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return []
    header = [h.strip().lower() for h in rows[0]]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise ValueError(f"missing columns: {', '.join(missing)}")
    idx = {name: header.index(name) for name in REQUIRED}
    sales = []
    for row in rows[2:]:
        if not any(cell.strip() for cell in row):
            continue
        sales.append(
            Sale(
                date=row[idx["date"]].strip(),
                region=row[idx["region"]].strip(),
                product=row[idx["product"]].strip(),
                units=int(row[idx["units"]]),
                price=float(row[idx["price"]]),
            )
        )
    return sales


def revenue_by(sales, key):
    """Total revenue grouped by a Sale attribute, largest first."""
    totals = defaultdict(float)
    for sale in sales:
        totals[getattr(sale, key)] += sale.revenue
    return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))


def render(sales):
    lines = [f"{len(sales)} sales, revenue {sum(s.revenue for s in sales):.2f}"]
    for region, total in revenue_by(sales, "region"):
        lines.append(f"  {region:<10}{total:>10.2f}")
    return "\n".join(lines)
