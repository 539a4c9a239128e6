use serde_json::json;

fn main() {
    let v = json!({
        "id": 1
        "items": []
    });
    println!("{v}");
}
