fn main() {
    std::process::exit(rtshield::cli::main());
}
