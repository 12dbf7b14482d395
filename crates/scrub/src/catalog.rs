//! A read-only view of the documented token formats (the rows in `formats`), for build
//! tooling: `cargo xtask formats` writes the table in `crates/scrub/README.md` and the
//! fuzzing dictionary `crates/scrub/fuzz/formats.dict` from it.
//!
//! Compiled only with the `catalog` feature, which is off by default and which crontap-run
//! does not enable: without it this module does not exist, and the rows stay private.

#![cfg(feature = "catalog")]

use crate::formats::{self, sample};

/// One documented token format, as the table and the dictionary show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Format {
    /// Who issues the token: `GitHub`.
    pub vendor: &'static str,
    /// What kind of token: `personal access token`.
    pub kind: &'static str,
    /// The vendor's page that documents the format.
    pub doc: &'static str,
    /// Literal starts of the token (empty for the few formats without one).
    pub triggers: &'static [&'static str],
    /// The token in words: `` `ghp_` + 36 letters and digits ``, followed by the text the
    /// pattern keeps in front of it, if any: `` …, after `hooks.slack.com/services/` ``.
    pub described: String,
    /// One token made from the row's sample, with the kept text in front. The same on every
    /// run: the generator's seed comes from the row itself, so another row added or moved
    /// changes nothing here.
    pub sample: String,
    /// One text made from the row's near miss: looks like the token, is not one.
    pub near_miss: String,
    /// The literal pieces of the row's templates (kept text, sample, near miss), in that
    /// order.
    pub literals: Vec<&'static str>,
}

/// Every row, in the order the scrubber tries them, or the first malformed template.
pub fn formats() -> Result<Vec<Format>, String> {
    formats::all().map(view).collect()
}

fn view(row: &'static formats::Format) -> Result<Format, String> {
    let templates = [row.kept, row.sample, row.near_miss];
    for template in templates {
        sample::check(template).map_err(|e| format!("{}: {e}", row.title()))?;
    }
    let mut rng = sample::Rng::new(seed(row));
    let kept = sample::render(row.kept, &mut rng);
    let secret = sample::render(row.sample, &mut rng);
    let near_miss = sample::render(row.near_miss, &mut rng);
    let mut described = sample::describe(row.sample);
    if !row.kept.is_empty() {
        described = format!("{described}, after {}", sample::describe(row.kept));
    }
    Ok(Format {
        vendor: row.vendor,
        kind: row.kind,
        doc: row.doc,
        triggers: row.triggers,
        described,
        sample: kept + &secret,
        near_miss,
        literals: templates.into_iter().flat_map(sample::literals).collect(),
    })
}

/// FNV-1a of the row's names and sample: a seed that depends on nothing but the row.
fn seed(row: &formats::Format) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    for part in [row.vendor, row.kind, row.kept, row.sample] {
        for byte in part.bytes().chain([0]) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_view_per_row_and_the_same_each_time() {
        let first = formats().expect("well-formed rows");
        assert_eq!(first.len(), formats::all().count());
        assert_eq!(formats().expect("well-formed rows"), first);
    }

    #[test]
    fn each_sample_is_found_and_each_near_miss_left() {
        for format in formats().expect("well-formed rows") {
            let text = format!("error: {} end", format.sample);
            assert!(
                !formats::find(&text).is_empty(),
                "{} {}: {text:?}",
                format.vendor,
                format.kind
            );
            let text = format!("error: {} end", format.near_miss);
            assert!(
                formats::find(&text).is_empty(),
                "{} {}: {text:?}",
                format.vendor,
                format.kind
            );
        }
    }
}
