//! Spring Framework's `DataBinder` quoting a value it bound and then rejected:
//! `Field error in object 'mail' on field 'password': rejected value [«…»]; codes […]`, as
//! a `BindException` prints every field error (Spring Framework 4.3 from Debian, as run
//! here). The value goes when the field's name (or its last `.` part: `datasource.password`)
//! is a secret's, to the `]; codes [` that ends it (a value may hold `]`), or to the line's
//! last `]`; an empty value and Spring's `[null]` stay.

use super::super::super::names::names_a_secret;
use super::lex::{Span, Text, line_end, line_end_within};

const CUE: &str = " on field '";
const VALUE: &str = "': rejected value [";
/// Most bytes from a field's name to its value (a name is a property path).
const NAME_REACH: usize = 256;

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    for (at, _) in text.lower.match_indices(CUE) {
        let name_at = at + CUE.len();
        let reach = line_end_within(text.raw, name_at, NAME_REACH);
        let Some(close) = text.lower[name_at..reach].find(VALUE) else {
            continue;
        };
        let name = &text.raw[name_at..name_at + close];
        let last = name.rsplit('.').next().unwrap_or(name);
        if name.contains(['\'', ' ']) || !(names_a_secret(name) || names_a_secret(last)) {
            continue;
        }
        let inner = name_at + close + VALUE.len();
        let rest = &text.raw[inner..line_end(text.raw, inner)];
        let Some(stop) = rest.find("]; codes [").or_else(|| rest.rfind(']')) else {
            continue;
        };
        // Spring writes a null as `[null]`.
        if stop > 0 && &rest[..stop] != "null" {
            out.push((inner, inner + stop));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::assert_lexed;
    use super::*;

    #[test]
    fn a_rejected_secret_goes_and_other_fields_stay() {
        assert_lexed(
            secrets,
            &[
                (
                    "Field error in object 'mail' on field 'password': rejected value [Lantern-narwhal57!*]; codes [password.length.mail.password,password.length]; arguments []; default message [at most 12 characters]",
                    "Field error in object 'mail' on field 'password': rejected value [[REDACTED]]; codes [password.length.mail.password,password.length]; arguments []; default message [at most 12 characters]",
                ),
                (
                    "Field error in object 'app' on field 'datasource.password': rejected value [a]b c]; codes [x]",
                    "Field error in object 'app' on field 'datasource.password': rejected value [[REDACTED]]; codes [x]",
                ),
                (
                    "Field error in object 'app' on field 'apiToken': rejected value [Kq8vN2xL]",
                    "Field error in object 'app' on field 'apiToken': rejected value [[REDACTED]]",
                ),
            ],
        );
        for text in [
            "Field error in object 'mail' on field 'port': rejected value [smtp]; codes [typeMismatch.mail.port]; arguments []",
            "Field error in object 'mail' on field 'password': rejected value []; codes [NotBlank]",
            "Field error in object 'mail' on field 'password': rejected value [null]; codes [NotNull]",
        ] {
            let want = text;
            assert_lexed(secrets, &[(text, want)]);
        }
    }
}
