use serde_json::Value;

fn main() {
    let body: String = std::fs::read_to_string("order.json").unwrap();
    let v: Value = serde_json::from_str(body).unwrap();
    println!("{v}");
}
