use std::collections::HashMap;

fn main() {
    let mut grid: HashMap<(u8, u8), &str> = HashMap::new();
    grid.insert((0, 0), "start");
    let s = serde_json::to_string(&grid).unwrap();
    println!("{s}");
}
