//! `rtshield report`.

use crate::cli::Global;
use rtshield_report::{generate, Format, Options};
use rtshield_safefs::DirPolicy;
use rtshield_text::{out, outln};
use std::path::PathBuf;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FormatArg {
    /// latency.png and timeline PNGs
    Png,
    /// latency.svg
    Svg,
    /// report.html (self-contained, interactive)
    Html,
    /// summary.md
    Md,
    /// summary.csv
    Csv,
    /// plot.gp and its data files
    Gnuplot,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Png => Format::Png,
            FormatArg::Svg => Format::Svg,
            FormatArg::Html => Format::Html,
            FormatArg::Md => Format::Md,
            FormatArg::Csv => Format::Csv,
            FormatArg::Gnuplot => Format::Gnuplot,
        }
    }
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "RESULT is a results directory or results.json written by `measure`/`run`, a cyclictest --json file, or cyclictest -h histogram text.\n\nExample:\n  rtshield report idle/ loaded/ --name idle loaded -o cmp"
)]
pub(crate) struct Args {
    /// Result directories or files to compare.
    #[arg(required = true, value_name = "RESULT")]
    pub(crate) results: Vec<PathBuf>,
    /// Output directory: created, or an earlier report's directory, whose files are replaced
    /// (those the new report does not write are removed). A directory holding other files, a
    /// symbolic link, or a directory others can write to (see --force-unsafe-dir) is refused.
    #[arg(short, long, value_name = "DIR", default_value = "report")]
    pub(crate) output: PathBuf,
    /// Labels for the results, in order (default: the run's label, directory or file name).
    #[arg(long = "name", value_name = "LABEL", num_args = 1.., action = clap::ArgAction::Append)]
    pub(crate) names: Vec<String>,
    /// Outputs to write (comma-separated; default: all).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "FORMAT")]
    pub(crate) format: Vec<FormatArg>,
    /// Title of the plots and the report.
    #[arg(long, default_value = "Wake-up latency")]
    pub(crate) title: String,
    /// End of the latency axis, in µs (default: a little past the largest latency inside the
    /// histograms). Samples past it are counted by the marker at the right edge.
    #[arg(long, value_name = "US", value_parser = parse_x_max)]
    pub(crate) x_max: Option<f64>,
    /// Write into an existing -o DIR even if it is owned by another user or writable by
    /// group/others without the sticky bit (anyone who can write there could redirect files).
    #[arg(long)]
    pub(crate) force_unsafe_dir: bool,
}

/// 1 µs to 1 h (docs/ranges.md).
fn parse_x_max(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (1.0..=3.6e9).contains(&v) => Ok(v),
        _ => Err(format!("`{s}`: a latency in µs from 1 to 3600000000")),
    }
}

pub(crate) fn run(args: Args, _g: &Global) -> anyhow::Result<i32> {
    let mut formats: Vec<Format> = if args.format.is_empty() {
        Format::ALL.to_vec()
    } else {
        args.format.iter().map(|f| (*f).into()).collect()
    };
    formats.sort();
    formats.dedup();
    let out = generate(&Options {
        inputs: args.results,
        names: args.names,
        out_dir: args.output.clone(),
        formats,
        title: args.title.clone(),
        policy: if args.force_unsafe_dir {
            DirPolicy::AllowUnsafe
        } else {
            DirPolicy::Strict
        },
        x_max_us: args.x_max,
    })?;
    out!("{}", out.table.to_markdown(&args.title));
    outln!(
        "\n{} curve{}; wrote {} files to {}/: {}",
        out.curves,
        if out.curves == 1 { "" } else { "s" },
        out.files.len(),
        args.output.display(),
        out.files.join(" ")
    );
    if !out.removed.is_empty() {
        outln!(
            "removed {} files of the earlier report: {}",
            out.removed.len(),
            out.removed.join(" ")
        );
    }
    Ok(0)
}
