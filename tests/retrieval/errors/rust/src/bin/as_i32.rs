fn main() {
    let v: serde_json::Value = serde_json::from_str("{\"qty\": 3}").unwrap();
    let qty: i32 = v["qty"].as_i32().unwrap();
    println!("{qty}");
}
