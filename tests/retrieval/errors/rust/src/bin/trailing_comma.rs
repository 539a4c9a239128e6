use serde_json::Value;

fn main() {
    let text = r#"{"sku": "A-1", "qty": 3,}"#;
    let item: Value = serde_json::from_str(text).unwrap();
    println!("{item}");
}
