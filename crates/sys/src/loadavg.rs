//! `/proc/loadavg`: `0.52 0.58 0.59 3/412 12345`.

use crate::Root;
use serde::Serialize;
use std::io;

/// One reading of `/proc/loadavg`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LoadAvg {
    /// Load averages over 1, 5 and 15 minutes.
    pub avg: [f64; 3],
    /// Tasks runnable right now (the number before the `/`).
    pub running: u32,
    /// Tasks that exist (the number after the `/`).
    pub total: u32,
    /// The last PID handed out.
    pub last_pid: u32,
}

impl LoadAvg {
    /// Read and parse `/proc/loadavg`; an error names the file and quotes content it cannot parse.
    pub fn read(root: &Root) -> io::Result<LoadAvg> {
        let text = root.read("/proc/loadavg")?;
        LoadAvg::parse(&text).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("/proc/loadavg: unexpected content {:?}", text.trim()),
            )
        })
    }

    /// `None` unless the line has the kernel's five fields.
    pub fn parse(text: &str) -> Option<LoadAvg> {
        let mut f = text.split_whitespace();
        let mut avg = [0.0; 3];
        for a in &mut avg {
            let v: f64 = f.next()?.parse().ok()?;
            if !v.is_finite() || v < 0.0 {
                return None;
            }
            *a = v;
        }
        let (running, total) = f.next()?.split_once('/')?;
        Some(LoadAvg {
            avg,
            running: running.parse().ok()?,
            total: total.parse().ok()?,
            last_pid: f.next()?.parse().ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_field() {
        let l = LoadAvg::parse("0.52 0.58 1.59 3/412 12345\n").unwrap();
        assert_eq!(l.avg, [0.52, 0.58, 1.59]);
        assert_eq!((l.running, l.total, l.last_pid), (3, 412, 12345));
        assert_eq!(LoadAvg::parse("0.52 0.58 0.59 3 12345"), None);
        assert_eq!(LoadAvg::parse("0.52 -1 0.59 3/4 1"), None);
        assert_eq!(LoadAvg::parse(""), None);
    }

    #[test]
    fn reads_a_fake_tree() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("proc")).unwrap();
        std::fs::write(d.path().join("proc/loadavg"), "2.00 1.00 0.50 1/99 7\n").unwrap();
        let l = LoadAvg::read(&Root::new(d.path())).unwrap();
        assert_eq!((l.avg[0], l.total, l.last_pid), (2.0, 99, 7));
        assert!(LoadAvg::read(&Root::new(d.path().join("x"))).is_err());
    }
}
