fn main() {
    let path: String = serde_json::from_str(r#""C:\Users\me""#).unwrap();
    println!("{path}");
}
