# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_rtshield_global_optspecs
    string join \n sysroot= h/help V/version
end

function __fish_rtshield_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_rtshield_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_rtshield_using_subcommand
    set -l cmd (__fish_rtshield_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c rtshield -n "__fish_rtshield_needs_command" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_needs_command" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_needs_command" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "demo" -d 'Measure on the last CPU for ~10 s with a CPU load on the others; the main job on a built-in example'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "measure" -d 'Measure wake-up latency of periodic real-time threads (cyclictest-like)'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "run" -d 'Run a systress configuration file: timer threads, load programs, statistics'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "sysinfo" -d 'Describe the system: kernel, preemption model, HZ, timers, isolation, cgroups, RT limits'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "partition" -d 'Shield CPUs: create, undo, inspect cpuset partitions (cgroup v1 and v2)'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "partrt" -d 'partrt\'s command line (`partrt [-r NAME] [-n NAME] create|undo|run|move|list …`) for scripts written for partrt; also what rtshield does when started as `partrt`'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "audit" -d 'What can still disturb a CPU, and how to fix it'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "stat" -d 'vmstat/pidstat-like sampling: interrupts, context switches, run queue'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "report" -d 'Plots and tables from one or more result files'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "export" -d 'A result in a format CI systems read: cyclictest-json, junit, openmetrics, kcidb'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "noise" -d 'OS noise on busy-polling CPUs (oslat/osnoise-like): every gap in a spinning thread\'s clock reads; causes with --trace'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "campaign" -d 'Run a matrix of measurements (isolation x load x settings), store every run, write one report'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "runs" -d 'The results store: list, show, compare, import, export and report stored runs'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "scenario" -d 'Run a load-balancing scenario (lollobrigida format) on the real kernel'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "simulate" -d 'Simulate a scenario under the linux26, ule or ARTiS balancers'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "__measure" -d 'Internal: one measure request as JSON on stdin (a campaign\'s cell; started by campaign, not by users)'
complete -c rtshield -n "__fish_rtshield_needs_command" -f -a "__load" -d 'Internal: the worker process of a built-in load (started by measure/run, not by users)'
complete -c rtshield -n "__fish_rtshield_using_subcommand demo" -l duration -d 'How long to measure' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand demo" -l out -d 'Where to write the results' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand demo" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand demo" -s q -l quiet -d 'No live display, only the final summary'
complete -c rtshield -n "__fish_rtshield_using_subcommand demo" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand demo" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l cpus -d 'CPUs to measure on, one thread each: `1`, `2-3`, `0,2-3` or a hex mask `0x8` [default: the last online CPU]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l period -d 'Period of each measuring thread' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l prio -d 'Real-time priority (1..99) for fifo/rr' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l policy -d 'Scheduling policy; fifo/rr fall back to other (and say so) when refused' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l duration -d 'How long to measure (`3s`, `1min`, `1h`); without it (and without --samples) until Ctrl-C' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l samples -d 'Stop each thread after N samples' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l mode -d 'nanosleep (absolute clock_nanosleep), posix-timer (timer_create + signal) or interval (time between wake-ups)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l timer -d 'What wakes the thread in interval mode: nanosleep (clock_nanosleep, the default) or posix (the signals of a periodic timer_create timer, as the torture article measures)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l histo-size -d 'Largest latency kept in the histogram; above it samples count as overflow (still in min/max/avg and percentiles) [default: 1000us; in interval mode at least twice the period]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l resolution -d 'Histogram and display unit: us or ns' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l stats-period -d 'Refresh of the live table' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l out -d 'Output directory [default: ./rtshield-results/<UTC timestamp>/]' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l json -d 'Also write results.json to FILE' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l json-format -d 'Format of the --json file: rtshield (results.json) or cyclictest (the keys of `cyclictest --json`)' -r -f -a "rtshield\t'results.json'
cyclictest\t'The keys of `cyclictest --json` 2.x'"
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l metrics-file -d 'Rewrite FILE atomically every stats period with the latency so far, in Prometheus text format (node_exporter\'s textfile collector)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l max-latency -d 'Exit with status 3 when any thread\'s maximum exceeds DUR (for CI)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l load -d 'Built-in load to run beside the measurement: cpu, memory, io, syscall, fork, net, hell, timers, syncio, or net:peer=ADDR (ICMP flood of another machine; root)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l load-cpus -d 'CPUs for the load, one worker per CPU [default: every online CPU not measured]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l partition-parent -d 'With --partition: the rt/nrt sets under this parent cgroup (as `partition create --parent`)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l label -d 'Label of the run in reports [default: the output directory name]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l tag -d 'Tag the run (repeatable): stored in results.json and in the results store, e.g. `--tag board=pi3-a`' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l store -d 'The results store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l trace-on -d 'Explain every wake-up later than DUR (1us..1s) from kernel trace events: spikes.json and spikes.txt in the output directory (root)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l trace-buffer-kb -d 'Per-CPU trace buffer in KiB, 1..1048576 [default: sized from the period, at least 256]; each explained spike reads all of it' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l force-unsafe-dir -d 'Write into --out (or next to --json) even if it is owned by another user or writable by others without the sticky bit'
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -s q -l quiet -d 'No live display, only the final summary'
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l no-memlock -d 'Do not lock memory (mlockall)'
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l no-dma-latency -d 'Do not hold /dev/cpu_dma_latency at 0 during the run'
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l partition -d 'Measure inside a partition (cgroup v1): each measuring thread joins the `rt` cpuset, the process (main thread, built-in load) the `nrt` one; found as `run`\'s `cgroup rt|nrt` is'
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l no-store -d 'Do not add the run to the results store (the files are written as always)'
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l trace-stop -d 'With --trace-on: stop tracing and the run at the first such wake-up and keep the trace (trace.txt), like cyclictest -b'
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -l split -d 'Split every wake-up into timer IRQ latency and thread latency (trace events; root): two more histograms per thread in every result file'
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rtshield -n "__fish_rtshield_using_subcommand measure" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -l out -d 'Output directory [default: ./rtshield-results/<config name>-<UTC timestamp>/]; DIR-1, DIR-2... with stats.rotate' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -l duration -d 'Measure this long, whatever lifetime.duration says (`30s`, `10min`, `1d`)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -l label -d 'Label of the run in reports [default: the output directory name]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -l resume -d 'Continue the run interrupted in DIR (kill -9, power cut) from its last checkpoint: same configuration, the time left, figures merged, the gap a `down` phase of the timeline' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -l metrics-file -d 'Rewrite FILE atomically every stats period with the latency so far, in Prometheus text format (node_exporter\'s textfile collector)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -l max-latency -d 'Exit status 3 when any thread\'s maximum latency exceeds DUR (CI gate, as `measure --max-latency`); the limit and the verdict are recorded in results.json' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -l tag -d 'Tag the run (repeatable): stored in results.json and in the results store, e.g. `--tag board=pi3-a`' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -l store -d 'The results store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -l check -d 'Only check the file and print the effective settings (defaults filled in); start nothing'
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -l force-unsafe-dir -d 'Write into --out even if it is owned by another user or writable by others without the sticky bit; as root, also take a CONFIG another user could change (refused otherwise: it chooses what root runs)'
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -l fold-cpus -d 'Map CPUs this machine does not have onto its online CPUs (cpu % count), to try a configuration written for a bigger machine'
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -s q -l quiet -d 'No live display, only the final summary'
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -l keys -d 'Print the reference of every configuration key (Markdown) and exit'
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -l no-store -d 'Do not add the run to the results store (the files are written as always)'
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand run" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand sysinfo" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand sysinfo" -l json -d 'Print JSON instead of text'
complete -c rtshield -n "__fish_rtshield_using_subcommand sysinfo" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand sysinfo" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and not __fish_seen_subcommand_from create undo status list run move" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and not __fish_seen_subcommand_from create undo status list run move" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and not __fish_seen_subcommand_from create undo status list run move" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and not __fish_seen_subcommand_from create undo status list run move" -f -a "create" -d 'Create the rt partition with CPUS and nrt with the rest; move tasks, IRQs, workqueues off rt'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and not __fish_seen_subcommand_from create undo status list run move" -f -a "undo" -d 'Put back exactly what create changed (idempotent; works after an interrupted create)'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and not __fish_seen_subcommand_from create undo status list run move" -f -a "status" -d 'Partitions, their CPUs and tasks'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and not __fish_seen_subcommand_from create undo status list run move" -f -a "list" -d 'Partitions rtshield manages (one line each)'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and not __fish_seen_subcommand_from create undo status list run move" -f -a "run" -d 'Start a command inside a partition: `partition run rt --fifo 80 -- ./app`'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and not __fish_seen_subcommand_from create undo status list run move" -f -a "move" -d 'Move processes (all their threads) into a partition: `move rt PID…` or `move PID… rt` (both orders are accepted)'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from create" -l parent -d 'Partition this cgroup (path below the cpuset mount) instead of the whole machine; then IRQs, workqueues and sysctls are left alone unless --with lists them' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from create" -l skip -d 'Knobs to leave alone: irq, workqueue, sysctl, rt-throttle (comma-separated)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from create" -l with -d 'With --parent: machine-wide knobs to tune anyway (irq, workqueue, sysctl)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from create" -l rt-throttle -d '`off` sets sched_rt_runtime_us=-1 (no RT throttling; restored by undo)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from create" -l profile -d 'Whose sysctl values to write: default (rtshield\'s), partrt, tuned (cpu-partitioning). See docs/manual/partition.md for the table' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from create" -l rt-name -d 'Name the rt cpuset\'s directory NAME (partrt\'s `-r NAME`; default rt)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from create" -l nrt-name -d 'Name the nrt cpuset\'s directory NAME (partrt\'s `-n NAME`; default nrt)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from create" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from create" -l move-init -d 'Move PID 1 (init) into nrt too, as partrt does (default: it stays in the root group)'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from create" -l dry-run -d 'Print every write it would make, change nothing'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from create" -l json -d 'Print the outcome (every write, refusals, advice) as JSON'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from create" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from create" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from undo" -l parent -d 'The cgroup that was partitioned (as given to create --parent)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from undo" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from undo" -l dry-run -d 'Print what would be written, change nothing'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from undo" -l json -d 'Print JSON instead of text'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from undo" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from undo" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from status" -l parent -d 'The cgroup that was partitioned (as given to create --parent)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from status" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from status" -l json -d 'Print JSON instead of text'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from status" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from list" -l profile -d '`partrt`: partrt\'s format, `Name:rt CPUs: 3` per cpuset (for scripts written for partrt)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from list" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from list" -l json -d 'Print JSON instead of text'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from run" -l parent -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from run" -l fifo -d 'Run it SCHED_FIFO at this priority (1-99)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from run" -l rr -d 'Run it SCHED_RR at this priority (1-99)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from run" -s c -l cpus -d 'Pin it to these CPUs of the partition (a list or a partrt hex mask 0x8; partrt\'s `run -c`)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from run" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from run" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from run" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from move" -l parent -d 'The partitioned cgroup: only processes inside it (or below) are moved' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from move" -s c -l cpus -d 'Then pin them to these CPUs of the partition (a list or a partrt hex mask; partrt\'s `move -c`)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from move" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from move" -l force -d 'Move PID 1 or a kernel thread too (still only inside --parent\'s subtree)'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from move" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand partition; and __fish_seen_subcommand_from move" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand partrt" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand audit" -l watch -d 'Count interrupts, IPIs, softirqs and context switches over this window (`10s`, `500ms`); `0s` uses the counts since boot' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand audit" -l period -d 'With --follow: how often to look (`1s`, `200ms`; 100 ms to 1 h)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand audit" -l parent -d 'With --follow: the `--parent` of the partition shielding CPUS (default: the partition covering them, if any)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand audit" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand audit" -l json -d 'Print JSON instead of text'
complete -c rtshield -n "__fish_rtshield_using_subcommand audit" -l follow -d 'Print every change to what shields CPUS (IRQ affinities, rt tasks, cpusets, workqueues, knobs, governors, idle states, hotplug) as it is seen, until Ctrl-C or SIGTERM (exit 0). The events `measure` and `run` record in results.json'
complete -c rtshield -n "__fish_rtshield_using_subcommand audit" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand audit" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand stat" -l interval -d 'Time between samples (`1s`, `200ms`)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand stat" -l count -d 'Stop after N samples (default: until interrupted)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand stat" -l pids -d 'Only these processes\' threads (comma-separated PIDs)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand stat" -l top -d 'How many threads to list per sample, busiest first (0 = every one that switched)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand stat" -l record -d 'Record the mean of every figure over --duration into FILE (schema rtshield.stat/1), for --compare' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand stat" -l duration -d 'How long to record (with --record): `60s`, `5min`' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand stat" -l label -d 'Name of the recording in comparisons [default: kernel release and preemption model]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand stat" -l compare -d 'Compare two recordings: a table of each figure in A and B and the ratio B/A' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand stat" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand stat" -l json -d 'One JSON object per sample and line (JSON Lines)'
complete -c rtshield -n "__fish_rtshield_using_subcommand stat" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand stat" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand report" -s o -l output -d 'Output directory: created, or an earlier report\'s directory, whose files are replaced (those the new report does not write are removed). A directory holding other files, a symbolic link, or a directory others can write to (see --force-unsafe-dir) is refused' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand report" -l name -d 'Labels for the results, in order (default: the run\'s label, directory or file name)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand report" -l format -d 'Outputs to write (comma-separated; default: all)' -r -f -a "png\t'latency.png and timeline PNGs'
svg\t'latency.svg'
html\t'report.html (self-contained, interactive)'
md\t'summary.md'
csv\t'summary.csv'
gnuplot\t'plot.gp and its data files'"
complete -c rtshield -n "__fish_rtshield_using_subcommand report" -l title -d 'Title of the plots and the report' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand report" -l x-max -d 'End of the latency axis, in µs (default: a little past the largest latency inside the histograms). Samples past it are counted by the marker at the right edge' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand report" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand report" -l force-unsafe-dir -d 'Write into an existing -o DIR even if it is owned by another user or writable by group/others without the sticky bit (anyone who can write there could redirect files)'
complete -c rtshield -n "__fish_rtshield_using_subcommand report" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rtshield -n "__fish_rtshield_using_subcommand report" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand export" -l format -r -f -a "json\t'results.json itself (rtshield\'s schema), e.g. to copy a noise run\'s'
cyclictest-json\t''
junit\t''
openmetrics\t''
prometheus\t''
kcidb\t''"
complete -c rtshield -n "__fish_rtshield_using_subcommand export" -s o -l output -d 'Output file [default: standard output]; written atomically' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand export" -l max-latency -d 'cyclictest-json, junit, kcidb: judge the run again, a thread whose maximum latency exceeds DUR failing [default: the limit the run recorded (measure --max-latency), if any]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand export" -l build-id -d 'kcidb: the KCIDB id of the build the kernel came from [default: rtshield:<kernel release>]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand export" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand export" -l timestamps -d 'openmetrics: a timestamp (the end of the run) on every sample, for `promtool tsdb create-blocks-from openmetrics` (node_exporter\'s textfile collector refuses timestamps)'
complete -c rtshield -n "__fish_rtshield_using_subcommand export" -l force-unsafe-dir -d 'Write into a directory owned by another user or writable by others'
complete -c rtshield -n "__fish_rtshield_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rtshield -n "__fish_rtshield_using_subcommand export" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l cpus -d 'CPUs to measure, one spinning thread each: `1`, `2-3`, `0,2-3` or a hex mask `0x8`' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l duration -d 'How long to measure (10ms..365d); without it, until Ctrl-C' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l threshold -d 'A gap between two clock reads longer than this is noise (100ns..1s)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l runtime -d 'Spinning time per period (1ms..1h) [default: 900ms with --prio, else the whole period]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l period -d 'Window spacing: the thread sleeps period - runtime of each (1ms..1h) [default: 1s]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l prio -d 'Spin at SCHED_FIFO with this priority (1..99), at most 95 % of each period [default: SCHED_OTHER]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l trace-buffer-kb -d 'Per-CPU trace buffer in KiB, 1..1048576 [default: 2048]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l top -d 'Top offenders shown per CPU (0..100)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l json -d 'Also write results.json (kind `noise`) to FILE (its directory must exist)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l out -d 'Write the result files into DIR (created if needed): results.json, results.csv and histogram.txt (cyclictest -h text of the noise lengths)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l label -d 'A label for reports and the store [default: the --out directory name]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l tag -d 'Tag the run (repeatable): stored in results.json and in the results store, e.g. `--tag board=pi3-a`' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l store -d 'The results store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l trace -d 'Name the cause of every gap from kernel trace events (a private tracefs instance; root)'
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l force-unsafe-dir -d 'Write --json FILE and --out DIR even if their directory is owned by another user or writable by others'
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l no-memlock -d 'Do not lock memory (mlockall)'
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -l no-store -d 'Do not add the run to the results store (the files are written as always)'
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -s q -l quiet -d 'No start line, only the summary'
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand noise" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand campaign" -l store -d 'The results store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand campaign" -l out -d 'Directory for the runs and the report [default: ./rtshield-results/campaign-NAME-<UTC timestamp>/]' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand campaign" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand campaign" -l dry-run -d 'List the runs, their order and the total time; run nothing'
complete -c rtshield -n "__fish_rtshield_using_subcommand campaign" -l resume -d 'Skip the runs of this campaign already in the store'
complete -c rtshield -n "__fish_rtshield_using_subcommand campaign" -l force-unsafe-dir -d 'Write into --out even if other users can write there; as root, also take a campaign FILE another user could change (refused otherwise)'
complete -c rtshield -n "__fish_rtshield_using_subcommand campaign" -s v -l verbose -d 'Show each run\'s own output'
complete -c rtshield -n "__fish_rtshield_using_subcommand campaign" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand campaign" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and not __fish_seen_subcommand_from list push show compare import export report" -l store -d 'The store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and not __fish_seen_subcommand_from list push show compare import export report" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and not __fish_seen_subcommand_from list push show compare import export report" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and not __fish_seen_subcommand_from list push show compare import export report" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and not __fish_seen_subcommand_from list push show compare import export report" -f -a "list" -d 'One line per stored run'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and not __fish_seen_subcommand_from list push show compare import export report" -f -a "push" -d 'Copy the runs of this store (--store) to another (a postgres:// URL or a file); idempotent'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and not __fish_seen_subcommand_from list push show compare import export report" -f -a "show" -d 'Everything stored about one run (by ID or UUID prefix)'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and not __fish_seen_subcommand_from list push show compare import export report" -f -a "compare" -d 'Compare two sets of runs, statistic by statistic, with 95 % confidence intervals'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and not __fish_seen_subcommand_from list push show compare import export report" -f -a "import" -d 'Store result directories, results.json, cyclictest --json or -h files'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and not __fish_seen_subcommand_from list push show compare import export report" -f -a "export" -d 'Write the selected runs as JSON (results.json objects) or CSV (one row per thread)'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and not __fish_seen_subcommand_from list push show compare import export report" -f -a "report" -d '`rtshield report` over the selected runs'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from list" -l where -d 'Only the runs this selector picks' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from list" -l group-by -d 'One row per group of runs with these keys (fields or tags, comma-separated): run count, worst p99.9 and worst maximum' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from list" -l store -d 'The store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from list" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from list" -l json -d 'JSON instead of a table'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from push" -l to -d 'The destination store' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from push" -l where -d 'Only the runs this selector picks' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from push" -l store -d 'The store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from push" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from push" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from push" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from show" -l store -d 'The store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from show" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from show" -l json
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from compare" -l stat -d 'Statistics, comma-separated (p50, p99, p99.9, p99.99, max, or pN)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from compare" -l seed -d 'Seed of the bootstrap (the same seed gives the same intervals)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from compare" -l store -d 'The store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from compare" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from compare" -l json
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from compare" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from compare" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from import" -l store -d 'The store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from import" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from import" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from export" -l format -r -f -a "json\t''
csv\t''"
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from export" -s o -l output -d 'Output file [default: standard output]' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from export" -l store -d 'The store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from export" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from export" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from export" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from report" -s o -l output -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from report" -l title -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from report" -l store -d 'The store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db]' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from report" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from report" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand runs; and __fish_seen_subcommand_from report" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand scenario" -l json -d 'Write the report as JSON (schema rtshield.balance/1) to FILE' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand scenario" -l out -d 'Write DIR/balance.json and DIR/balance.txt' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand scenario" -l timeout -d 'Stop the run after D (e.g. 30s); unfinished tasks are reported as such. Overrides the file\'s `timeout`' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand scenario" -l scale -d 'Multiply every task\'s `loop` by F (e.g. 0.01 for a short demo); sloop, sleep and irq_period are kept' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand scenario" -l loops-per-us -d 'Iterations per microsecond (overrides the file\'s `loops_per_us`; default: one spin step, measured)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand scenario" -l rt-share -d 'Size the work so that every sleeping real-time task takes SHARE of its CPU (0.001..0.999, or `annex`: 10/11, what annex B of the ARTiS thesis assumes): sets loops_per_us from the tasks\' sloop and sleep, and prints it' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand scenario" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand scenario" -l force-unsafe-dir -d 'Write FILE (and --out DIR) even if its directory is owned by another user or writable by others without the sticky bit; as root, also run a scenario file another user could change (refused otherwise)'
complete -c rtshield -n "__fish_rtshield_using_subcommand scenario" -l check -d 'Parse and plan only: show the tasks as they would run (masks trimmed), run nothing'
complete -c rtshield -n "__fish_rtshield_using_subcommand scenario" -l force -d 'Run real-time tasks that never sleep and could take every CPU (a FIFO/RR 99 one on every CPU, or one per CPU): they can starve the machine'
complete -c rtshield -n "__fish_rtshield_using_subcommand scenario" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand scenario" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l cpus -d 'Number of simulated CPUs' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l rt-cpus -d 'ARTiS RT CPUs (list: 1-3, or mask: 0xe). Other balancers only use it to label rows' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l balancer -d 'Balancer: linux26, ule, artis, artis-2005' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l compare -d 'Run several balancers on the same input and seed; one column each (e.g. linux26,ule,artis)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l seed -d 'Seed of the random generator (start jitter, random placement)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l duration -d 'Stop after this much simulated time (default: the scenario\'s `timeout`, else when every task has finished)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l tick -d 'Scheduler tick' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l artis-k -d 'ARTiS K (thesis §3.2.3, 2..100)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l artis-c -d 'ARTiS C: a duration or a number of ticks (`2ticks`)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l mask-len -d 'Length of one interrupt-masking section' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l migration-cost -d 'Delay of a migration through an ARTiS FIFO (IPI, fetch, cache refill)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l lock-cost -d 'Time a locking balancer holds both run-queues (delays wake-ups on both CPUs)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l fifo-cost -d 'Time a CPU spends pushing into or draining an ARTiS FIFO' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l cache-decay -d 'Tasks that ran less than this ago are cache-hot (a busy balancer leaves them)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l loops-per-us -d 'Iterations per µs (overrides the scenario\'s loops_per_us; default 0.1)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l placement -d 'Initial placement: spread, random, first' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l start-jitter -d 'Random start offset of each task, uniform in [0, D)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l json -d 'Write the report(s) as JSON (an array with --compare)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l trace -d 'Write the event trace as CSV (with --compare: one file per balancer, FILE-NAME.csv)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l gantt -d 'Write a Gantt chart (SVG, one row per CPU); one per balancer with --compare' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l max-events -d 'Refuse the run (exit 2) once it needs more than N events (1000..=10^11). The default allows one simulated hour of 128 CPUs running 1000 tasks' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l force-unsafe-dir -d 'Write FILE (and --out DIR) even if its directory is owned by another user or writable by others without the sticky bit'
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -l timing -d 'Print the wall time and events per second to stderr'
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand simulate" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand __measure" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand __measure" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand __measure" -s V -l version -d 'Print version'
complete -c rtshield -n "__fish_rtshield_using_subcommand __load" -l size -d 'Bytes per worker (memory, io)' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand __load" -l dir -d 'Private directory of an io worker (created and removed by the parent)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand __load" -l peer -d 'net: flood this peer (ICMP echo) instead of the loopback' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand __load" -l cpus -d 'exec: CPU affinity of the program' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand __load" -l cgroup -d 'exec: join this cgroup (its cgroup.procs or tasks file) before starting the program' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand __load" -l policy -d 'exec: scheduling policy of the program' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand __load" -l prio -d 'exec: priority of the program' -r
complete -c rtshield -n "__fish_rtshield_using_subcommand __load" -l sysroot -d 'Read and write kernel files (/proc, /sys) below DIR instead of / (for tests on fake trees)' -r -F
complete -c rtshield -n "__fish_rtshield_using_subcommand __load" -s h -l help -d 'Print help'
complete -c rtshield -n "__fish_rtshield_using_subcommand __load" -s V -l version -d 'Print version'
