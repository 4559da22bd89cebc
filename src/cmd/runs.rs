//! `rtshield runs`: the results store.

use crate::cli::Global;
use rtshield_safefs::DirPolicy;
use rtshield_store::{compare, default_stats, Selector, Stat, Store};
use rtshield_text::{out, outln};
use rtshield_vocab::InputError;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
#[command(after_help = "\
SELECTOR: conditions joined by `and` or spaces, each KEY OP VALUE with OP one of = != ~ (contains) !~.
Keys: host, machine_id, kernel, kernel_version, preempt, arch, cpu_model, tool, label, started, end, mode,
id, uuid, and any tag (isolation, load, campaign, cell, repeat, or your own --tag).

Examples:
  rtshield runs import rtshield-results/*/ cyclictest.json
  rtshield runs list --where 'kernel ~ 6.18 and load = hell'
  rtshield runs compare 'isolation=none' 'isolation=partition' --stat p99.9,max
  rtshield runs push --to postgres://user@db/rt
  rtshield runs list --store postgres://user@db/rt --group-by host,kernel")]
pub(crate) struct Args {
    /// The store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db].
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub(crate) store: Option<String>,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(clap::Subcommand, Debug)]
pub(crate) enum Command {
    /// One line per stored run.
    List {
        /// Only the runs this selector picks.
        #[arg(long = "where", value_name = "SELECTOR")]
        selector: Option<String>,
        /// One row per group of runs with these keys (fields or tags, comma-separated):
        /// run count, worst p99.9 and worst maximum.
        #[arg(long, value_delimiter = ',', value_name = "KEY,...")]
        group_by: Vec<String>,
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Copy the runs of this store (--store) to another (a postgres:// URL or a file); idempotent.
    Push {
        /// The destination store.
        #[arg(long, value_name = "URL|PATH")]
        to: String,
        /// Only the runs this selector picks.
        #[arg(long = "where", value_name = "SELECTOR")]
        selector: Option<String>,
    },
    /// Everything stored about one run (by ID or UUID prefix).
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Compare two sets of runs, statistic by statistic, with 95 % confidence intervals.
    Compare {
        /// Side A.
        a: String,
        /// Side B.
        b: String,
        /// Statistics, comma-separated (p50, p99, p99.9, p99.99, max, or pN).
        #[arg(long, value_delimiter = ',', value_name = "STAT")]
        stat: Vec<String>,
        /// Seed of the bootstrap (the same seed gives the same intervals).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        #[arg(long)]
        json: bool,
    },
    /// Store result directories, results.json, cyclictest --json or -h files.
    Import {
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Write the selected runs as JSON (results.json objects) or CSV (one row per thread).
    Export {
        #[arg(value_name = "SELECTOR")]
        selector: String,
        #[arg(long, value_enum, default_value = "json")]
        format: ExportFormat,
        /// Output file [default: standard output].
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// `rtshield report` over the selected runs.
    Report {
        #[arg(required = true, value_name = "SELECTOR")]
        selectors: Vec<String>,
        #[arg(short, long, value_name = "DIR", default_value = "report")]
        output: PathBuf,
        #[arg(long, default_value = "Wake-up latency")]
        title: String,
    },
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExportFormat {
    Json,
    Csv,
}

fn selector(text: &str, what: &str) -> anyhow::Result<Selector> {
    Selector::parse(text).map_err(|e| InputError::new(format!("{what} `{text}`: {e}")).into())
}

fn open(spec: Option<&str>) -> anyhow::Result<Box<dyn Store>> {
    rtshield_store::open(spec).map_err(|e| {
        if e.bad_input {
            InputError::new(e.msg).into()
        } else {
            anyhow::anyhow!("{e}")
        }
    })
}

pub(crate) fn run(args: Args, _g: &Global) -> anyhow::Result<i32> {
    let spec = args.store.as_deref();
    match args.command {
        Command::List {
            selector: sel,
            group_by,
            json,
        } => list(spec, sel, group_by, json),
        Command::Push { to, selector: sel } => {
            let sel = match sel {
                Some(s) => selector(&s, "--where")?,
                None => Selector::all(),
            };
            push(spec, &to, &sel)
        }
        Command::Show { id, json } => show(spec, id, json),
        Command::Compare {
            a,
            b,
            stat,
            seed,
            json,
        } => compare_cmd(spec, a, b, stat, seed, json),
        Command::Import { paths } => import(spec, paths),
        Command::Export {
            selector: s,
            format,
            output,
        } => export(spec, s, format, output),
        Command::Report {
            selectors,
            output,
            title,
        } => report(spec, selectors, output, title),
    }
}

/// `runs list`: one line per run (or per group with `--group-by`).
fn list(
    spec: Option<&str>,
    sel: Option<String>,
    group_by: Vec<String>,
    json: bool,
) -> anyhow::Result<i32> {
    let sel = match sel {
        Some(s) => selector(&s, "--where")?,
        None => Selector::all(),
    };
    if !group_by.is_empty() {
        return list_groups(spec, &sel, &group_by, json);
    }
    let mut st = open(spec)?;
    let runs = st.list(&sel).map_err(|e| anyhow::anyhow!("{e}"))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
        return Ok(0);
    }
    out!("{}", rtshield_report::list_table(&runs, &st.location()));
    Ok(0)
}

/// `runs show`: everything stored about one run.
fn show(spec: Option<&str>, id: String, json: bool) -> anyhow::Result<i32> {
    let mut st = open(spec)?;
    let r = st.find(&id).map_err(|e| InputError::new(e.msg))?;
    let full = st.results(&[r.id]).map_err(|e| anyhow::anyhow!("{e}"))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&full[0])?);
        return Ok(0);
    }
    out!("{}", rtshield_report::show_text(&r, &full[0]));
    Ok(0)
}

/// `runs compare`: side B against side A, statistic by statistic.
fn compare_cmd(
    spec: Option<&str>,
    a: String,
    b: String,
    stat: Vec<String>,
    seed: u64,
    json: bool,
) -> anyhow::Result<i32> {
    let sa = selector(&a, "side A")?;
    let sb = selector(&b, "side B")?;
    let stats: Vec<Stat> = if stat.is_empty() {
        default_stats()
    } else {
        stat.iter()
            .map(|s| {
                Stat::parse(s)
                    .map_err(|e| anyhow::Error::from(InputError::new(format!("--stat: {e}"))))
            })
            .collect::<anyhow::Result<_>>()?
    };
    let mut st = open(spec)?;
    let load = |st: &mut Box<dyn Store>, sel: &Selector, side: &str| -> anyhow::Result<Vec<_>> {
        let sums = st.list(sel).map_err(|e| anyhow::anyhow!("{e}"))?;
        if sums.is_empty() {
            return Err(InputError::new(format!(
                "side {side} `{sel}` selects no run in {}",
                st.location()
            ))
            .into());
        }
        // A row that does not read back is left out, with a warning.
        Ok(st
            .readable_results(sums)
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .1)
    };
    let ra = load(&mut st, &sa, "A")?;
    let rb = load(&mut st, &sb, "B")?;
    let c = compare(&ra, &rb, &stats, seed);
    if json {
        println!("{}", serde_json::to_string_pretty(&c)?);
        return Ok(0);
    }
    out!(
        "{}",
        rtshield_report::compare_table(&c, &sa.to_string(), &sb.to_string(), seed)
    );
    Ok(0)
}

/// What one `runs import` argument stands for: itself, or, for a directory
/// with no results.json of its own but run directories in it (a campaign's
/// `--out`, whose `report/` is no run, or `rtshield-results/`), each of
/// those run directories, by name (none for a campaign's directory that
/// holds only its report). `rtshield-results/*/` after a campaign then
/// imports the campaign's runs instead of failing on its directory.
fn import_paths(p: &Path) -> Vec<PathBuf> {
    let is_run = |d: &Path| d.join("results.json").is_file();
    if !p.is_dir() || is_run(p) {
        return vec![p.to_path_buf()];
    }
    let mut runs: Vec<PathBuf> = std::fs::read_dir(p)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .filter(|d| is_run(d))
                .collect()
        })
        .unwrap_or_default();
    runs.sort();
    if runs.is_empty() && p.join("report/.rtshield-campaign-report").is_file() {
        // A campaign resumed without `--out` writes its report into a new
        // directory holding no run: nothing of its own to import.
        rtshield_text::errln!(
            "rtshield: note: {}: a campaign's directory with no run in it (only its report): nothing imported from it",
            p.display()
        );
    } else if runs.is_empty() {
        // Nothing to expand: the usual error names the directory.
        runs.push(p.to_path_buf());
    }
    runs
}

/// `runs import`: store result files, each once.
fn import(spec: Option<&str>, paths: Vec<PathBuf>) -> anyhow::Result<i32> {
    let mut batch = Vec::new();
    // The files of one import are all in memory before the one
    // transaction: bounded together, as a report's inputs are (F20).
    let budget = rtshield_report::InputBudget::new();
    for p in paths.iter().flat_map(|p| import_paths(p)) {
        let (path, mut result) = rtshield_report::read_result(&p, &budget)?;
        let src = std::fs::canonicalize(&path).unwrap_or(path.clone());
        // Whatever tags the file carries, the store knows it was imported
        // (a campaign never counts it as its own measurement).
        rtshield_store::mark_imported(&mut result, &src.display().to_string());
        batch.push((result, Some(src.display().to_string())));
    }
    let mut st = open(spec)?;
    let puts = st.put_many(&batch).map_err(|e| anyhow::anyhow!("{e}"))?;
    let sources: Vec<&str> = batch
        .iter()
        .map(|(_, src)| src.as_deref().unwrap_or("?"))
        .collect();
    out!(
        "{}",
        rtshield_report::import_text(&puts, &sources, &st.location())
    );
    // A file claiming the UUID of a different stored run is an error,
    // never "already stored" (F03).
    let conflicts = puts
        .iter()
        .filter(|p| matches!(p, rtshield_store::Put::Conflict { .. }))
        .count();
    if conflicts > 0 {
        rtshield_text::errln!(
            "rtshield: error: {conflicts} file(s) carry the UUID of a different run already in {} (marked CONFLICT above): not stored",
            st.location()
        );
        return Ok(1);
    }
    Ok(0)
}

/// `runs export`: the selected runs as JSON or CSV.
fn export(
    spec: Option<&str>,
    s: String,
    format: ExportFormat,
    output: Option<PathBuf>,
) -> anyhow::Result<i32> {
    let sel = selector(&s, "selector")?;
    let mut st = open(spec)?;
    let sums = st.list(&sel).map_err(|e| anyhow::anyhow!("{e}"))?;
    let text = match format {
        ExportFormat::Json => {
            let (_, full) = st
                .readable_results(sums)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            serde_json::to_string_pretty(&full)? + "\n"
        }
        ExportFormat::Csv => rtshield_report::runs_csv(&sums),
    };
    match output {
        None => print!("{text}"),
        Some(p) => write_file(&p, text.as_bytes())?,
    }
    Ok(0)
}

/// `runs report`: `rtshield report` over the selected runs, through a
/// private temporary directory.
fn report(
    spec: Option<&str>,
    selectors: Vec<String>,
    output: PathBuf,
    title: String,
) -> anyhow::Result<i32> {
    let mut st = open(spec)?;
    // The runs go to the report in memory: no temporary file is written
    // and read back by path (where another user could swap it).
    let mut runs = Vec::new();
    for s in &selectors {
        let sel = selector(s, "selector")?;
        let sums = st.list(&sel).map_err(|e| anyhow::anyhow!("{e}"))?;
        if sums.is_empty() {
            return Err(InputError::new(format!("`{s}` selects no run")).into());
        }
        let (sums, full) = st
            .readable_results(sums)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        for (sum, r) in sums.iter().zip(full) {
            let label = if sum.label.is_empty() {
                format!("run {}", sum.id)
            } else {
                format!("{} #{}", sum.label, sum.id)
            };
            let source = format!("run {} of {}", sum.id, st.location());
            runs.push((label, source, r));
        }
    }
    let out = rtshield_report::generate_from(
        runs,
        &rtshield_report::Options {
            inputs: Vec::new(),
            names: Vec::new(),
            out_dir: output.clone(),
            formats: rtshield_report::Format::ALL.to_vec(),
            title: title.clone(),
            policy: DirPolicy::Strict,
            x_max_us: None,
        },
    )?;
    out!("{}", out.table.to_markdown(&title));
    outln!("\nwrote {} files to {}/", out.files.len(), output.display());
    Ok(0)
}

/// `runs list --group-by`: one row per group.
fn list_groups(
    spec: Option<&str>,
    sel: &Selector,
    by: &[String],
    json: bool,
) -> anyhow::Result<i32> {
    let by: Vec<String> = by.iter().map(|k| k.trim().to_string()).collect();
    let by = by.as_slice();
    rtshield_store::check_group_keys(by).map_err(InputError::new)?;
    let mut st = open(spec)?;
    let groups = st.groups(sel, by).map_err(|e| anyhow::anyhow!("{e}"))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&groups)?);
        return Ok(0);
    }
    out!(
        "{}",
        rtshield_report::groups_table(by, &groups, &st.location())
    );
    Ok(0)
}

/// `runs push`: copy the selected runs to another store, each in its own
/// transaction there; runs already there (same UUID) are left alone.
fn push(spec: Option<&str>, to: &str, sel: &Selector) -> anyhow::Result<i32> {
    let mut src = open(spec)?;
    let sums = src.list(sel).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut dst = open(Some(to))?;
    let (mut new, mut old, mut conflicts) = (0usize, 0usize, 0usize);
    // Batches bound the memory a large store takes (whole histograms).
    for chunk in sums.chunks(64) {
        // A source row that does not read back is left out with a
        // warning: it no longer stops every push at that run (F19).
        let (chunk, full) = src
            .readable_results(chunk.to_vec())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        for (sum, r) in chunk.iter().zip(&full) {
            let from = format!("{}#{}", src.location(), sum.id);
            let mut r = r.clone();
            rtshield_store::mark_pushed(&mut r, &from);
            match dst.put(&r, Some(&from)) {
                Ok(rtshield_store::Put::Stored { .. }) => new += 1,
                Ok(rtshield_store::Put::AlreadyStored { .. }) => old += 1,
                Ok(rtshield_store::Put::Conflict { id, uuid }) => {
                    conflicts += 1;
                    rtshield_text::errln!(
                        "rtshield: error: {from}: {} already holds a different run with UUID {} (run {id}): not pushed (a UUID is the same run only with the same content)",
                        dst.location(),
                        rtshield_text::terminal::value(&uuid)
                    );
                }
                Err(e) => {
                    return Err(anyhow::anyhow!(
                        "{e} ({new} runs pushed before it; pushing again resumes)"
                    ))
                }
            }
        }
    }
    outln!(
        "{new} pushed, {old} already there, {conflicts} in conflict, from {} to {}",
        src.location(),
        dst.location()
    );
    Ok(if conflicts > 0 { 1 } else { 0 })
}

/// Write `bytes` to `path` (`runs export -o`) through the path layer.
fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    rtshield_safefs::write_file(path, bytes, DirPolicy::Strict)
        .map_err(|e| rtshield_run::refusal(e.for_option("-o")))
}
