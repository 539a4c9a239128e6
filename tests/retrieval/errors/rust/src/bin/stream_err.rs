use serde_json::{Deserializer, Value};

fn main() {
    let input = "{\"n\": 1}\n{\"n\": 2}\n{\"n\": }\n";
    for doc in Deserializer::from_str(input).into_iter::<Value>() {
        println!("{}", doc.unwrap());
    }
}
