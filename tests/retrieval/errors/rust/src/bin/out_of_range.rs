fn main() {
    let v: f64 = serde_json::from_str("1e400").unwrap();
    println!("{v}");
}
