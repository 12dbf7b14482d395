//! The job's environment: crontap-run's own, less what the job must not see, plus this
//! run's variables. The per-run variables are named here and nowhere else.
//!
//! A per-run variable the caller set (a nested crontap-run, a stale export) never reaches
//! the job: the configuration removes every name in [`PER_RUN`] from the inherited
//! environment, and the job gets only the ones in force for this run, with this run's
//! values.

use std::ffi::OsString;

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
    pub fn environment(
        &self,
        inherited: &[(OsString, OsString)],
        attempt: u32,
    ) -> Vec<(OsString, OsString)> {
        let mut env = inherited.to_vec();
        let mut set = |name: &str, value: String| env.push((name.into(), value.into()));
        set(RUN_ID, self.run_id.clone());
        set(ATTEMPT, attempt.to_string());
        if let Some(key) = &self.key {
            set(IDEMPOTENCY_KEY, key.clone());
        }
        if let Some(token) = self.fencing_token {
            set(FENCING_TOKEN, token.to_string());
        }
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_variables_come_last_and_only_those_in_force() {
        let inherited = vec![("PATH".into(), "/bin".into())];
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
                "CRONTAP_RUN_ID",
                "CRONTAP_ATTEMPT",
                "CRONTAP_FENCING_TOKEN"
            ]
        );
        assert_eq!(env[2].1, "2");
        assert_eq!(env[3].1, "7");
    }
}
