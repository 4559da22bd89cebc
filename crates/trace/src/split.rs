//! Every wake-up split in two: timer IRQ latency and thread latency.

use crate::analyse::{signed_diff, Split, TS_SLACK_NS};
use crate::parse::{Event, Record};
use crate::replay::runs_as;

/// Per wake-up of thread `pid`: `hrtimer_start` by the thread (its sleep),
/// that timer's `hrtimer_expire_entry`, the thread's `sched_waking` (or
/// `sched_wakeup`), then the `sched_switch` to it. Wake-ups whose events
/// are incomplete (buffer overwritten, event not enabled) are skipped.
pub fn split(records: &[Record], pid: u32) -> Vec<Split> {
    let mut s = Splitter::new(pid);
    records.iter().filter_map(|r| s.feed(r)).collect()
}

#[derive(Debug, Clone)]
enum SplitState {
    Idle,
    Armed {
        timer: String,
        expires: u64,
    },
    Fired {
        expires: u64,
        irq: i64,
    },
    Woken {
        expires: u64,
        irq: i64,
        wake: u64,
        by_other: bool,
    },
}

/// [`split`] one record at a time, for a trace read as a stream
/// (`trace_pipe`): the state of a wake-up in progress is kept between
/// calls, so a wake-up cut across two reads is still split.
#[derive(Debug, Clone)]
pub struct Splitter {
    pid: u32,
    st: SplitState,
}

impl Splitter {
    /// A splitter for the wake-ups of thread `pid`, with nothing seen yet.
    pub fn new(pid: u32) -> Splitter {
        Splitter {
            pid,
            st: SplitState::Idle,
        }
    }

    /// The thread this splitter follows.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Feed the next record (in trace order); returns a wake-up when this
    /// record completes one.
    pub fn feed(&mut self, r: &Record) -> Option<Split> {
        use SplitState as St;
        let pid = self.pid;
        // The switch out of idle is not traced on this kernel: the
        // thread's first own event after a wake-up in another task's
        // context (idle's) is its switch-in. A thread woken in its own
        // context (an already expired timer) never slept: not split.
        let mut out = None;
        if let St::Woken {
            expires,
            irq,
            wake,
            by_other: true,
        } = self.st
        {
            if runs_as(r, pid) && !matches!(r.event, Event::SchedSwitch { .. }) {
                out = Some(Split {
                    expected_ns: expires,
                    irq_latency_ns: irq,
                    thread_latency_ns: r.ts_ns.saturating_sub(wake),
                });
                self.st = St::Idle;
            }
        }
        match &r.event {
            Event::HrtimerStart {
                hrtimer,
                function,
                expires_ns: Some(exp),
                ..
            } if r.pid == pid && function == "hrtimer_wakeup" => {
                self.st = St::Armed {
                    timer: hrtimer.clone(),
                    expires: *exp,
                };
            }
            Event::HrtimerExpireEntry {
                hrtimer, now_ns, ..
            } => {
                if let St::Armed { timer, expires } = &self.st {
                    if timer == hrtimer {
                        let at = now_ns.unwrap_or(r.ts_ns);
                        self.st = St::Fired {
                            expires: *expires,
                            irq: signed_diff(at, *expires),
                        };
                    }
                }
            }
            Event::SchedWaking { pid: p, .. } | Event::SchedWakeup { pid: p, .. } if *p == pid => {
                match self.st {
                    St::Fired { expires, irq } => {
                        self.st = St::Woken {
                            expires,
                            irq,
                            wake: r.ts_ns,
                            by_other: r.pid != pid,
                        }
                    }
                    // The kernel does not always record the expiry (seen on
                    // this VM for timers that wake an idle CPU: neither
                    // `local_timer_entry` nor `hrtimer_expire_entry` is in
                    // the buffer, `sched_waking` is). The wake-up, a few µs
                    // later in the same interrupt, stands in for it.
                    St::Armed { expires, .. } if r.ts_ns.saturating_add(TS_SLACK_NS) >= expires => {
                        self.st = St::Woken {
                            expires,
                            irq: signed_diff(r.ts_ns, expires),
                            wake: r.ts_ns,
                            by_other: r.pid != pid,
                        }
                    }
                    _ => {}
                }
            }
            Event::SchedSwitch { next_pid, .. } if *next_pid == pid => {
                if let St::Woken {
                    expires, irq, wake, ..
                } = self.st
                {
                    out = Some(Split {
                        expected_ns: expires,
                        irq_latency_ns: irq,
                        thread_latency_ns: r.ts_ns.saturating_sub(wake),
                    });
                }
                self.st = St::Idle;
            }
            _ => {}
        }
        out
    }
}
