use serde_json::Deserializer;

fn main() {
    let stream = Deserializer::from_str("1 2 3").into_iter();
    for v in stream {
        println!("{:?}", v);
    }
}
