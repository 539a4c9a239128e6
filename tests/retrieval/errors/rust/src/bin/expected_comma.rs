fn main() {
    let v: serde_json::Value = serde_json::from_str(r#"{"a": 1 "b": 2}"#).unwrap();
    println!("{v}");
}
