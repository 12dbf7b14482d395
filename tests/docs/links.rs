//! Every relative link in the documents leads to a file or directory of the repository,
//! and every `#anchor` to a heading of the Markdown file it names (GitHub's anchors).

use crate::markdown::{self, Doc};

/// What is wrong with one link, or `None` when it resolves.
fn broken(doc: &Doc, target: &str) -> Option<String> {
    if target.is_empty() {
        return Some("an empty link".into());
    }
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    if path.is_empty() {
        let anchor = anchor.unwrap_or_default();
        let found = markdown::anchors(&doc.text).contains(anchor);
        return (!found).then(|| format!("{target}: no heading here has the anchor #{anchor}"));
    }
    let Some(file) = markdown::resolve(&doc.path, path) else {
        return Some(format!("{target} leads out of the repository"));
    };
    let full = markdown::root().join(&file);
    if !full.exists() {
        return Some(format!("{target}: {} does not exist", file.display()));
    }
    let anchor = anchor?;
    if file.extension().is_none_or(|ext| ext != "md") {
        return Some(format!(
            "{target}: an anchor into a file that is not Markdown"
        ));
    }
    let text = std::fs::read_to_string(&full).expect("a Markdown file can be read");
    let anchors = markdown::anchors(&text);
    (!anchors.contains(anchor)).then(|| {
        format!(
            "{target}: {} has no heading with the anchor #{anchor}",
            file.display()
        )
    })
}

/// The problems of every link in `docs`, one line each, with where the link is.
pub fn problems(docs: &[Doc]) -> Vec<String> {
    let mut out = Vec::new();
    for doc in docs {
        for (line, text) in markdown::prose_lines(&doc.text) {
            for target in markdown::link_targets(text) {
                if let Some(why) = broken(doc, &target) {
                    out.push(format!("{}:{line}: {why}", doc.path.display()));
                }
            }
        }
    }
    out
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let docs = markdown::documents();
    let links: usize = docs
        .iter()
        .flat_map(|doc| markdown::prose_lines(&doc.text))
        .map(|(_, line)| markdown::link_targets(line).len())
        .sum();
    assert!(
        links > 50,
        "only {links} links found: is the link parser broken?"
    );
    let problems = problems(&docs);
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_broken_link_or_anchor_is_found() {
    let doc = |text: &str| Doc {
        path: "docs/example.md".into(),
        text: text.into(),
    };
    let good = doc("[state](state.md#history), [up](../README.md#why), [here](#a-b)\n\n## A b\n");
    let bad_here = doc("[here](#a-c)\n\n## A b\n");
    assert_eq!(problems(&[bad_here]).len(), 1);
    assert_eq!(problems(&[good]), Vec::<String>::new());
    let bad = doc("[x](nowhere.md) [y](state.md#no-such-heading) `[z](ignored.md)`\n");
    let found = problems(&[bad]);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].contains("docs/nowhere.md does not exist"),
        "{found:?}"
    );
    assert!(found[1].contains("#no-such-heading"), "{found:?}");
}

#[test]
fn anchors_follow_github() {
    let text = "# Only failures: `--output on-failure`\n## Several hosts: PostgreSQL and Redis\n## Size\n## Size\n```\n# not a heading\n```\n";
    let anchors = markdown::anchors(text);
    let want = [
        "only-failures---output-on-failure",
        "several-hosts-postgresql-and-redis",
        "size",
        "size-1",
    ];
    assert_eq!(anchors, want.iter().map(|s| s.to_string()).collect());
}
