fn main() {
    let v = serde_json::to_value(f64::NAN).unwrap();
    let w: std::collections::HashMap<String, f64> = serde_json::from_str("{\"a\": NaN}").unwrap();
    println!("{v} {w:?}");
}
