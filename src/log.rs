//! crontap-run's own log lines on stderr.
//!
//! Quiet by default: notices (a skipped run), warnings and errors only, and a successful run
//! has none. `-v` shows debug lines, `-vv` trace lines, `-q` leaves errors only; these cover crontap-run's own
//! code, not its libraries. `CRONTAP_LOG` takes a full `EnvFilter` directive instead (used
//! only when neither flag is given). Text lines read `crontap-run: warning: …`;
//! `--log-format json` prints one JSON object per line. Nothing logged at any level holds
//! the heartbeat URL: the code logs only its host.

use std::fmt;
use std::io::{self, Write as _};

use anyhow::Result;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::LookupSpan;

use crate::cli::LogFormat;

pub struct Settings {
    filter: Filter,
    format: LogFormat,
}

enum Filter {
    Own(LevelFilter),
    Directive(Box<EnvFilter>),
}

impl Settings {
    /// Chooses the filter from the flags, else from `directive` (the value of `CRONTAP_LOG`).
    pub fn new(
        quiet: bool,
        verbose: u8,
        directive: Option<&str>,
        format: LogFormat,
    ) -> Result<Settings> {
        let filter = match (quiet, verbose, directive) {
            (true, _, _) => Filter::Own(LevelFilter::ERROR),
            (false, 1, _) => Filter::Own(LevelFilter::DEBUG),
            (false, 2.., _) => Filter::Own(LevelFilter::TRACE),
            (false, 0, Some(directive)) if !directive.trim().is_empty() => {
                Filter::Directive(Box::new(
                    // The parse error's text already includes its cause; no chain.
                    EnvFilter::builder().parse(directive).map_err(|e| {
                        anyhow::anyhow!("CRONTAP_LOG is not a valid log filter directive: {e}")
                    })?,
                ))
            }
            (false, 0, _) => Filter::Own(LevelFilter::INFO),
        };
        Ok(Settings { filter, format })
    }

    /// Installs the subscriber for the rest of the process.
    pub fn init(self) {
        let (own, directive) = match self.filter {
            Filter::Own(level) => (
                Some(Targets::new().with_target(env!("CARGO_CRATE_NAME"), level)),
                None,
            ),
            Filter::Directive(filter) => (None, Some(*filter)),
        };
        let text = (self.format == LogFormat::Text).then(|| {
            tracing_subscriber::fmt::layer()
                .with_writer(io::stderr)
                .event_format(TextLine)
        });
        let json = (self.format == LogFormat::Json).then(|| {
            tracing_subscriber::fmt::layer()
                .json()
                .flatten_event(true)
                .with_current_span(false)
                .with_span_list(false)
                .with_writer(io::stderr)
        });
        // Only fails if a subscriber was already installed, which nothing else does.
        let _ = tracing_subscriber::registry()
            .with(own)
            .with(directive)
            .with(text)
            .with(json)
            .try_init();
    }
}

/// Prints crontap-run's own fatal error once: through the log when it is set up and shows
/// errors (so `--log-format json` covers it), else as a plain line on stderr.
pub fn report_error(err: &anyhow::Error) {
    if tracing::dispatcher::has_been_set() && tracing::enabled!(Level::ERROR) {
        tracing::error!("{err:#}");
    } else {
        let _ = writeln!(io::stderr(), "crontap-run: error: {err:#}");
    }
}

/// `crontap-run: warning: message key=value`.
struct TextLine;

impl<S, N> FormatEvent<S, N> for TextLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let level = match *event.metadata().level() {
            Level::ERROR => "error",
            Level::WARN => "warning",
            // Info is used for notices only: things an operator wants to see by default.
            Level::INFO => "notice",
            Level::DEBUG => "debug",
            Level::TRACE => "trace",
        };
        write!(writer, "crontap-run: {level}: ")?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}
