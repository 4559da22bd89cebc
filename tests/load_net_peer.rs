//! Live: `measure --load net:peer=ADDR` floods a peer, tested between two
//! private network namespaces joined by a veth pair that this test creates
//! (`ip netns`, `ip link ... netns`): nothing is added to the machine's own
//! namespace and no packet can leave it. A guard deletes both namespaces
//! (and with them the veth pair) even when an assertion fails.

use crate::util::*;
use std::process::Command;

/// Owns the two namespaces; deleting a namespace deletes its veth end.
struct Netns {
    names: Vec<String>,
}

impl Drop for Netns {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

fn ip(args: &[&str]) {
    let o = Command::new("ip").args(args).output().unwrap();
    assert!(
        o.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// RX and TX packets of `dev` in namespace `ns` (from its /proc/net/dev).
fn packets(ns: &str, dev: &str) -> (u64, u64) {
    let o = Command::new("ip")
        .args(["netns", "exec", ns, "cat", "/proc/net/dev"])
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&o.stdout);
    let line = t
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(&format!("{dev}:")))
        .unwrap_or_else(|| panic!("{dev} not in {t}"));
    let f: Vec<u64> = line
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    (f[1], f[9])
}

#[test]
fn net_peer_floods_a_peer_in_a_private_namespace() {
    if !require_root("creates network namespaces and a raw ICMP socket")
        || !require_tool("ip", "-V")
        || !require_cpus_0_and_1("the load on CPU 0 and the measurement on CPU 1")
    {
        return;
    }
    let id = std::process::id();
    let (a, b) = (format!("rtshield-a-{id}"), format!("rtshield-b-{id}"));
    let (va, vb) = (format!("rtsa{id}"), format!("rtsb{id}"));
    let mut g = Netns { names: vec![] };
    ip(&["netns", "add", &a]);
    g.names.push(a.clone());
    ip(&["netns", "add", &b]);
    g.names.push(b.clone());
    // Both ends created inside the namespaces: the host's sees nothing.
    ip(&[
        "link", "add", &va, "netns", &a, "type", "veth", "peer", "name", &vb, "netns", &b,
    ]);
    ip(&["-n", &a, "addr", "add", "10.213.77.1/30", "dev", &va]);
    ip(&["-n", &b, "addr", "add", "10.213.77.2/30", "dev", &vb]);
    for (ns, dev) in [(&a, &va), (&b, &vb)] {
        ip(&["-n", ns, "link", "set", dev, "up"]);
        ip(&["-n", ns, "link", "set", "lo", "up"]);
    }
    let (rx_b0, _) = packets(&b, &vb);
    let (rx_a0, _) = packets(&a, &va);
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let o = wrapped(&["ip", "netns", "exec", &a])
        .args([
            "measure",
            "--cpus",
            "1",
            "--duration",
            "1s",
            "--load",
            "net:peer=10.213.77.2",
            "--load-cpus",
            "0",
            "-q",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    // The peer received the echo requests and answered them.
    let (rx_b1, _) = packets(&b, &vb);
    let (rx_a1, _) = packets(&a, &va);
    eprintln!(
        "net:peer: the peer received {} packets, the flooder {} replies in 1 s",
        rx_b1 - rx_b0,
        rx_a1 - rx_a0
    );
    assert!(rx_b1 - rx_b0 >= 64, "peer got {} packets", rx_b1 - rx_b0);
    assert!(rx_a1 - rx_a0 >= 64, "replies: {}", rx_a1 - rx_a0);
    // A bad peer is refused before anything starts.
    let o = rtshield(&[
        "measure",
        "--cpus",
        "1",
        "--duration",
        "1s",
        "--load",
        "net:peer=127.0.0.1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(
        all_text(&o).contains("not a single remote peer"),
        "{}",
        describe(&o)
    );
}
