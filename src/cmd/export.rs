//! `rtshield export`: a result in a format CI systems read.

use crate::cli::Global;
use rtshield_results::{by_name, write_text, CiOptions, Timestamps};
use rtshield_safefs::{DirPolicy, INPUT_LIMIT};
use rtshield_text::errln;
use rtshield_vocab::Dur;
use rtshield_vocab::InputError;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Formats (docs/formats.md):
  cyclictest-json  the keys of `cyclictest --json` 2.x (LAVA's rt-tests parser reads it)
  junit            JUnit XML, one test case per thread, failed by the run's verdict
  openmetrics      OpenMetrics 1.0 text (Prometheus, node_exporter textfile collector,
                   promtool tsdb create-blocks-from openmetrics with --timestamps)
  prometheus       the same figures in the Prometheus text format 0.0.4 (promtool check metrics)
  kcidb            KCIDB v5 test entries, one per thread and statistic (KernelCI)

Examples:
  rtshield export rtshield-results/20261122T054739Z --format junit --max-latency 100us -o junit.xml
  rtshield export results.json --format cyclictest-json")]
pub(crate) struct Args {
    /// A result directory or its results.json.
    #[arg(value_name = "RESULT")]
    pub(crate) result: PathBuf,
    #[arg(long, value_enum)]
    pub(crate) format: Format,
    /// Output file [default: standard output]; written atomically.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// cyclictest-json, junit, kcidb: judge the run again, a thread whose
    /// maximum latency exceeds DUR failing [default: the limit the run
    /// recorded (measure --max-latency), if any].
    #[arg(long, value_name = "DUR")]
    pub(crate) max_latency: Option<Dur>,
    /// openmetrics: a timestamp (the end of the run) on every sample, for
    /// `promtool tsdb create-blocks-from openmetrics` (node_exporter's
    /// textfile collector refuses timestamps).
    #[arg(long)]
    pub(crate) timestamps: bool,
    /// kcidb: the KCIDB id of the build the kernel came from [default: rtshield:<kernel release>].
    #[arg(long, value_name = "ORIGIN:ID")]
    pub(crate) build_id: Option<String>,
    /// Write into a directory owned by another user or writable by others.
    #[arg(long)]
    pub(crate) force_unsafe_dir: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// results.json itself (rtshield's schema), e.g. to copy a noise run's.
    Json,
    CyclictestJson,
    Junit,
    Openmetrics,
    Prometheus,
    Kcidb,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::CyclictestJson => "cyclictest-json",
            Format::Junit => "junit",
            Format::Openmetrics => "openmetrics",
            Format::Prometheus => "prometheus",
            Format::Kcidb => "kcidb",
        }
    }
}

/// The longest `--max-latency` (docs/ranges.md): one hour.
pub(crate) const MAX_LIMIT_NS: u64 = 3_600_000_000_000;

pub(crate) fn run(args: Args, _g: &Global) -> anyhow::Result<i32> {
    if let Some(l) = args.max_latency {
        if l.ns() == 0 || l.ns() > MAX_LIMIT_NS {
            return Err(InputError::new(format!(
                "--max-latency {l}: must be more than 0 and at most 1h"
            ))
            .into());
        }
    }
    if args.timestamps && args.format != Format::Openmetrics {
        return Err(InputError::new(
            "--timestamps: only with --format openmetrics (node_exporter's textfile collector refuses timestamps)",
        )
        .into());
    }
    if let Some(b) = &args.build_id {
        let ok = b.split_once(':').is_some_and(|(o, rest)| {
            !o.is_empty()
                && !rest.is_empty()
                && o.bytes()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
        }) && b.len() <= 256;
        if !ok {
            return Err(InputError::new(format!(
                "--build-id {b:?}: expected ORIGIN:ID, ORIGIN of a-z, 0-9 and _ (KCIDB), at most 256 bytes"
            ))
            .into());
        }
    }
    let path = if args.result.is_dir() {
        args.result.join(rtshield_results::JSON_FILE)
    } else {
        args.result.clone()
    };
    let (bytes, public) = rtshield_safefs::read_input_public(&path, INPUT_LIMIT)
        .map_err(|e| InputError::new(e.to_string()))?;
    let text = rtshield_text::decode_utf8(bytes)
        .map_err(|e| InputError::at(&path.display().to_string(), e.line, e.col, e))?;
    let res = rtshield_results::parse_json(&text, &path).map_err(|e| match e {
        // Quoted only from a file every user may read (docs/security.md).
        rtshield_results::ReadError::Invalid(i) if !public => {
            let name = path.display().to_string();
            anyhow::Error::from(InputError::new(rtshield_text::excerpt::withhold(
                &i.0,
                &name,
                rtshield_text::excerpt::Quote::Withheld,
            )))
        }
        rtshield_results::ReadError::Invalid(i) => anyhow::Error::from(i),
        other => anyhow::anyhow!("{other}"),
    })?;
    // A noise run's threads hold noise lengths, not wake-up latencies: the
    // latency formats (cyclictest's keys, test cases judged on a latency
    // limit) would mislabel them.
    if res.kind == rtshield_results::RunKind::Noise
        && !matches!(
            args.format,
            Format::Json | Format::Openmetrics | Format::Prometheus
        )
    {
        return Err(InputError::new(format!(
            "{}: a noise run (rtshield noise) exports as json, openmetrics or prometheus, not {}",
            path.display(),
            args.format.name()
        ))
        .into());
    }
    let opts = CiOptions {
        limits: rtshield_results::Limits {
            max_latency_ns: args.max_latency.map(|d| d.ns()),
        },
        build_id: args.build_id.clone(),
        timestamps: if args.timestamps {
            Timestamps::At
        } else {
            Timestamps::None
        },
    };
    let ex = by_name(args.format.name(), &opts).expect("every Format has an exporter");
    let (_, out) = ex.files(&res).into_iter().next().expect("one file");
    match &args.output {
        None => print!("{out}"),
        Some(p) => {
            let policy = if args.force_unsafe_dir {
                DirPolicy::AllowUnsafe
            } else {
                DirPolicy::Strict
            };
            write_text(&out, p, policy).map_err(|e| rtshield_run::refusal(e.for_option("-o")))?;
            errln!("wrote {} ({})", p.display(), args.format.name());
        }
    }
    Ok(0)
}
