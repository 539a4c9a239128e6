use serde::Deserialize;

#[derive(Deserialize, Debug)]
#[serde(rename_all = "lowercase")]
enum Level { Low, High }

fn main() {
    let l: Level = serde_json::from_str("\"medium\"").unwrap();
    println!("{l:?}");
}
