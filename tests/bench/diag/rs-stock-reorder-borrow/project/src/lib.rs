//! Warehouse stock: items with a reorder point, and the purchase orders that
//! restocking raises.

#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub sku: String,
    pub on_hand: u32,
    pub reorder_point: u32,
    pub reorder_qty: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PurchaseOrder {
    pub number: u32,
    pub sku: String,
    pub quantity: u32,
}

#[derive(Debug, Default)]
pub struct Warehouse {
    pub items: Vec<Item>,
    pub orders: Vec<PurchaseOrder>,
    next_order: u32,
}

impl Warehouse {
    pub fn new() -> Self {
        Warehouse { next_order: 1000, ..Default::default() }
    }

    pub fn stock(&mut self, sku: &str, on_hand: u32, reorder_point: u32, reorder_qty: u32) {
        self.items.push(Item { sku: sku.to_string(), on_hand, reorder_point, reorder_qty });
    }

    pub fn ship(&mut self, sku: &str, quantity: u32) -> Result<u32, String> {
        let item = self.items.iter_mut().find(|i| i.sku == sku).ok_or(format!("unknown sku {sku}"))?;
        if item.on_hand < quantity {
            return Err(format!("only {} of {sku} on hand", item.on_hand));
        }
        item.on_hand -= quantity;
        Ok(item.on_hand)
    }

    fn raise_order(&mut self, sku: &str, quantity: u32) {
        self.next_order += 1;
        self.orders.push(PurchaseOrder { number: self.next_order, sku: sku.to_string(), quantity });
    }

    fn has_open_order(&self, sku: &str) -> bool {
        self.orders.iter().any(|o| o.sku == sku)
    }

    /// Raises one purchase order per item at or below its reorder point that
    /// has none open yet; returns how many it raised.
    pub fn restock(&mut self) -> usize {
        let before = self.orders.len();
        for item in &self.items {
            if item.on_hand <= item.reorder_point && !self.has_open_order(&item.sku) {
                self.raise_order(&item.sku, item.reorder_qty);
            }
        }
        self.orders.len() - before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warehouse() -> Warehouse {
        let mut w = Warehouse::new();
        w.stock("BOLT-M6", 40, 50, 500);
        w.stock("NUT-M6", 900, 50, 500);
        w.stock("WASHER", 10, 10, 200);
        w
    }

    #[test]
    fn restock_orders_items_at_or_below_their_point() {
        let mut w = warehouse();
        assert_eq!(w.restock(), 2);
        let ordered: Vec<_> = w.orders.iter().map(|o| (o.number, o.sku.as_str(), o.quantity)).collect();
        assert_eq!(ordered, vec![(1001, "BOLT-M6", 500), (1002, "WASHER", 200)]);
    }

    #[test]
    fn restock_does_not_order_twice() {
        let mut w = warehouse();
        w.restock();
        w.ship("NUT-M6", 860).unwrap();
        assert_eq!(w.restock(), 1);
        assert_eq!(w.orders.last().unwrap().sku, "NUT-M6");
    }

    #[test]
    fn shipping_more_than_on_hand_fails() {
        let mut w = warehouse();
        assert!(w.ship("WASHER", 11).is_err());
        assert_eq!(w.ship("WASHER", 10), Ok(0));
    }
}
