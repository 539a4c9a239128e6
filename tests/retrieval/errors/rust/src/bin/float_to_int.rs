fn main() {
    let n: u64 = serde_json::from_str("2.5").unwrap();
    println!("{n}");
}
