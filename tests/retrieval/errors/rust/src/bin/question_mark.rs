#[derive(Debug)]
enum AppError {
    Io(std::io::Error),
}

fn load() -> Result<serde_json::Value, AppError> {
    let text = std::fs::read_to_string("a.json").map_err(AppError::Io)?;
    let v = serde_json::from_str(&text)?;
    Ok(v)
}

fn main() {
    println!("{:?}", load());
}
