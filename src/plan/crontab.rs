//! `plan --crontab`: a crontab printed again with every job wrapped in crontap-run.
//!
//! Each job line becomes `/path/to/crontap-run --job NAME --url-file DIR/NAME.url --
//! COMMAND`, under a comment with its heartbeat's period and grace. crontap-run is named by
//! its absolute path, as cron's PATH (`/usr/bin:/bin`) holds neither `/usr/local/bin` nor
//! `~/.local/bin`, unless the crontab's `PATH` holds its directory. NAME comes from the
//! command ([`names`]), unique in the file, also against the names lines already wrapped
//! use. A command that needs the shell runs as `$SHELL -c '…'` ([`shell`]); cron's `%` rule
//! and the command's input are kept. A wrapped command longer than Debian's cron takes is
//! an error naming its line. Blank lines, comments, variable lines, `@reboot` lines and
//! lines already wrapped are printed as they are. `CRON_TZ` sets the zone of the schedules
//! after it (with a warning: Debian's cron ignores it), `SHELL` the shell that wraps their
//! commands, `PATH` where cron finds crontap-run.

use std::ffi::OsString;
use std::path::Path;

use anyhow::{Result, anyhow};

use crate::plan::cron::Schedule;
use crate::plan::names::{self, Names};
use crate::plan::{NoPeriod, Planned, Zone, report, shell};

/// How to read and wrap the crontab.
pub struct Options<'a> {
    /// The `/etc/crontab` format: a user field before the command.
    pub system: bool,
    /// The zone of the lines before any `CRON_TZ` line; `None`: the system's.
    pub zone: Option<Zone>,
    pub url_dir: &'a Path,
    /// The crontap-run binary the wrapped lines run: an absolute path.
    pub bin: &'a Path,
}

/// The longest command Debian's cron takes (its `MAX_COMMAND` of 1000 bytes, less the
/// terminating NUL and one more: `crontab` refuses 999 bytes with "command too long"). It
/// counts every byte after the blanks that follow the schedule (and, in the system format,
/// the user field): the standard input after `%` and trailing blanks included.
pub const MAX_COMMAND: usize = 998;

/// The crontab wrapped, and the heartbeat of each job wrapped.
pub struct Rewritten {
    pub text: String,
    pub planned: Vec<Planned>,
    /// One line each, naming the crontab line: what cron reads otherwise than it looks.
    pub warnings: Vec<String>,
}

/// Plans one job: its schedule, the schedule as written, its zone and its job name.
pub type PlanJob<'a> = dyn Fn(&Schedule, &str, &Zone, &str) -> Result<Planned> + 'a;

/// What the lines so far have set.
struct Settings {
    zone: Option<Zone>,
    /// `SHELL`, if set: cron runs the commands with it.
    shell: Option<String>,
    /// `PATH`, if set: where cron's shell finds programs.
    path: Option<String>,
    names: Names,
    /// The warnings of the line being read.
    warnings: Vec<String>,
}

/// Rewrites `text`; an error names the line.
pub fn rewrite(text: &str, options: &Options, plan: &PlanJob) -> Result<Rewritten> {
    check_url_dir(options.url_dir)?;
    let mut settings = Settings {
        zone: options.zone.clone(),
        shell: None,
        path: None,
        names: taken_names(text, options.system),
        warnings: Vec::new(),
    };
    let mut out = Rewritten {
        text: String::with_capacity(text.len() * 2),
        planned: Vec::new(),
        warnings: Vec::new(),
    };
    if let Some(warning) = carriage_returns(text) {
        out.warnings.push(warning);
    }
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        let wrapped = rewrite_line(body, options, &mut settings, plan)
            .map_err(|e| anyhow!("--crontab line {}: {e:#}", i + 1))?;
        for warning in settings.warnings.drain(..) {
            out.warnings
                .push(format!("--crontab line {}: {warning}", i + 1));
        }
        match wrapped {
            Line::Wrapped(text, planned) => {
                out.text.push_str(&report::comment(&planned));
                out.text.push('\n');
                out.text.push_str(&text);
                out.planned.push(*planned);
            }
            Line::Kept => out.text.push_str(body),
            Line::NeverFires(comment) => {
                out.text.push_str(comment);
                out.text.push('\n');
                out.text.push_str(body);
            }
        }
        out.text.push_str(end);
    }
    Ok(out)
}

/// The names that lines already wrapped use, wherever they are: no job wrapped now may
/// have them.
fn taken_names(text: &str, system: bool) -> Names {
    let mut names = Names::default();
    let mut crontab_job: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start_matches([' ', '\t']);
        if is_variable(trimmed) {
            if let Some((name, value)) = variable_pair(trimmed)
                && name == "CRONTAP_JOB"
            {
                crontab_job = Some(value);
            }
            continue;
        }
        let Ok(Some(entry)) = job_line(line, system) else {
            continue;
        };
        let command = shell::unescape(shell::split_input(entry.command).0);
        if shell::wrapped_job(&command).is_some()
            && let Some(name) = names::of_wrapped(&command, crontab_job.as_deref())
        {
            names.take(name);
        }
    }
    names
}

/// The comment above a line not wrapped because a range in its schedule selects nothing.
const NO_TIME: &str = "# crontap-run plan: not wrapped: this schedule never fires (a range in it \
                       ends before it starts, which Debian's cron accepts and never matches)";

/// What becomes of one line.
enum Line {
    /// Printed as it is.
    Kept,
    /// A job whose schedule never fires (a common way to turn a job off, which cron
    /// accepts): printed as it is, under a comment that says why it is not wrapped.
    NeverFires(&'static str),
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

/// A file saved with Windows line endings: cron keeps the carriage return as part of each
/// line (a command ends in it and is not found), and so do the wrapped lines. One warning,
/// naming the first such line and how many there are.
fn carriage_returns(text: &str) -> Option<String> {
    // Not `lines()`, which takes a carriage return before a line feed for part of the end.
    let mut with = text
        .split('\n')
        .enumerate()
        .filter(|(_, line)| line.ends_with('\r'));
    let (first, _) = with.next()?;
    Some(format!(
        "--crontab: {} line(s) end in a carriage return, the first line {} (Windows line \
         endings): cron keeps it as part of the line, so a command ends in one and is not \
         found, wrapped or not; convert the file (dos2unix) and plan it again",
        1 + with.count(),
        first + 1
    ))
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
    settings.warnings.extend(schedule.warnings.iter().cloned());
    let (argv, shown) = how_it_runs(&command, settings);
    let shell_command = shown.is_some().then_some(command.as_str());
    let name = settings.names.unique(names::for_line(&argv, shell_command));
    let url_file = options.url_dir.join(format!("{name}.url"));
    let url_file = url_file
        .to_str()
        .ok_or_else(|| anyhow!("--url-dir is not UTF-8"))?
        .to_owned();
    let bin = bin_word(options.bin, settings.path.as_deref())?;
    let wrapped = wrapped_command(&bin, &name, &url_file, written, &command, shown.as_deref())?;
    let length = wrapped.len() + input.len();
    if length > MAX_COMMAND {
        return Err(anyhow!(
            "the wrapped command would be {length} bytes, and Debian's cron refuses a command \
             over {MAX_COMMAND} (\"command too long\", the whole crontab not installed): move \
             the command into a script, or shorten --bin or --url-dir"
        ));
    }
    let zone = settings.zone.get_or_insert_with(Zone::system).clone();
    let mut planned = match plan(&schedule, entry.schedule, &zone, &name) {
        Ok(planned) => planned,
        Err(err) if err.downcast_ref::<NoPeriod>().is_some_and(NoPeriod::never) => {
            // The name goes back: no line uses it.
            settings.names.release(&name);
            return Ok(Line::NeverFires(match schedule.selects_no_time() {
                true => NO_TIME,
                false => report::NEVER_FIRES,
            }));
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

/// How the wrapped line names crontap-run: its absolute path, or its bare name when the
/// crontab's `PATH` finds it there first (a directory before it that has a `crontap-run`
/// of its own, on this host, would win).
fn bin_word(bin: &Path, path: Option<&str>) -> Result<String> {
    let text = bin.to_str().ok_or_else(|| anyhow!("--bin is not UTF-8"))?;
    let Some(dir) = bin
        .parent()
        .filter(|_| bin.file_name() == Some("crontap-run".as_ref()))
    else {
        return Ok(shell::quote(text));
    };
    for entry in path.unwrap_or_default().split(':') {
        // Cron's shell looks a relative entry up in the job's directory: no directory
        // known here.
        if !entry.starts_with('/') {
            continue;
        }
        let entry = Path::new(entry);
        let same = entry == dir || std::fs::canonicalize(entry).is_ok_and(|e| e == dir);
        if same {
            return Ok("crontap-run".to_owned());
        }
        if std::fs::symlink_metadata(entry.join("crontap-run")).is_ok() {
            break;
        }
    }
    Ok(shell::quote(text))
}

/// The command part of the wrapped line: crontap-run (`bin`, as a shell word) with the
/// job's name and URL file, then the command as `written` (or `shown`, when it goes to the
/// shell), escaped for cron; an error when cron would not read back the `command` that was
/// meant.
fn wrapped_command(
    bin: &str,
    name: &str,
    url_file: &str,
    written: &str,
    command: &str,
    shown: Option<&str>,
) -> Result<String> {
    let prefix = format!(
        "{bin} --job {name} --url-file {} -- ",
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
    // cronie's `~` may start a field too.
    if !(first.is_ascii_digit() || "*@-~".contains(first)) {
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

/// A variable line's name and value, `NAME = value`, either side optionally quoted, as
/// cron reads it.
fn variable_pair(line: &str) -> Option<(String, String)> {
    let (name, value) = line.split_once('=')?;
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
    Some((unquote(name), unquote(value)))
}

/// A variable line: `CRON_TZ`, `SHELL` and `PATH` are noted.
fn variable(line: &str, settings: &mut Settings) -> Result<()> {
    let Some((name, value)) = variable_pair(line) else {
        return Ok(());
    };
    match name.as_str() {
        "CRON_TZ" => {
            settings.zone = Some(Zone::named(&value).map_err(|e| anyhow!("CRON_TZ: {e}"))?);
            settings.warnings.push(format!(
                "CRON_TZ={value}: the schedules after it are planned in {value}, as cronie \
                 reads them, but Debian's and Ubuntu's cron ignore CRON_TZ and run every job \
                 in the system's zone (/etc/localtime)"
            ));
        }
        "SHELL" => settings.shell = Some(value),
        "PATH" => settings.path = Some(value),
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

#[cfg(test)]
#[path = "crontab_tests.rs"]
mod tests;
