//! The one way rtshield writes files.
//!
//! rtshield runs as root and writes into directories that other users may
//! control (a shared `/tmp`, a lab's result share). Every result, report,
//! checkpoint and state file is therefore written through a [`SafeDir`]:
//!
//! - the directory is opened once (`O_DIRECTORY|O_NOFOLLOW`) and every later
//!   operation is relative to that descriptor, so renaming or replacing the
//!   path afterwards cannot redirect a write;
//! - a directory owned by another user, or group/world-writable without the
//!   sticky bit, is refused unless the caller explicitly allows it;
//! - a file is written to a temporary name that nobody can predict, created
//!   with `O_CREAT|O_EXCL|O_NOFOLLOW`, fsynced, `renameat`ed over the final
//!   name and the directory is fsynced: readers see the old file or the new
//!   one, never half of one, and a planted symlink is never followed;
//! - names are single path components: `a/b`, `..` and NUL are refused.
//!
//! Its one job: be the layer every crate that writes a file (or reads a
//! file a user named) goes through. What it may not do: know the kernel
//! (that is `rtshield-sys`) or any file format (it moves bytes; the
//! callers encode them). Split by concern: [`SafeDir`] and its checks (`dir`), atomic
//! writes and removal (`file`), bounded reads (`read`), paths given by the
//! user (`paths`), and the error every operation returns (`error`).

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod ancestors;
mod dir;
mod error;
mod file;
mod input;
mod paths;
mod read;
mod resolve;
mod temp;
mod trust;

pub use dir::{DirPolicy, Entry, SafeDir};
pub use error::{check_name, Result, SafeError};
pub use file::FileId;
pub use input::{read_trusted_input, InputTrust, TrustedInput};
pub use paths::{file_parts, open_file_dir, output_dir, split_file_path, temp_target, write_file};
pub use read::{read_input, read_input_public, INPUT_LIMIT};
pub use temp::{reap_dead, temp_parents, PrivateDir, TempParents, OWNER_FILE};
pub use trust::trusted_path;

#[cfg(test)]
mod layer_tests;
#[cfg(test)]
mod round5a_tests;
#[cfg(test)]
mod tests;
