struct Order {
    id: u64,
    total: f64,
}

fn main() {
    let o = Order { id: 1, total: 9.5 };
    let s = serde_json::to_string(&o).unwrap();
    println!("{s}");
}
