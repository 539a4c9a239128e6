fn main() {
    let v: serde_json::Value = serde_json::from_str("{\"name\": \"x\"}").unwrap();
    let name: &str = v["name"].as_string().unwrap();
    println!("{name}");
}
