//! The one rule for a partition's parent cgroup as a user names it
//! (`partition --parent`, `measure --partition-parent`, `audit --follow
//! --parent`, a campaign's `[partition] parent`): a path below the cpuset
//! hierarchy's mount. rtshield writes task ids into the `tasks` and
//! `cgroup.procs` files found there: a `..` that climbed out of the
//! hierarchy would make those ordinary files anywhere on the machine.

use rtshield_sys::{Hierarchy, Root};
use rtshield_vocab::InputError;

/// What is wrong with `p` as a parent cgroup, before any hierarchy is
/// looked at (`None`: nothing): a `.` or `..` component, a control
/// character. Every option naming a parent checks this at parse time.
pub fn parent_syntax_error(p: &str) -> Option<&'static str> {
    if p.split('/').any(|c| c == "." || c == "..") {
        Some("without `.` or `..`")
    } else if p.chars().any(char::is_control) {
        Some("without control characters")
    } else {
        None
    }
}

/// Whether the root may be named (`measure --partition-parent /` is the
/// whole machine's partition; `partition --parent` and `audit --parent`
/// refuse it: leaving the option out means the root there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootParent {
    /// `''`, `/` and the mount itself name the root.
    Allowed,
    /// Refused, with "leave OPTION out".
    Refused,
}

/// The cgroup directory `given` names below `h`'s mount, checked by the
/// one rule ([`parent_syntax_error`]), the root per `root`, and that it
/// exists when `must_exist`. Every refusal is an [`InputError`] (exit 2)
/// naming `option`, made before anything is read or written.
pub fn parent_dir(
    r: &Root,
    h: &Hierarchy,
    option: &str,
    given: &str,
    root: RootParent,
    must_exist: bool,
) -> Result<String, InputError> {
    let dir = h.resolve(Some(given));
    let why = parent_syntax_error(given).map(str::to_string).or_else(|| {
        (root == RootParent::Refused && dir == h.mount).then(|| {
            format!("not the root itself: leave {option} out to partition the whole machine")
        })
    });
    if let Some(why) = why {
        return Err(InputError::new(format!(
            "{option}: '{}' must name a cgroup below {}, {why}",
            given.escape_debug(),
            h.mount
        )));
    }
    if must_exist && !r.path(&dir).is_dir() {
        return Err(InputError::new(format!(
            "{option}: cgroup {dir} does not exist in the {} hierarchy at {}",
            h.label(),
            h.mount
        )));
    }
    Ok(dir)
}
