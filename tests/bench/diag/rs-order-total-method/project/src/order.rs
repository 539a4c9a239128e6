//! An order: lines with quantities, and the coupon applied to it.

#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub product: String,
    pub unit_cents: u64,
    pub quantity: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    pub id: u32,
    pub customer: String,
    pub lines: Vec<Line>,
    /// Percent off the whole order.
    pub coupon_percent: u8,
}

impl Order {
    pub fn new(id: u32, customer: &str) -> Self {
        Order { id, customer: customer.to_string(), lines: Vec::new(), coupon_percent: 0 }
    }

    pub fn line(mut self, product: &str, unit_cents: u64, quantity: u32) -> Self {
        self.lines.push(Line { product: product.to_string(), unit_cents, quantity });
        self
    }

    pub fn item_count(&self) -> u32 {
        self.lines.iter().map(|l| l.quantity).sum()
    }

    /// Before the coupon.
    pub fn gross_cents(&self) -> u64 {
        self.lines.iter().map(|l| l.unit_cents * u64::from(l.quantity)).sum()
    }

    /// After the coupon, rounded down to the cent.
    pub fn net_cents(&self) -> u64 {
        self.gross_cents() * u64::from(100 - self.coupon_percent.min(100)) / 100
    }
}
