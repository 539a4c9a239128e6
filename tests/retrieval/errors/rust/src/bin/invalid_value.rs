fn main() {
    let level: u8 = serde_json::from_str("-1").unwrap();
    println!("{level}");
}
