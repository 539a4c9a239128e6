use serde::Deserialize;

#[derive(Deserialize, Debug)]
struct Item {
    sku: String,
    qty: u32,
}

fn main() {
    let item: Item = serde_json::from_str(r#"{"sku": "A-1"}"#).unwrap();
    println!("{item:?}");
}
