use std::fs::File;

fn main() {
    let f = File::create("out.json").unwrap();
    let data = vec![1, 2, 3];
    serde_json::to_writer(f, data).unwrap();
}
