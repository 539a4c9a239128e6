fn main() {
    let v: serde_json::Value = serde_json::from_str("{\"ok\": ture}").unwrap();
    println!("{v}");
}
