use serde_json::json;

fn main() {
    let ids: Vec<u32> = serde_json::from_value(json!({"ids": [1, 2]})).unwrap();
    println!("{ids:?}");
}
