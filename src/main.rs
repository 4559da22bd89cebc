fn main() {
    std::process::exit(rtshield::main());
}
