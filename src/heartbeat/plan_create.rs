//! `plan --crontab FILE --create`: every job of the crontab wrapped as `plan` wraps it, its
//! heartbeat created with the plan's numbers and its URL file `DIR/NAME.url` written
//! ([`create::create`]), then the wrapped crontab printed on stdout, what was created said
//! on stderr. A job whose URL file holds a URL already is left as it is, so a second run
//! creates nothing.

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::heartbeat::api::Api;
use crate::heartbeat::create::{self, Outcome};
use crate::heartbeat::{Wanted, say};
use crate::plan::{self, PlanConfig};

/// `plan --create`: the plan, and the API to create the heartbeats on.
pub struct PlanCreate {
    pub plan: PlanConfig,
    pub api: Api,
}

/// Runs `plan --crontab FILE --create`.
pub fn run(config: &PlanCreate) -> Result<ExitCode> {
    let rewritten = plan::rewrite_crontab(&config.plan)?;
    // Created, in place already, an existing check's URL written.
    let mut made = [0usize; 3];
    for planned in &rewritten.planned {
        let Some(file) = &planned.url_file else {
            continue;
        };
        let wanted = Wanted::planned(planned);
        let outcome = create::create(&config.api, &wanted, Path::new(file))
            .with_context(|| format!("heartbeat {}", planned.name))?;
        made[match outcome {
            Outcome::Created => 0,
            Outcome::Existed => 1,
            Outcome::Found | Outcome::Replaced => 2,
        }] += 1;
    }
    say(&format!(
        "{} heartbeats created, {} in place already, {} existing ones written to their URL files",
        made[0], made[1], made[2]
    ));
    let mut out = io::stdout().lock();
    let written = plan::write_rewritten(&mut out, &rewritten, config.plan.json);
    match written.and_then(|()| out.flush()) {
        Err(err) if err.kind() != io::ErrorKind::BrokenPipe => {
            Err(err).context("cannot print the crontab")
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}
