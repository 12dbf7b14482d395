//! The documented token formats, one row each, and the search that finds them in text.
//!
//! A [`Format`] row is the whole definition of one vendor's token: the pattern, the vendor
//! page it follows (`doc`), a sample written from that page in the template language of
//! [`sample`], and a near miss that must be left alone. The unit tests, the table in
//! `crates/scrub/README.md` and the fuzzing dictionary are all made from these rows
//! (`cargo xtask formats`), so adding a format is adding one row. The rows live in one
//! file per kind of vendor, below.
//!
//! Every pattern is written from the vendor's own description of its format, never taken
//! from another tool.
//!
//! A row with triggers starts with a literal (`ghp_`, `xoxb-`, `AKIA`): one regex made of
//! nothing but the triggers finds every place where a token may start, and only there is
//! a row's own pattern tried, anchored. A row's pattern is compiled the first time its
//! trigger is seen, so a text without tokens compiles only the trigger regex, and the cost
//! stays one linear scan however long the table grows. The few shapes with no literal
//! start (a Telegram bot token starts with digits) have no triggers and run as one regex
//! over the whole text.
//!
//! A pattern may start with one capture group: text that is kept in front of the marker (a
//! URL path, `AccountKey=`). Rows marked [`Check::Mixed`] have a weak shape (a short common
//! prefix such as `md-`): the token also needs a letter and a digit after the trigger, so
//! that `md-heading-level-one-title-x` stays.

/// A UUID in either case, for the rows' patterns.
macro_rules! uuid {
    () => {
        "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    };
}

mod ai;
mod cloud;
mod code;
mod find;
mod general;
mod messaging;
mod observability;
mod payments;
mod saas;
#[cfg_attr(not(any(test, feature = "catalog")), allow(dead_code))]
pub(crate) mod sample;

#[cfg(test)]
mod tests;

pub(crate) use find::find;

/// An extra test on a row's match.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Check {
    /// The pattern alone decides.
    Shape,
    /// After the trigger, the token holds at least one ASCII letter and one digit.
    Mixed,
}

/// One vendor's documented token format.
#[derive(Debug)]
// The search reads only the triggers, pattern and check; the rest is for the tests.
#[cfg_attr(not(any(test, feature = "catalog")), allow(dead_code))]
pub(crate) struct Format {
    /// Who issues the token, for the table: `GitHub`.
    pub vendor: &'static str,
    /// What kind of token, for the table and test messages: `personal access token`.
    pub kind: &'static str,
    /// The vendor's page that documents the format.
    pub doc: &'static str,
    /// Literal starts of the token; the pattern matches only text starting with one. Empty
    /// for the few formats without a literal start.
    pub triggers: &'static [&'static str],
    /// The token's shape, tried anchored where a trigger starts (`\b` is ASCII). An
    /// optional first capture group is text kept in front of the marker.
    pub pattern: &'static str,
    pub check: Check,
    /// Text the pattern keeps in front of the secret (a webhook URL's path), in the same
    /// template language as the sample.
    pub kept: &'static str,
    /// The secret as the vendor documents it, in the [`sample`] template language:
    /// `ghp_{b62:36}` is `ghp_` and 36 letters and digits.
    pub sample: &'static str,
    /// Text that looks like the token but is not one (same template language); the table
    /// must not find it.
    pub near_miss: &'static str,
}

impl Format {
    /// The fields most rows leave as they are: `..Format::ROW`.
    pub(crate) const ROW: Format = Format {
        vendor: "",
        kind: "",
        doc: "",
        triggers: &[],
        pattern: "",
        check: Check::Shape,
        kept: "",
        sample: "",
        near_miss: "",
    };

    /// `GitHub personal access token`, for messages.
    #[cfg_attr(not(any(test, feature = "catalog")), allow(dead_code))]
    pub(crate) fn title(&self) -> String {
        format!("{} {}", self.vendor, self.kind)
    }
}

/// Every row, grouped by kind of vendor.
pub(crate) fn all() -> impl Iterator<Item = &'static Format> {
    [
        code::FORMATS,
        cloud::FORMATS,
        ai::FORMATS,
        payments::FORMATS,
        messaging::FORMATS,
        observability::FORMATS,
        saas::FORMATS,
        general::FORMATS,
    ]
    .into_iter()
    .flatten()
}
