fn main() {
    let raw = "{\"note\": \"line one\nline two\"}";
    let v: serde_json::Value = serde_json::from_str(raw).unwrap();
    println!("{v}");
}
