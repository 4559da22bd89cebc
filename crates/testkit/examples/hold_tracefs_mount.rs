//! `hold_tracefs_mount`: a process that holds a tracefs mount of its own
//! while other tests run (bench/trace-flake.sh: issue 23's "the trace
//! tests pass 20 times in a row while another test holds its own tracefs
//! mount"). Root only.
//!
//! The mount is the test kit's `TracefsMount`: registered with the
//! reaper before it is made, so a SIGKILL of this process leaves it to
//! the next test process's reaper. Prints the mount point on stdout, then
//! holds the mount until its standard input closes, unmounts it (checking
//! that it is gone) and exits 0; exit 1 when the unmount failed.

use std::io::{Read, Write};

fn main() {
    let m = rtshield_testkit::TracefsMount::mount();
    let dir = m.path().to_path_buf();
    println!("{}", dir.display());
    std::io::stdout().flush().expect("stdout");
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(m);
    if rtshield_testkit::is_mount_point(&dir) {
        eprintln!("hold_tracefs_mount: {} is still mounted", dir.display());
        std::process::exit(1);
    }
    let left = rtshield_testkit::registered_by(std::process::id());
    if !left.is_empty() {
        eprintln!("hold_tracefs_mount: still registered for the reaper: {left:?}");
        std::process::exit(1);
    }
    eprintln!("hold_tracefs_mount: {} unmounted", dir.display());
}
