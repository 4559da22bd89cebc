//! Tasks as `/proc` shows them (`rtshield_sys::task`), and why the kernel
//! refused to move one.

use rtshield_sys::TaskInfo;

/// Why the kernel refused to move task `t`, in words.
pub(crate) fn refusal_reason(t: &TaskInfo, errno: Option<i32>) -> String {
    let e = errno.map_or("error".to_string(), |c| {
        crate::kernel::errno_name(c).to_string()
    });
    if t.no_setaffinity {
        format!("{e}: per-CPU kernel thread (PF_NO_SETAFFINITY), bound to its CPU by the kernel")
    } else if t.kthread {
        format!("{e}: kernel thread the kernel keeps where it is")
    } else {
        format!("{e}: refused by the kernel")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_in_words() {
        let mut t = TaskInfo {
            kthread: true,
            no_setaffinity: true,
            ..Default::default()
        };
        assert!(refusal_reason(&t, Some(libc::EINVAL)).starts_with("EINVAL: per-CPU kernel thread"));
        t.no_setaffinity = false;
        assert_eq!(
            refusal_reason(&t, None),
            "error: kernel thread the kernel keeps where it is"
        );
        t.kthread = false;
        assert_eq!(
            refusal_reason(&t, Some(libc::EPERM)),
            "EPERM: refused by the kernel"
        );
    }
}
