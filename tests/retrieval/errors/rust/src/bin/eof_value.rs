fn main() {
    let body = std::fs::read_to_string("/dev/null").unwrap();
    let v: serde_json::Value = serde_json::from_str(&body).expect("parse request body");
    println!("{v}");
}
