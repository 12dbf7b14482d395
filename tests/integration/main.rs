//! Integration tests: the real binary against a real heartbeat receiver on 127.0.0.1.

mod harness;

mod check;
// Steps the wall clock with libfaketime (Debian package faketime).
#[cfg(feature = "external-tests")]
mod clock_step;
mod corpus;
mod deadlines;
mod descriptors;
mod dry_run;
mod empty_settings;
mod ends;
mod environment;
mod exec;
mod exit_status;
mod faults;
pub(crate) mod healthchecks;
mod heartbeat;
mod held_output;
mod history;
mod kill_anywhere;
mod learned_leaks;
mod logging;
mod memory;
mod metrics;
mod metrics_push;
mod namespace;
mod options;
mod outlived;
mod output;
mod period_tz;
#[cfg(feature = "postgres")]
mod pg_server;
mod ping;
mod plan;
mod plan_careless;
mod plan_cron_as_it_is;
mod plan_crontab;
mod planted;
mod program_corpus;
mod properties;
#[cfg(any(feature = "postgres", feature = "redis"))]
mod proxy;
mod quoted_back;
#[cfg(feature = "redis")]
mod redis_server;
mod report;
// Tests that need root: `--features root-tests`, as root.
mod retries;
#[cfg(feature = "root-tests")]
mod root;
mod secrets;
mod simulation;
mod state;
mod state_faults;
mod stopped;
mod store_contract;
#[cfg(feature = "postgres")]
mod store_postgres;
#[cfg(feature = "postgres")]
mod store_postgres_connect;
#[cfg(feature = "redis")]
mod store_redis;
#[cfg(feature = "redis")]
mod store_redis_connect;
mod success_exit;
mod supervise;
mod tls;
mod url;
mod wire;
