use std::collections::BTreeMap;

fn main() {
    let mut m: BTreeMap<Vec<u8>, u32> = BTreeMap::new();
    m.insert(vec![1, 2], 3);
    let v = serde_json::to_value(&m).unwrap();
    println!("{v}");
}
