use serde_json::json;

fn main() {
    let mut total = json!(10);
    total["currency"] = json!("EUR");
    println!("{total}");
}
