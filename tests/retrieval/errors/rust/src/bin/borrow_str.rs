use serde::Deserialize;

#[derive(Deserialize)]
struct Name<'a> {
    first: &'a str,
}

fn read_name() -> Name<'static> {
    let text = String::from("{\"first\": \"Ada\"}");
    serde_json::from_str(&text).unwrap()
}

fn main() {
    println!("{}", read_name().first);
}
