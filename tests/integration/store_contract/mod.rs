//! The store contract: what every state store promises, written once and run against the
//! file store, PostgreSQL (`--features postgres`) and Redis (`--features redis`).
//!
//! A [`Backend`] makes a fresh store for one test and says how a host reaches it; a
//! `LeaseBackend` (a server store, whose holds are leases the server ends) also hands out
//! the store itself, through the `Store` trait, and can make leases run out or cut
//! connections. `runs.rs` holds the cases every store passes, run through the binary;
//! `leases.rs` those of server stores run through the binary, `store.rs` those run through
//! the trait. [`contract!`] stamps out one `#[test]` per case for a backend, so each shows
//! by name: `store_contract::redis::a_dead_holder_never_blocks`.
//!
//! The file store is reached through the binary only: the crate does not export it, so the
//! trait-level cases run against the server stores (the file store's own are its unit tests
//! in src/state/file.rs), and it has no lease to lapse. What only one store does stays in
//! store_postgres*.rs and store_redis*.rs.

#[cfg(any(feature = "postgres", feature = "redis"))]
mod leases;
mod runs;
#[cfg(any(feature = "postgres", feature = "redis"))]
mod store;

use std::path::{Path, PathBuf};

use crate::harness::{Crontap, Output, Receiver};

#[cfg(any(feature = "postgres", feature = "redis"))]
pub(crate) use leases::assert_refused;
#[cfg(any(feature = "postgres", feature = "redis"))]
pub(crate) use server::{LEASE, LeaseBackend};

/// One store, fresh for one test, and how a host uses it.
pub(crate) trait Backend: Sized {
    /// A store of its own for the test `name`.
    fn new(name: &str) -> Self;
    /// The state directory of host `i` of a test whose files are under `dir` (the file
    /// store's hosts share one: it is the store).
    fn state_dir(&self, dir: &Path, i: usize) -> PathBuf;
    /// Points `crontap` at the store (a server's URL goes in the environment: on the command
    /// line, its password would be warned about).
    fn attach(&self, crontap: &mut Crontap);
    /// Options every run of a lease test adds (`--state-lease 3s` for a server).
    fn lease_args(&self) -> &'static [&'static str];
    /// What must never be printed: the server's password.
    fn secret(&self) -> Option<&'static str>;
    /// A key's record as `status|owner`, "" when there is none.
    fn key_row(&self, key: &str) -> String;
    /// Panics unless nothing holds `job`'s `--no-overlap` lock any more.
    fn assert_lock_free(&self, job: &str);
}

/// crontap-run as host `i`: its state directory, the store, reporting to `receiver`.
fn host<B: Backend>(b: &B, receiver: &Receiver, dir: &Path, i: usize) -> Crontap {
    let mut crontap = Crontap::with_url(&receiver.url());
    crontap.arg("--state-dir").arg(b.state_dir(dir, i));
    b.attach(&mut crontap);
    crontap
}

/// Runs to completion; fails if the store's secret was printed.
fn run<B: Backend>(b: &B, crontap: &mut Crontap) -> Output {
    let out = crontap.run();
    assert_no_secret(b, &out.stdout);
    assert_no_secret(b, &out.stderr);
    out
}

fn assert_no_secret<B: Backend>(b: &B, text: &str) {
    if let Some(secret) = b.secret() {
        assert!(
            !text.contains(secret),
            "the store's password leaked:\n{text}"
        );
    }
}

/// One `#[test]` per case for a backend: `every` cases hold for every store, `lease` cases
/// for server stores (through the binary and through the trait).
macro_rules! contract {
    ($backend:ty; every: [$($every:ident),* $(,)?] $(; lease: [$($lease:ident),* $(,)?])?) => {
        $(
            #[test]
            fn $every() {
                let b = <$backend as $crate::store_contract::Backend>::new(stringify!($every));
                $crate::store_contract::cases::$every(&b);
            }
        )*
        $($(
            #[test]
            fn $lease() {
                let b = <$backend as $crate::store_contract::Backend>::new(stringify!($lease));
                $crate::store_contract::cases::$lease(&b);
            }
        )*)?
    };
}

/// Every case, by name, for [`contract!`].
mod cases {
    #[cfg(any(feature = "postgres", feature = "redis"))]
    pub(crate) use super::leases::*;
    pub(crate) use super::runs::*;
    #[cfg(any(feature = "postgres", feature = "redis"))]
    pub(crate) use super::store::*;
}

/// Stamps out the whole contract for a server store.
#[cfg(any(feature = "postgres", feature = "redis"))]
macro_rules! server_contract {
    ($backend:ty) => {
        contract!($backend;
            every: [
                ten_hosts_with_one_once_per_key_run_the_command_once,
                ten_hosts_with_no_overlap_run_one_at_a_time,
                fencing_tokens_grow_with_every_run_of_a_job,
                a_sigkilled_holder_takes_its_job_with_it_and_never_blocks,
            ];
            lease: [
                a_job_that_outlives_its_lease_keeps_its_lock_and_key,
                a_stale_holder_cannot_complete_over_the_next_holder,
                an_unreachable_store_is_refused_and_reported,
                a_holder_cut_off_from_the_server_stops_before_another_host_starts,
                the_store_survives_kills_anywhere,
                a_state_directory_others_can_write_is_refused_with_a_server_store_too,
                a_key_is_held_then_done_or_free_again,
                a_look_finds_what_a_claim_would_and_takes_nothing,
                fencing_tokens_grow_with_every_claim_of_a_job,
                a_dead_holder_never_blocks,
                a_holder_whose_lease_was_taken_over_changes_nothing,
                a_lease_that_expired_untaken_is_won_back,
                a_status_from_a_newer_version_blocks_nothing,
                a_dropped_connection_is_made_again,
            ]
        );
    };
}

mod file {
    contract!(super::FileBackend;
        every: [
            ten_hosts_with_one_once_per_key_run_the_command_once,
            ten_hosts_with_no_overlap_run_one_at_a_time,
            fencing_tokens_grow_with_every_run_of_a_job,
            a_sigkilled_holder_takes_its_job_with_it_and_never_blocks,
        ]
    );
}

#[cfg(feature = "postgres")]
mod postgres {
    server_contract!(crate::store_postgres::Postgres);
}

#[cfg(feature = "redis")]
mod redis {
    server_contract!(crate::store_redis::Redis);
}

/// The file store: a state directory of the test's own, which every host shares.
pub(crate) struct FileBackend(tempfile::TempDir);

impl Backend for FileBackend {
    fn new(_: &str) -> Self {
        FileBackend(tempfile::tempdir().unwrap())
    }

    fn state_dir(&self, _: &Path, _: usize) -> PathBuf {
        self.0.path().join("state")
    }

    fn attach(&self, _: &mut Crontap) {}

    fn lease_args(&self) -> &'static [&'static str] {
        &[]
    }

    fn secret(&self) -> Option<&'static str> {
        None
    }

    fn key_row(&self, key: &str) -> String {
        let name = crontap_run::files::layout::key_record(key);
        let path = self.0.path().join("state/keys").join(name);
        let Ok(text) = std::fs::read_to_string(path) else {
            return String::new();
        };
        let record: serde_json::Value = serde_json::from_str(&text).unwrap();
        let field = |name: &str| record[name].as_str().unwrap().to_owned();
        format!("{}|{}", field("status"), field("owner"))
    }

    fn assert_lock_free(&self, job: &str) {
        use nix::fcntl::{Flock, FlockArg};
        let path = self
            .0
            .path()
            .join("state/locks")
            .join(format!("{job}.lock"));
        let file = std::fs::File::open(&path).unwrap();
        assert!(
            Flock::lock(file, FlockArg::LockExclusiveNonblock).is_ok(),
            "{} is still locked",
            path.display()
        );
    }
}

#[cfg(any(feature = "postgres", feature = "redis"))]
mod server {
    use std::time::Duration;

    use crontap_run::state::{Store, Target};

    use super::Backend;

    /// The lease the trait-level cases open server stores with.
    pub(crate) const LEASE: Duration = Duration::from_secs(60);

    /// A server store: its holds are leases that the server ends.
    pub(crate) trait LeaseBackend: Backend {
        /// The words of every error a holder whose lease was taken over gets.
        const TAKEN_OVER: &'static str;
        /// The store as one host opens it, leases of [`LEASE`].
        fn open(&self) -> Box<dyn Store>;
        /// The store's URL, password included.
        fn url(&self) -> String;
        /// Its URL through a proxy listening on `port` on 127.0.0.1.
        fn url_via(&self, port: u16) -> String;
        /// The server's port.
        fn port(&self) -> u16;
        /// Every running hold's lease runs out now, as if its holder had stopped renewing.
        fn lapse(&self);
        /// Closes every connection the stores made; how many it closed.
        fn cut_connections(&self) -> usize;
        /// What the server keeps for `target`, as text to compare, `None` when nothing.
        fn record(&self, target: &Target) -> Option<String>;
        /// Writes `status` into a key's record, as a newer crontap-run might.
        fn set_status(&self, key: &str, status: &str);
        /// How long until the server lets go of `target`'s record by itself.
        fn expires_in(&self, target: &Target) -> Duration;
        /// The error a run prints when its result cannot be recorded because `key` was taken
        /// over, after "cannot record the run's result in the state store: ".
        fn taken_over(key: &str) -> String;
        /// A URL with nothing listening at `port`, how errors show it, and why it is refused.
        fn down(port: u16) -> (String, String, &'static str);
    }
}
