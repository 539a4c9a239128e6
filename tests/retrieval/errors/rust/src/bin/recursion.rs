fn main() {
    let deep = "[".repeat(1000);
    let v: serde_json::Value = serde_json::from_str(&deep).unwrap();
    println!("{v}");
}
