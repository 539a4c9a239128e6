use serde_json::value::RawValue;

fn main() {
    let raw = RawValue::from_string("{\"a\": [1, 2}".to_string()).unwrap();
    println!("{raw}");
}
