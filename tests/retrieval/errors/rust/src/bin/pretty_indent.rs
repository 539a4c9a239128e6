use serde_json::ser::{PrettyFormatter, Serializer};

fn main() {
    let fmt = PrettyFormatter::with_indent("    ");
    let mut ser = Serializer::with_formatter(Vec::new(), fmt);
    serde::Serialize::serialize(&vec![1], &mut ser).unwrap();
}
