//! The job's environment: crontap-run's own, less what the job must not see, plus this
//! run's variables. The per-run variables are named here and nowhere else.
//!
//! A per-run variable the caller set (a nested crontap-run, a stale export) never reaches
//! the job: the configuration removes every name in [`PER_RUN`] from the inherited
//! environment, and the job gets only the ones in force for this run, with this run's
//! values.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::sync::Arc;

/// A fresh id for this run (a UUID).
pub const RUN_ID: &str = "CRONTAP_RUN_ID";
/// The 1-based attempt number.
pub const ATTEMPT: &str = "CRONTAP_ATTEMPT";
/// The idempotency key in force, for downstream systems that deduplicate.
pub const IDEMPOTENCY_KEY: &str = "CRONTAP_IDEMPOTENCY_KEY";
/// The fencing token of the run's claim, for downstream systems that refuse older holders.
pub const FENCING_TOKEN: &str = "CRONTAP_FENCING_TOKEN";

/// Every per-run variable.
pub const PER_RUN: [&str; 4] = [RUN_ID, ATTEMPT, IDEMPOTENCY_KEY, FENCING_TOKEN];

/// The environment the job inherits: crontap-run's own, in its order, less the variables it
/// must not see. Shared with crontap-run's own record of its environment and filtered where
/// it is read, so that no copy of it is made before the spawn.
pub struct Inherited {
    all: Arc<[(OsString, OsString)]>,
    removed: Vec<String>,
}

impl Inherited {
    /// The variables of `all` but those named in `removed`.
    pub fn new(all: Arc<[(OsString, OsString)]>, removed: Vec<String>) -> Inherited {
        Inherited { all, removed }
    }

    /// The inherited variables, in their order.
    pub fn iter(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        let kept = |name: &OsStr| !self.removed.iter().any(|r| name == r.as_str());
        let pairs = self.all.iter().map(|(n, v)| (n.as_os_str(), v.as_os_str()));
        pairs.filter(move |(n, _)| kept(n))
    }
}

/// This run's values of the per-run variables.
#[derive(Debug, Clone)]
pub struct PerRun {
    pub run_id: String,
    pub key: Option<String>,
    pub fencing_token: Option<u64>,
}

impl PerRun {
    /// The job's whole environment for attempt `attempt`: `inherited` in its order (the
    /// per-run names already removed), then the variables in force, as `env NAME=value`
    /// puts a changed variable last.
    /// Borrowed where it can be: the spawn copies each variable once, into the child's
    /// `environ`.
    pub fn environment<'a>(
        &'a self,
        inherited: &'a Inherited,
        attempt: u32,
    ) -> Vec<(&'a OsStr, Cow<'a, OsStr>)> {
        let mut env: Vec<(&OsStr, Cow<OsStr>)> = Vec::with_capacity(inherited.all.len() + 4);
        env.extend(inherited.iter().map(|(n, v)| (n, Cow::Borrowed(v))));
        let mut set = |name: &'static str, value: Cow<'a, OsStr>| env.push((name.as_ref(), value));
        set(RUN_ID, Cow::Borrowed(self.run_id.as_ref()));
        set(ATTEMPT, Cow::Owned(attempt.to_string().into()));
        if let Some(key) = &self.key {
            set(IDEMPOTENCY_KEY, Cow::Borrowed(key.as_ref()));
        }
        if let Some(token) = self.fencing_token {
            set(FENCING_TOKEN, Cow::Owned(token.to_string().into()));
        }
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_variables_come_last_and_only_those_in_force() {
        let all: Vec<(OsString, OsString)> = vec![
            ("PATH".into(), "/bin".into()),
            (RUN_ID.into(), "stale".into()),
            ("HOME".into(), "/root".into()),
        ];
        let inherited = Inherited::new(all.into(), vec![RUN_ID.to_owned()]);
        let run = PerRun {
            run_id: "r".into(),
            key: None,
            fencing_token: Some(7),
        };
        let env = run.environment(&inherited, 2);
        let names: Vec<_> = env.iter().map(|(n, _)| n.to_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "PATH",
                "HOME",
                "CRONTAP_RUN_ID",
                "CRONTAP_ATTEMPT",
                "CRONTAP_FENCING_TOKEN"
            ]
        );
        assert_eq!(env[2].1, OsStr::new("r"));
        assert_eq!(env[3].1, OsStr::new("2"));
        assert_eq!(env[4].1, OsStr::new("7"));
    }
}
