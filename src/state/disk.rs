//! Where the state directory is when no option says: the system's for root, the user's
//! otherwise. What is in it is opened by [`crate::files`] only.

use std::ffi::OsString;
use std::path::PathBuf;

/// Why [`default_dir`] found none, for the error of whatever needed one.
pub const NO_DEFAULT_DIR: &str =
    "HOME is not set, so there is no default state directory; use --state-dir";

/// Where state lives when neither `--state-dir` nor `--state-url` says: the system's state
/// directory for root, else the user's (XDG base directories); `None` without a home.
pub fn default_dir(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    default_dir_for(nix::unistd::geteuid().is_root(), env)
}

fn default_dir_for(root: bool, env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if root {
        return Some(PathBuf::from("/var/lib/crontap-run"));
    }
    let absolute = |name: &str| env(name).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(xdg) = absolute("XDG_STATE_HOME") {
        return Some(xdg.join("crontap-run"));
    }
    absolute("HOME").map(|home| home.join(".local/state/crontap-run"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_directories() {
        assert_eq!(
            default_dir_for(true, |_| None).unwrap(),
            PathBuf::from("/var/lib/crontap-run")
        );
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            default_dir_for(
                false,
                env(&[("HOME", "/home/op"), ("XDG_STATE_HOME", "/x/state")])
            )
            .unwrap(),
            PathBuf::from("/x/state/crontap-run")
        );
        assert_eq!(
            default_dir_for(
                false,
                env(&[("HOME", "/home/op"), ("XDG_STATE_HOME", "rel")])
            )
            .unwrap(),
            PathBuf::from("/home/op/.local/state/crontap-run")
        );
        assert!(default_dir_for(false, env(&[])).is_none());
    }
}
