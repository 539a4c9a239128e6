fn main() {
    let s: String = serde_json::from_str("\"unterminated").unwrap();
    println!("{s}");
}
