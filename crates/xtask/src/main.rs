//! `cargo run -p rtshield-xtask -- DIR`: (re)generate the man pages and
//! shell completions below DIR (the committed copies live in `dist/`).

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args_os().skip(1);
    let (Some(dir), None) = (args.next(), args.next()) else {
        eprintln!("usage: cargo run -p rtshield-xtask -- DIR   (normally: dist)");
        std::process::exit(2);
    };
    rtshield_xtask::write(std::path::Path::new(&dir))
}
