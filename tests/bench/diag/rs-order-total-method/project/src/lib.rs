//! Daily sales report over the shop's orders.

pub mod order;

use order::Order;

#[derive(Debug, PartialEq)]
pub struct CustomerTotal {
    pub customer: String,
    pub orders: usize,
    pub cents: u64,
}

/// Revenue per customer (what they paid, coupons applied), biggest first,
/// ties by name.
pub fn revenue_by_customer(orders: &[Order]) -> Vec<CustomerTotal> {
    let mut totals: Vec<CustomerTotal> = Vec::new();
    for order in orders {
        let paid = order.total();
        match totals.iter_mut().find(|t| t.customer == order.customer) {
            Some(t) => {
                t.orders += 1;
                t.cents += paid;
            }
            None => totals.push(CustomerTotal { customer: order.customer.clone(), orders: 1, cents: paid }),
        }
    }
    totals.sort_by(|a, b| b.cents.cmp(&a.cents).then_with(|| a.customer.cmp(&b.customer)));
    totals
}

pub fn format_cents(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

pub fn report(orders: &[Order]) -> String {
    let items: u32 = orders.iter().map(Order::item_count).sum();
    let mut out = format!("{} orders, {items} items\n", orders.len());
    for t in revenue_by_customer(orders) {
        out.push_str(&format!("{:<10} {:>3} {:>10}\n", t.customer, t.orders, format_cents(t.cents)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn orders() -> Vec<Order> {
        let mut coupon = Order::new(3, "bea").line("Kettle", 3_999, 1);
        coupon.coupon_percent = 25;
        vec![
            Order::new(1, "ari").line("Mug", 850, 4).line("Tea", 1_200, 2),
            Order::new(2, "bea").line("Teapot", 2_500, 1),
            coupon,
        ]
    }

    #[test]
    fn revenue_applies_coupons() {
        let totals = revenue_by_customer(&orders());
        assert_eq!(totals[0], CustomerTotal { customer: "ari".into(), orders: 1, cents: 5_800 });
        assert_eq!(totals[1], CustomerTotal { customer: "bea".into(), orders: 2, cents: 2_500 + 2_999 });
    }

    #[test]
    fn report_lists_customers() {
        let text = report(&orders());
        assert!(text.starts_with("3 orders, 8 items\n"), "{text}");
        assert!(text.contains("bea          2      54.99"), "{text}");
    }
}
