use serde_json::Number;

fn main() {
    let ratio = 0.0_f64 / 0.0;
    let n = Number::from_f64(ratio).unwrap();
    println!("{n}");
}
