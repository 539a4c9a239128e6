fn main() {
    let v = serde_json::from_str("{}").unwrap();
    println!("{:?}", v);
}
