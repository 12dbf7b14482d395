//! The protocols there are, and which one a run uses: the one place that lists them, so that
//! the trait ([`protocol`](super::protocol)) and each protocol's file need not know of one
//! another.

use crate::cli::ProtocolChoice;
use crate::report::heartbeat::HeartbeatUrl;
use crate::report::protocol::Protocol;
use crate::report::{crontap, healthchecks};

/// The protocols there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Crontap,
    Healthchecks,
}

impl Kind {
    /// The protocol `--protocol` asks for; `auto` decides by the URL's host.
    pub fn choose(choice: ProtocolChoice, url: Option<&HeartbeatUrl>) -> Kind {
        match choice {
            ProtocolChoice::Crontap => Kind::Crontap,
            ProtocolChoice::Healthchecks => Kind::Healthchecks,
            ProtocolChoice::Auto if url.is_some_and(healthchecks::is_hosted) => Kind::Healthchecks,
            ProtocolChoice::Auto => Kind::Crontap,
        }
    }

    pub fn get(self) -> &'static dyn Protocol {
        match self {
            Kind::Crontap => &crontap::Crontap,
            Kind::Healthchecks => &healthchecks::Healthchecks,
        }
    }
}
