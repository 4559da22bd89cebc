//! The built-in loads: what each one does, its name, and how a spec
//! expands into worker processes.

use rtshield_sys::CpuSet;

pub use rtshield_sys::programs::{Builtin, ALL};

/// What to run: a built-in load on some CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadSpec {
    pub kind: Builtin,
    /// One worker per CPU of this set, each pinned to its CPU. `None`: one
    /// unpinned worker per online CPU.
    pub cpus: Option<CpuSet>,
    /// Bytes per worker for `memory` and `io` (default [`Builtin::default_size`]).
    pub size: Option<u64>,
    /// Workers per CPU (default 1).
    pub workers_per_cpu: u32,
}

impl LoadSpec {
    pub fn new(kind: Builtin, cpus: Option<CpuSet>) -> Self {
        LoadSpec {
            kind,
            cpus,
            size: None,
            workers_per_cpu: 1,
        }
    }
}

pub use rtshield_sys::programs::parse_size;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for b in ALL {
            assert_eq!(Builtin::parse(b.name()), Some(*b));
            assert_eq!(b.name().parse::<Builtin>().unwrap(), *b);
        }
        assert_eq!(Builtin::parse("DOHELL"), Some(Builtin::Hell));
        let e = "tornado".parse::<Builtin>().unwrap_err();
        assert!(
            e.contains("cpu, memory, io, syscall, fork, net, hell, timers, syncio"),
            "{e}"
        );
    }

    #[test]
    fn hell_expands_to_every_worker_kind() {
        let k = Builtin::Hell.expand();
        assert_eq!(k.len(), 6);
        assert!(!k.contains(&Builtin::Hell));
        assert_eq!(Builtin::Cpu.expand(), vec![Builtin::Cpu]);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("64M").unwrap(), 64 << 20);
        assert_eq!(parse_size("1 GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("2kb").unwrap(), 2048);
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("M").is_err());
        assert!(parse_size("99999999999999G").is_err());
    }
}
