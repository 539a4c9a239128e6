use serde_json::{Map, Value};

fn main() {
    let mut m = Map::new();
    m.insert(1, Value::Bool(true));
    println!("{m:?}");
}
