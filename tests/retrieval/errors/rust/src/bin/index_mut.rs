use serde_json::json;

fn main() {
    let mut order = json!({"lines": [1]});
    order["lines"][3] = json!(2);
    println!("{order}");
}
