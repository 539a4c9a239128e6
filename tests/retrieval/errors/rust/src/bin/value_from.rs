use serde_json::Value;

struct Point { x: i32 }

fn main() {
    let v = Value::from(Point { x: 1 });
    println!("{v}");
}
