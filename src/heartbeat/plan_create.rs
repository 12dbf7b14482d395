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
    let mut made = [0usize; 2];
    for planned in &rewritten.planned {
        let Some(file) = &planned.url_file else {
            continue;
        };
        let wanted = Wanted::planned(planned);
        let outcome = create::create(&config.api, &wanted, Path::new(file))
            .with_context(|| format!("heartbeat {}", planned.name))?;
        made[usize::from(outcome == Outcome::Existed)] += 1;
    }
    say(&format!(
        "{} heartbeats created or their URLs written, {} already in place",
        made[0], made[1]
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
