fn main() {
    let v: serde_json::Value = serde_json::from_str("[1, 2]").unwrap();
    println!("{}", v[1.0]);
}
