fn main() {
    let s: String = serde_json::from_str(r#""\ud83d""#).unwrap();
    println!("{s}");
}
