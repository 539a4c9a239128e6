//! The `tinycoder` binary: the language server and the CLI over the same core.

fn main() -> std::process::ExitCode {
    tinycoder::cli::main()
}
