use serde_json::Number;

fn main() {
    let n: Number = Number::from(1.5f64);
    println!("{n}");
}
