//! Connection strings (ADO.NET, ODBC, JDBC properties): `Password=…;` between `;`s.

use std::sync::LazyLock;

use regex::Regex;

/// `Password=…;` and `Pwd=…;` in connection strings, where a value may hold spaces.
pub(super) static CONNECTION_STRING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?im)(;[\ \t]*|^|[\ \t])((?:password|pwd)\s*=\s*)([^;\r\n\[][^;\r\n]*)(;|$)")
        .expect("valid pattern")
});
