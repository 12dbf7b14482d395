//! `plan --crontab`: a crontab printed again with every job wrapped in crontap-run.
//!
//! Each job line becomes `crontap-run --job NAME --url-file DIR/NAME.url -- COMMAND`, under
//! a comment with its heartbeat's period and grace. NAME is what a run of the wrapped
//! command would derive (`job::derived_name`), made unique in the file. A command that
//! needs the shell runs as `$SHELL -c '…'` ([`shell`]); cron's `%` rule and the command's
//! input are kept. Blank lines, comments, variable lines, `@reboot` lines and lines already
//! wrapped are printed as they are. `CRON_TZ` sets the zone of the schedules after it,
//! `SHELL` the shell that wraps their commands.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::Path;

use anyhow::{Result, anyhow};

use crate::plan::cron::Schedule;
use crate::plan::{NoPeriod, Planned, Zone, report, shell};
use crate::state::job;

/// How to read and wrap the crontab.
pub struct Options<'a> {
    /// The `/etc/crontab` format: a user field before the command.
    pub system: bool,
    /// The zone of the lines before any `CRON_TZ` line; `None`: the system's.
    pub zone: Option<Zone>,
    pub url_dir: &'a Path,
}

/// The crontab wrapped, and the heartbeat of each job wrapped.
pub struct Rewritten {
    pub text: String,
    pub planned: Vec<Planned>,
}

/// Plans one job: its schedule, the schedule as written, its zone and its job name.
pub type PlanJob<'a> = dyn Fn(&Schedule, &str, &Zone, &str) -> Result<Planned> + 'a;

/// What the lines so far have set.
struct Settings {
    zone: Option<Zone>,
    /// `SHELL`, if set: cron runs the commands with it.
    shell: Option<String>,
    /// The job names taken, and for each name asked for the last suffix tried.
    names: HashSet<String>,
    suffixes: HashMap<String, u32>,
}

/// Rewrites `text`; an error names the line.
pub fn rewrite(text: &str, options: &Options, plan: &PlanJob) -> Result<Rewritten> {
    check_url_dir(options.url_dir)?;
    let mut settings = Settings {
        zone: options.zone.clone(),
        shell: None,
        // The names wrapped lines have, wherever they are: no job wrapped now may have them.
        names: text
            .lines()
            .filter_map(|line| {
                let entry = job_line(line, options.system).ok()??;
                shell::wrapped_job(&shell::unescape(shell::split_input(entry.command).0))?
            })
            .collect(),
        suffixes: HashMap::new(),
    };
    let mut out = Rewritten {
        text: String::with_capacity(text.len() * 2),
        planned: Vec::new(),
    };
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        let wrapped = rewrite_line(body, options, &mut settings, plan)
            .map_err(|e| anyhow!("--crontab line {}: {e:#}", i + 1))?;
        match wrapped {
            Line::Wrapped(text, planned) => {
                out.text.push_str(&report::comment(&planned));
                out.text.push('\n');
                out.text.push_str(&text);
                out.planned.push(*planned);
            }
            Line::Kept => out.text.push_str(body),
            Line::NeverFires => {
                out.text.push_str(report::NEVER_FIRES);
                out.text.push('\n');
                out.text.push_str(body);
            }
        }
        out.text.push_str(end);
    }
    Ok(out)
}

/// What becomes of one line.
enum Line {
    /// Printed as it is.
    Kept,
    /// A job whose schedule never fires (a common way to turn a job off, which cron
    /// accepts): printed as it is, under a comment that says why it is not wrapped.
    NeverFires,
    /// The wrapped line and its heartbeat.
    Wrapped(String, Box<Planned>),
}

/// `--url-dir` as it will be written on every wrapped line must read back the same through
/// cron's `%` rule.
fn check_url_dir(dir: &Path) -> Result<()> {
    let dir = dir
        .to_str()
        .ok_or_else(|| anyhow!("--url-dir is not UTF-8"))?;
    let quoted = shell::quote(dir);
    let escaped = shell::escape(&quoted);
    let (runs, rest) = shell::split_input(&escaped);
    match shell::unescape(runs) == quoted && rest.is_empty() {
        true => Ok(()),
        false => Err(anyhow!(
            "--url-dir {quoted} cannot be written on a crontab line so that cron reads it back \
             unchanged (a backslash before %)"
        )),
    }
}

/// What becomes of `line`.
fn rewrite_line(
    line: &str,
    options: &Options,
    settings: &mut Settings,
    plan: &PlanJob,
) -> Result<Line> {
    if line.contains('\0') {
        return Err(anyhow!("a NUL byte, at which cron would cut the line"));
    }
    let trimmed = line.trim_start_matches([' ', '\t']);
    if is_variable(trimmed) {
        variable(trimmed, settings)?;
        return Ok(Line::Kept);
    }
    let Some(entry) = job_line(line, options.system)? else {
        return Ok(Line::Kept);
    };
    let schedule = Schedule::parse(entry.schedule).map_err(|e| anyhow!("{e}"))?;
    let (written, input) = shell::split_input(entry.command);
    let command = shell::unescape(written);
    if shell::wrapped_job(&command).is_some() {
        return Ok(Line::Kept);
    }
    let (argv, shown) = how_it_runs(&command, settings);
    let name = settings.unique(job::derived_name(&argv));
    let url_file = options.url_dir.join(format!("{name}.url"));
    let url_file = url_file
        .to_str()
        .ok_or_else(|| anyhow!("--url-dir is not UTF-8"))?
        .to_owned();
    let wrapped = wrapped_command(&name, &url_file, written, &command, shown.as_deref())?;
    let zone = settings.zone.get_or_insert_with(Zone::system).clone();
    let mut planned = match plan(&schedule, entry.schedule, &zone, &name) {
        Ok(planned) => planned,
        Err(err) if err.downcast_ref::<NoPeriod>().is_some_and(NoPeriod::never) => {
            // The name goes back: no line uses it.
            settings.names.remove(&name);
            return Ok(Line::NeverFires);
        }
        Err(err) => return Err(err),
    };
    planned.command = Some(command);
    planned.url_file = Some(url_file);
    let text = format!("{}{wrapped}{input}", &line[..entry.command_at]);
    Ok(Line::Wrapped(text, Box::new(planned)))
}

/// The program and arguments that run `command`; when they are cron's shell, also how the
/// wrapped line shows them (`$SHELL -c '…'`).
fn how_it_runs(command: &str, settings: &Settings) -> (Vec<OsString>, Option<String>) {
    // A simple command runs without a shell only where cron's shell is /bin/sh: another
    // shell may give the same words another meaning (a function from bash's BASH_ENV, an
    // alias), so there the command goes to that shell as it did.
    let plain_sh = settings.shell.as_deref().is_none_or(|s| s == "/bin/sh");
    let (argv, shown) = match shell::simple_words(command).filter(|_| plain_sh) {
        Some(words) => (words.iter().map(|w| (*w).to_owned()).collect(), None),
        None => {
            // The shell cron would have run it with.
            let program = settings
                .shell
                .clone()
                .unwrap_or_else(|| "/bin/sh".to_owned());
            let quoted = format!("{} -c {}", shell::quote(&program), shell::quote(command));
            (
                vec![program, "-c".to_owned(), command.to_owned()],
                Some(quoted),
            )
        }
    };
    (argv.into_iter().map(OsString::from).collect(), shown)
}

/// The command part of the wrapped line: crontap-run with the job's name and URL file, then
/// the command as `written` (or `shown`, when it goes to the shell), escaped for cron; an
/// error when cron would not read back the `command` that was meant.
fn wrapped_command(
    name: &str,
    url_file: &str,
    written: &str,
    command: &str,
    shown: Option<&str>,
) -> Result<String> {
    let prefix = format!(
        "crontap-run --job {name} --url-file {} -- ",
        shell::quote(url_file)
    );
    // A simple command stays as written; the shell's one argument is escaped for cron.
    let wrapped = match shown {
        None => format!("{}{written}", shell::escape(&prefix)),
        Some(quoted) => shell::escape(&format!("{prefix}{quoted}")),
    };
    // What cron will run must be what was meant, whatever the text held.
    let expected = format!("{prefix}{}", shown.unwrap_or(command));
    let (runs, rest) = shell::split_input(&wrapped);
    if shell::unescape(runs) != expected || !rest.is_empty() {
        return Err(anyhow!(
            "cannot wrap this command so that cron runs it unchanged"
        ));
    }
    Ok(wrapped)
}

impl Settings {
    /// `name`, or `name-2`, `name-3` … if an earlier line has it. The search for a name
    /// goes on from where the last one for the same name stopped, so that many lines with
    /// one command cost no more than as many names.
    fn unique(&mut self, name: String) -> String {
        let mut candidate = name.clone();
        let n = self.suffixes.entry(name.clone()).or_insert(1);
        while self.names.contains(&candidate) {
            *n += 1;
            candidate = format!("{name}-{n}");
        }
        self.names.insert(candidate.clone());
        candidate
    }
}

/// The job on a line that is neither blank, a comment nor a variable line; `None` for
/// those and for `@reboot`. A line that is none of these is an error, as cron refuses it.
fn job_line(line: &str, system: bool) -> Result<Option<Entry<'_>>> {
    let trimmed = line.trim_start_matches([' ', '\t']);
    let Some(first) = trimmed.chars().next() else {
        return Ok(None);
    };
    if first == '#' || is_variable(trimmed) {
        return Ok(None);
    }
    if !(first.is_ascii_digit() || "*@-".contains(first)) {
        return Err(anyhow!(
            "neither a job, a variable nor a comment (cron would refuse the crontab)"
        ));
    }
    Entry::split(line, system)
}

/// Whether cron reads `line` (blanks before it removed) as a variable line, which it tries
/// before a job (cronie's `load_env`): a name, quoted or up to a blank or `=`, then blanks
/// and `=`.
fn is_variable(line: &str) -> bool {
    let after_name = match line.chars().next() {
        Some(quote @ ('"' | '\'')) => match line[1..].find(quote) {
            Some(end) if !line[1..1 + end].contains('=') => &line[end + 2..],
            _ => return false,
        },
        _ => line.trim_start_matches(|c: char| !matches!(c, ' ' | '\t' | '=')),
    };
    after_name.trim_start_matches([' ', '\t']).starts_with('=')
}

/// A variable line, `NAME = value` (either side optionally quoted, as cron reads it):
/// `CRON_TZ` and `SHELL` are noted.
fn variable(line: &str, settings: &mut Settings) -> Result<()> {
    let Some((name, value)) = line.split_once('=') else {
        return Ok(());
    };
    let unquote = |s: &str| {
        let s = s.trim();
        let quoted = s.len() >= 2
            && ((s.starts_with('"') && s.ends_with('"'))
                || (s.starts_with('\'') && s.ends_with('\'')));
        match quoted {
            true => s[1..s.len() - 1].to_owned(),
            false => s.to_owned(),
        }
    };
    let (name, value) = (unquote(name), unquote(value));
    match name.as_str() {
        "CRON_TZ" => {
            settings.zone = Some(Zone::named(&value).map_err(|e| anyhow!("CRON_TZ: {e}"))?)
        }
        "SHELL" => settings.shell = Some(value),
        _ => {}
    }
    Ok(())
}

/// A job line cut into its parts.
struct Entry<'a> {
    schedule: &'a str,
    command: &'a str,
    /// Where the command starts in the line: everything before it is kept.
    command_at: usize,
}

impl<'a> Entry<'a> {
    /// `None` for `@reboot`.
    fn split(line: &'a str, system: bool) -> Result<Option<Entry<'a>>> {
        let start = line.len() - line.trim_start_matches([' ', '\t']).len();
        // cronie's `-` before the schedule: the job is not logged.
        let start = start + usize::from(line[start..].starts_with('-'));
        let fields = match line[start..].starts_with('@') {
            true => 1,
            false => 5,
        } + usize::from(system);
        let mut at = start;
        let mut schedule_end = start;
        for n in 0..fields {
            at += line[at..].len() - line[at..].trim_start_matches([' ', '\t']).len();
            let len = line[at..].find([' ', '\t']).unwrap_or(line.len() - at);
            if len == 0 {
                return Err(anyhow!("a job line needs a schedule and a command"));
            }
            at += len;
            if n + 1 == fields - usize::from(system) {
                schedule_end = at;
            }
        }
        let schedule = &line[start..schedule_end];
        if schedule == "@reboot" {
            return Ok(None);
        }
        let command_at = at + line[at..].len() - line[at..].trim_start_matches([' ', '\t']).len();
        let command = &line[command_at..];
        if command.trim().is_empty() {
            return Err(anyhow!("a job line needs a command after its schedule"));
        }
        Ok(Some(Entry {
            schedule,
            command,
            command_at,
        }))
    }
}
