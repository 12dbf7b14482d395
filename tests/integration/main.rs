//! Integration tests: the real binary against a real heartbeat receiver on 127.0.0.1.

mod harness;

mod corpus;
mod dry_run;
mod environment;
mod exit_status;
mod history;
mod logging;
mod options;
mod output;
mod ping;
mod properties;
mod report;
mod retries;
mod secrets;
mod state;
#[cfg(feature = "postgres")]
mod store_postgres;
#[cfg(feature = "redis")]
mod store_redis;
mod supervise;
mod tls;
mod url;
