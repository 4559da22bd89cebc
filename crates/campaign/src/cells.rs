//! A campaign's cells as measure requests: what each cell asks of
//! `rtshield measure` ([`Campaign::request`]), checked by measure's own
//! validation when the file is parsed and sent, as JSON, to the child that
//! measures it (`rtshield __measure`); and the equivalent command line,
//! which `--dry-run` shows and the results record.

use crate::model::{Campaign, Cell};
use rtshield_run::{MeasureRequest, PartitionRequest, Refusal, Setting};
use rtshield_vocab::Dur;
use std::path::Path;

/// The campaign key a refused setting comes from (None: the file as a whole).
pub(crate) fn key_of(setting: Setting) -> Option<&'static str> {
    Some(match setting {
        Setting::Period => "period",
        Setting::Priority => "priority",
        Setting::Policy => "policy",
        Setting::Mode => "mode",
        Setting::HistoSize => "histo_size",
        Setting::Resolution => "resolution",
        Setting::Cpus => "cpus",
        Setting::LoadCpus => "load_cpus",
        Setting::Duration => "duration",
        Setting::Samples => "samples",
        Setting::MaxLatency => "max_latency",
        _ => return None,
    })
}

/// A setting's value as `rtshield measure` parses its option; a value it
/// cannot parse is refused in its words.
fn parse<T: std::str::FromStr>(setting: Setting, name: &str, v: &str) -> Result<T, Refusal>
where
    T::Err: std::fmt::Display,
{
    v.parse()
        .map_err(|e: T::Err| Refusal::unparsable(setting, name, v, &e.to_string()))
}

impl Campaign {
    /// The measure request of a cell: the campaign's CPUs and duration, the
    /// settings of `[measure]` and the cell's own (which win), its built-in
    /// load; the partition and the output are the run's
    /// ([`Campaign::cell_request`]). Not validated yet.
    pub fn request(&self, cell: &Cell) -> Result<MeasureRequest, Refusal> {
        let mut r = MeasureRequest::new(1_000_000);
        r.cpus = Some(self.cpus.clone());
        r.duration_ns = self.duration_ns;
        r.samples = self.samples;
        for (k, v) in self.settings(cell) {
            match k.as_str() {
                "period" => r.period_ns = parse::<Dur>(Setting::Period, "DUR", &v)?.ns(),
                "priority" => r.priority = parse(Setting::Priority, "N", &v)?,
                "policy" => r.policy = parse(Setting::Policy, "fifo|rr|other", &v)?,
                "mode" => r.mode = parse(Setting::Mode, "MODE", &v)?,
                "histo_size" => {
                    r.histo_size_ns = Some(parse::<Dur>(Setting::HistoSize, "DUR", &v)?.ns())
                }
                "resolution" => r.resolution = v,
                "max_latency" => {
                    r.max_latency_ns = Some(parse::<Dur>(Setting::MaxLatency, "DUR", &v)?.ns())
                }
                // `true` or `false`: checked when parsed.
                "split" => r.trace.split = v == "true",
                other => unreachable!("{other} is not a setting (checked when parsed)"),
            }
        }
        if let Some(load) = cell.builtin_load() {
            r.load = Some(parse(Setting::Load, "NAME", load)?);
            r.load_cpus = self.load_cpus.clone();
        }
        if cell.isolation() == "partition" {
            r.partition = Some(self.partition_request());
        }
        Ok(r)
    }

    /// Always the campaign's own sets: without a parent those at the root
    /// (`/`), never another parent's partition found first.
    fn partition_request(&self) -> PartitionRequest {
        PartitionRequest {
            parent: Some(self.partition.parent.clone().unwrap_or_else(|| "/".into())),
        }
    }

    /// The request a cell's child carries out: [`Campaign::request`], its
    /// results in `dir`, not stored (the campaign stores the run with its
    /// tags), quiet unless `verbose`. On cgroup v2 (`v2`) a partition cell
    /// runs whole in `rt` (`partition run rt`), so the measure itself joins
    /// no partition. `exe` is recorded as the command line's first word.
    pub fn cell_request(
        &self,
        cell: &Cell,
        exe: &Path,
        dir: &Path,
        v2: bool,
        verbose: bool,
    ) -> anyhow::Result<MeasureRequest> {
        let mut r = self.request(cell).map_err(anyhow::Error::msg)?;
        if v2 {
            r.partition = None;
        }
        r.out = Some(dir.to_path_buf());
        r.no_store = true;
        r.quiet = !verbose;
        r.command = std::iter::once(exe.to_string_lossy().into_owned())
            .chain(self.command_args(cell, dir, !v2, verbose))
            .collect();
        Ok(r)
    }

    /// `measure ...`: the options of [`Campaign::cell_request`] as `rtshield`
    /// arguments (what a cell's child would be given on a command line).
    fn command_args(&self, cell: &Cell, dir: &Path, partition: bool, verbose: bool) -> Vec<String> {
        let mut args = vec!["measure".to_string()];
        args.extend(self.measure_args(cell));
        args.extend(["--no-store".into(), "--out".into()]);
        args.push(dir.to_string_lossy().into_owned());
        if partition && cell.isolation() == "partition" {
            args.extend(self.partition_args());
        }
        if !verbose {
            args.push("-q".into());
        }
        args
    }

    /// `measure` options that put a partition cell's measuring threads in
    /// `rt` and its main thread and load in `nrt` (cgroup v1).
    pub fn partition_args(&self) -> Vec<String> {
        let p = self.partition_request();
        vec![
            "--partition".to_string(),
            "--partition-parent".into(),
            p.parent.unwrap_or_default(),
        ]
    }
}

/// The plan as `--dry-run` prints it.
pub fn plan_text(c: &Campaign) -> String {
    let each = match (c.duration_ns, c.samples) {
        (Some(d), None) => rtshield_vocab::format_duration_ns(d),
        (Some(d), Some(n)) => format!(
            "{} or {n} samples, whichever ends first",
            rtshield_vocab::format_duration_ns(d)
        ),
        (None, Some(n)) => format!("{n} samples (period x samples)"),
        (None, None) => "?".into(),
    };
    let mut s = format!(
        "campaign {} ({} cells x {} repeats = {} runs of {each}; measuring time {})\n",
        c.name,
        c.cells.len(),
        c.repeat,
        c.cells.len() as u64 * c.repeat,
        rtshield_vocab::format_duration_ns(c.total_ns())
    );
    s.push_str(&format!(
        "order: {}\n",
        match c.order {
            crate::model::Order::Interleaved =>
                "interleaved (round 1 of every cell, then round 2, ...)",
            crate::model::Order::Sequential => "sequential",
        }
    ));
    for (i, st) in c.steps().iter().enumerate() {
        let cell = &c.cells[st.cell];
        let mut args = c.measure_args(cell);
        if cell.isolation() == "partition" {
            args.extend(c.partition_args());
        }
        s.push_str(&format!(
            "{:>4}. cell {} [{}] repeat {}: rtshield measure {}\n",
            i + 1,
            st.cell + 1,
            cell.id,
            st.repeat,
            args.join(" ")
        ));
    }
    // What the report will keep apart: said before hours are spent.
    s.push_str(&if c.pool.is_empty() {
        "report: nothing pooled (every axis and the kernel kept apart)\n".to_string()
    } else {
        format!("report: pooled as asked: {}\n", c.pool.join(", "))
    });
    s
}

#[cfg(test)]
mod tests {
    use crate::model::parse_checked;
    use rtshield_run::Setting;
    use std::path::Path;

    const FILE: &str = "name = \"x\"\ncpus = \"0\"\nduration = \"2s\"\n[measure]\nperiod = \"200us\"\npriority = 90\n[axes]\nisolation = [\"none\", \"partition\"]\nload = [\"idle\", \"cpu\"]\n[partition]\nwith = [\"irq\"]\n";

    /// Round 5 (A), F02: a `cmd:` load's password reached the cell's id,
    /// its `load` tag, results.json, the store and the summary.
    #[test]
    fn f02_a_load_command_s_password_is_in_no_cell_id() {
        let f = "name = \"x\"\ncpus = \"0\"\nduration = \"2s\"\n[axes]\n\
                 load = [\"cmd:env PGPASSWORD=S3cret pgbench postgres://u:S3cret2@db/rt\", \"idle\"]\n";
        let c = parse_checked(f, "c.toml").unwrap();
        let cell = &c.cells[0];
        assert!(!cell.id.contains("S3cret"), "{}", cell.id);
        assert!(!cell.load_shown().contains("S3cret"));
        // The axes the summary names, as the runs' tags hold them.
        assert!(!format!("{:?}", c.axes()).contains("S3cret"));
        // The command the campaign runs keeps its password.
        assert!(cell.load().contains("PGPASSWORD=S3cret "));
        assert_eq!(
            cell.id,
            "load=cmd:env PGPASSWORD=*** pgbench postgres://u:***@db/rt"
        );
    }

    #[test]
    fn a_cell_is_a_request_and_its_command_line_is_the_dry_runs() {
        let c = parse_checked(FILE, "c.toml").unwrap();
        let cell = &c.cells[3]; // isolation=partition,load=cpu
        let r = c.request(cell).unwrap();
        assert_eq!(r.cpus.as_deref(), Some("0"));
        assert_eq!((r.period_ns, r.priority), (200_000, 90));
        assert_eq!(r.duration_ns, Some(2_000_000_000));
        assert_eq!(r.load.map(|l| l.to_string()).as_deref(), Some("cpu"));
        assert_eq!(r.partition.unwrap().parent.as_deref(), Some("/"));
        let exe = Path::new("/usr/bin/rtshield");
        let dir = Path::new("/tmp/c/004-cell4-r1");
        let v1 = c.cell_request(cell, exe, dir, false, false).unwrap();
        assert!(v1.partition.is_some() && v1.quiet && v1.no_store);
        assert_eq!(
            v1.command.join(" "),
            "/usr/bin/rtshield measure --cpus 0 --duration 2s --period 200us --prio 90 \
             --load cpu --no-store --out /tmp/c/004-cell4-r1 --partition --partition-parent / -q"
        );
        // cgroup v2: the whole child runs in rt; the measure joins nothing.
        let v2 = c.cell_request(cell, exe, dir, true, true).unwrap();
        assert!(v2.partition.is_none() && !v2.quiet);
        assert!(!v2.command.iter().any(|a| a == "--partition" || a == "-q"));
    }

    #[test]
    fn a_value_measure_cannot_parse_is_refused_at_the_value() {
        let t = FILE.replace("period = \"200us\"", "period = 200");
        let e = parse_checked(&t, "c.toml").unwrap_err().to_string();
        assert!(
            e.starts_with("c.toml:5:10: cell isolation=none,load=idle: `rtshield measure` refuses invalid value '200' for '--period <DUR>'"),
            "{e}"
        );
        let c = parse_checked(FILE, "c.toml").unwrap();
        let mut bad = c.clone();
        bad.measure = vec![("histo_size".into(), "2s".into())];
        let r = bad.request(&bad.cells[0]).unwrap().validate().unwrap_err();
        assert_eq!(r.setting, Setting::HistoSize);
        assert_eq!(crate::cells::key_of(r.setting), Some("histo_size"));
    }
}
