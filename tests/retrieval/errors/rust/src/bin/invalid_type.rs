use serde::Deserialize;

#[derive(Deserialize, Debug)]
struct Config {
    port: u16,
}

fn main() {
    let cfg: Config = serde_json::from_str(r#"{"port": "8080"}"#).unwrap();
    println!("{cfg:?}");
}
