#[derive(Debug)]
struct Order {
    id: u64,
}

fn main() {
    let o: Order = serde_json::from_str("{\"id\": 1}").unwrap();
    println!("{o:?}");
}
