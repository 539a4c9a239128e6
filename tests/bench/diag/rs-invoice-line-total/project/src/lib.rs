//! Invoices: line items priced in cents, a discount and VAT.

#[derive(Debug, Clone, PartialEq)]
pub struct LineItem {
    pub sku: String,
    pub unit_cents: u64,
    pub quantity: u32,
}

#[derive(Debug, Default)]
pub struct Invoice {
    pub number: String,
    pub items: Vec<LineItem>,
    pub discount_cents: u64,
    /// VAT in basis points (2000 = 20 %).
    pub vat_bp: u32,
}

impl LineItem {
    pub fn new(sku: &str, unit_cents: u64, quantity: u32) -> Self {
        LineItem { sku: sku.to_string(), unit_cents, quantity }
    }

    /// Price of the whole line, in cents.
    pub fn total_cents(&self) -> u64 {
        self.unit_cents * self.quantity
    }
}

impl Invoice {
    pub fn new(number: &str, vat_bp: u32) -> Self {
        Invoice { number: number.to_string(), vat_bp, ..Default::default() }
    }

    pub fn add(&mut self, item: LineItem) -> &mut Self {
        self.items.push(item);
        self
    }

    pub fn subtotal_cents(&self) -> u64 {
        self.items.iter().map(LineItem::total_cents).sum()
    }

    /// VAT on the discounted subtotal, rounded half up to the cent.
    pub fn vat_cents(&self) -> u64 {
        let base = self.subtotal_cents().saturating_sub(self.discount_cents);
        (base * u64::from(self.vat_bp) + 5_000) / 10_000
    }

    pub fn total_cents(&self) -> u64 {
        self.subtotal_cents().saturating_sub(self.discount_cents) + self.vat_cents()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_total_multiplies_price_by_quantity() {
        assert_eq!(LineItem::new("PEN-01", 125, 4).total_cents(), 500);
    }

    #[test]
    fn large_orders_do_not_wrap() {
        // 60,000 pallets at 100,000.00 each: far above u32::MAX cents.
        let item = LineItem::new("PALLET", 10_000_000, 60_000);
        assert_eq!(item.total_cents(), 600_000_000_000);
    }

    #[test]
    fn totals_apply_discount_then_vat() {
        let mut inv = Invoice::new("INV-7", 2000);
        inv.add(LineItem::new("DESK", 25_000, 2)).add(LineItem::new("LAMP", 4_999, 1));
        inv.discount_cents = 4_999;
        assert_eq!(inv.subtotal_cents(), 54_999);
        assert_eq!(inv.vat_cents(), 10_000);
        assert_eq!(inv.total_cents(), 60_000);
    }
}
