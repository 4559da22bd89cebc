//! The built-in loads: what each one does, its name, and how a spec
//! expands into worker processes.

use rtshield_vocab::CpuSet;

use rtshield_vocab::Builtin;

/// What to run: a built-in load on some CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadSpec {
    /// The load to run.
    pub kind: Builtin,
    /// One worker per CPU of this set, each pinned to its CPU. `None`: one
    /// unpinned worker per online CPU.
    pub cpus: Option<CpuSet>,
    /// Bytes per worker for `memory` and `io` (default [`Builtin::default_size`]).
    pub size: Option<u64>,
    /// Workers per CPU (default 1).
    pub workers_per_cpu: u32,
    /// `net` only: flood this peer with ICMP echo requests (`ping -f`)
    /// instead of the loopback (`--load net:peer=ADDR`).
    pub peer: Option<std::net::Ipv4Addr>,
}

/// A `--load` argument: `KIND`, or `net:peer=ADDR` (an IPv4 address of
/// another machine, or of a network namespace, that answers pings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadArg {
    /// The load named.
    pub kind: Builtin,
    /// `net:peer=ADDR`'s address; `None` for every other form.
    pub peer: Option<std::net::Ipv4Addr>,
}

impl std::str::FromStr for LoadArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, opts) = match s.split_once(':') {
            Some((n, o)) => (n, Some(o)),
            None => (s, None),
        };
        let kind: Builtin = name.parse()?;
        let Some(opts) = opts else {
            return Ok(LoadArg { kind, peer: None });
        };
        let addr = match (kind, opts.strip_prefix("peer=")) {
            (Builtin::Net, Some(a)) => a,
            (Builtin::Net, None) => {
                return Err(format!(
                    "'{s}': net takes one option, peer=ADDR (expected net or net:peer=ADDR)"
                ))
            }
            _ => return Err(format!("'{s}': only net takes an option (net:peer=ADDR)")),
        };
        let ip: std::net::Ipv4Addr = addr.parse().map_err(|_| {
            format!("'{s}': '{addr}' is not an IPv4 address (expected net:peer=192.0.2.7)")
        })?;
        if ip.is_unspecified() || ip.is_broadcast() || ip.is_multicast() || ip.is_loopback() {
            return Err(format!(
                "'{s}': {ip} is not a single remote peer (the loopback flood is plain `net`)"
            ));
        }
        Ok(LoadArg {
            kind,
            peer: Some(ip),
        })
    }
}

impl std::fmt::Display for LoadArg {
    /// As `--load` takes it: `hell`, `net:peer=192.0.2.7`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind.name())?;
        match self.peer {
            Some(p) => write!(f, ":peer={p}"),
            None => Ok(()),
        }
    }
}

impl LoadSpec {
    /// `kind` on `cpus` with the defaults: one worker per CPU, the kind's default size, no peer.
    pub fn new(kind: Builtin, cpus: Option<CpuSet>) -> Self {
        LoadSpec {
            kind,
            cpus,
            size: None,
            workers_per_cpu: 1,
            peer: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_args() {
        let a: LoadArg = "net:peer=10.213.0.2".parse().unwrap();
        assert_eq!(a.kind, Builtin::Net);
        assert_eq!(a.peer, Some(std::net::Ipv4Addr::new(10, 213, 0, 2)));
        assert_eq!("timers".parse::<LoadArg>().unwrap().peer, None);
        for s in ["net:peer=10.213.0.2", "hell"] {
            assert_eq!(s.parse::<LoadArg>().unwrap().to_string(), s);
        }
        for (bad, why) in [
            ("net:peer=localhost", "not an IPv4 address"),
            ("net:peer=127.0.0.1", "not a single remote peer"),
            ("net:peer=255.255.255.255", "not a single remote peer"),
            ("net:to=1.2.3.4", "net takes one option"),
            ("cpu:peer=1.2.3.4", "only net takes an option"),
            ("tornado", "unknown"),
        ] {
            let e = bad.parse::<LoadArg>().unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
