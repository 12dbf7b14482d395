//! Tests that load the machine on purpose: hundreds of runs at once, beside busy loops. They
//! are a test target of their own, which cargo runs after the integration tests rather than
//! beside them, so that the load never starves the tests whose timing matters (a lease
//! renewed every second, a fleet of hosts on the hour).

// The shared harness: these tests use only part of it.
#[allow(dead_code)]
#[path = "../integration/harness.rs"]
mod harness;
// Where the harness starts crontap-run in a test's own namespace (none of these tests does).
#[allow(dead_code)]
#[path = "../integration/namespace.rs"]
mod namespace;

// The state servers, for the fleet tests (`--features postgres,redis`).
#[cfg(feature = "postgres")]
#[allow(dead_code)]
#[path = "../integration/pg_server.rs"]
mod pg_server;
#[cfg(feature = "redis")]
#[allow(dead_code)]
#[path = "../integration/redis_server.rs"]
mod redis_server;

mod every_signal;
#[cfg(any(feature = "postgres", feature = "redis"))]
mod fleet;
mod stop_race;
mod workers;
