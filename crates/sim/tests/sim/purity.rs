//! The simulator is pure, and the compiler is what keeps it so: neither it
//! nor anything it links may be able to call the OS. This test asks cargo
//! what `rtshield-sim` and `rtshield-scenario` link (`cargo tree -p X -e
//! normal`: the packages and features a build of X alone resolves to; dev
//! and build dependencies never end up in the library).
//!
//! `cargo metadata` is not used: its graph unifies features over the whole
//! workspace (another crate turning on `rand_core/getrandom` would put libc
//! under sim there although sim cannot reach it).

use std::collections::BTreeSet;
use std::process::Command;

/// Crates that talk to the kernel (or are rtshield's rooms that do).
const OS_CRATES: &[&str] = &[
    "libc",
    "rustix",
    "nix",
    "rtshield-sys",
    "rtshield-scenario-run",
];

/// Every package `root` links, itself included.
fn closure(root: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml");
    let out = Command::new(cargo)
        .args(["tree", "--offline", "--manifest-path", manifest])
        .args(["-p", root, "-e", "normal", "--prefix", "none", "-f", "{p}"])
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Lines are `name vX.Y.Z (path)` or `name vX.Y.Z (*)`.
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

fn os_crates_in(c: &BTreeSet<String>) -> Vec<&'static str> {
    OS_CRATES
        .iter()
        .copied()
        .filter(|n| c.contains(*n))
        .collect()
}

#[test]
fn simulator_and_scenario_model_link_nothing_that_calls_the_os() {
    let sim = closure("rtshield-sim");
    // The walk reaches what sim really uses.
    assert!(sim.contains("rtshield-scenario"), "{sim:?}");
    assert!(sim.contains("rtshield-vocab"), "{sim:?}");
    assert_eq!(os_crates_in(&sim), Vec::<&str>::new(), "sim links {sim:?}");
    let scn = closure("rtshield-scenario");
    assert_eq!(
        os_crates_in(&scn),
        Vec::<&str>::new(),
        "scenario links {scn:?}"
    );
}

#[test]
fn the_walk_does_see_os_crates_where_they_are() {
    // Otherwise the test above could pass by walking nothing.
    let run = closure("rtshield-scenario-run");
    for n in [
        "libc",
        "rtshield-sys",
        "rtshield-scenario",
        "rtshield-vocab",
    ] {
        assert!(run.contains(n), "{n} not in {run:?}");
    }
}
