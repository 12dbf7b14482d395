//! How a wrapped line names crontap-run, and the longest command Debian's cron takes
//! (measured with its `crontab -n`: 998 bytes pass, 999 are "command too long").

use std::path::PathBuf;
use std::time::Duration;

use super::*;
use crate::plan::{Input, PlanConfig};

#[test]
fn crontap_run_by_its_path_unless_the_crontabs_path_finds_it() {
    let bin = Path::new("/opt/ct/crontap-run");
    assert_eq!(bin_word(bin, None).unwrap(), "/opt/ct/crontap-run");
    assert_eq!(
        bin_word(bin, Some("/usr/bin:/bin")).unwrap(),
        "/opt/ct/crontap-run"
    );
    assert_eq!(
        bin_word(bin, Some("/usr/bin:/opt/ct:/bin")).unwrap(),
        "crontap-run"
    );
    // Relative entries name no directory known here; `$PATH` is not expanded by cron.
    assert_eq!(
        bin_word(bin, Some("ct:$PATH:opt/ct")).unwrap(),
        "/opt/ct/crontap-run"
    );
    // Another file name is never found by the bare name.
    let renamed = Path::new("/opt/ct/crontap-run-1.2");
    assert_eq!(
        bin_word(renamed, Some("/opt/ct")).unwrap(),
        "/opt/ct/crontap-run-1.2"
    );
    assert_eq!(
        bin_word(Path::new("/opt/c t/crontap-run"), None).unwrap(),
        "'/opt/c t/crontap-run'"
    );
}

/// `text` wrapped with `bin`, or the error.
fn wrap(text: &str, bin: &str) -> Result<Rewritten> {
    let config = PlanConfig {
        input: Input::Crontab {
            path: None,
            system: false,
            zone: None,
            url_dir: PathBuf::from("/u"),
            bin: PathBuf::from(bin),
        },
        state_dir: None,
        json: false,
    };
    let options = Options {
        system: false,
        zone: Some(Zone::named("UTC").unwrap()),
        url_dir: Path::new("/u"),
        bin: Path::new(bin),
    };
    rewrite(text, &options, &|schedule, text, zone, job| {
        crate::plan::plan_one(
            schedule,
            text,
            zone,
            Some(job),
            Duration::ZERO,
            config.state_dir.as_deref(),
        )
    })
}

#[test]
fn a_command_of_998_bytes_passes_and_999_is_refused_naming_the_line() {
    let bin = "/b/crontap-run";
    let line = |n: usize| format!("0 0 * * * /bin/echo {}%in", "x".repeat(n));
    let wrapped = wrap(&line(1), bin).unwrap();
    let job = wrapped.text.lines().nth(1).unwrap();
    let command_len = job.len() - "0 0 * * * ".len();
    let fits = 1 + MAX_COMMAND - command_len;
    let wrapped = wrap(&line(fits), bin).unwrap();
    assert_eq!(wrapped.text.lines().nth(1).unwrap().len(), 10 + 998);
    let err = wrap(&format!("@daily /bin/true\n{}", line(fits + 1)), bin)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.starts_with("--crontab line 2: the wrapped command would be 999 bytes"),
        "{err}"
    );
}

#[test]
fn warnings_name_their_lines() {
    let wrapped = wrap(
        "CRON_TZ=UTC\n5-1 * * * * /bin/true\n0 0 * * * /bin/true\n",
        "/b/crontap-run",
    )
    .unwrap();
    assert_eq!(wrapped.warnings.len(), 2, "{:?}", wrapped.warnings);
    assert!(wrapped.warnings[0].starts_with("--crontab line 1: CRON_TZ=UTC"));
    assert!(wrapped.warnings[1].starts_with("--crontab line 2: the minute range 5-1"));
    assert_eq!(wrapped.planned.len(), 1);
}
