//! Errors shared by every crate.

/// Bad input from the user (a command-line value, a config or scenario file).
///
/// The binary maps this error to exit status 2, as clap does for usage
/// errors, so scripts can tell "you asked for something wrong" from "the
/// system failed". The message should already name the file, line and
/// column when there is one (`FILE:LINE:COL: message`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(
    /// The whole message, position first when there is one.
    pub String,
);

impl InputError {
    /// An error with message `msg`, for input that has no file position
    /// (an option's value: say the option's name in `msg`).
    pub fn new(msg: impl Into<String>) -> Self {
        InputError(msg.into())
    }

    /// `FILE:LINE:COL: message`, the format editors and compilers use.
    pub fn at(file: &str, line: usize, col: usize, msg: impl std::fmt::Display) -> Self {
        InputError(format!("{file}:{line}:{col}: {msg}"))
    }
}
