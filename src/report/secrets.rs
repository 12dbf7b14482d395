//! The secrets crontap-run holds besides the heartbeat URL's own parts, scrubbed from
//! anything it sends: the state store URL's credentials and the `--header` values, known
//! from the start, and the values of secret-looking variables in its environment, found
//! only when a failure's summary or a body first needs them. Finding those looks at every
//! variable, and a successful run never needs them.

use std::sync::{Arc, LazyLock};

/// Finds the environment's secrets, once.
type Find = Box<dyn FnOnce() -> Vec<String> + Send>;

#[derive(Clone)]
pub struct Secrets {
    known: Vec<String>,
    found: Arc<LazyLock<Vec<String>, Find>>,
}

impl Secrets {
    /// `known` now, and what `find` returns once asked for.
    pub fn new(known: Vec<String>, find: impl FnOnce() -> Vec<String> + Send + 'static) -> Secrets {
        Secrets {
            known,
            found: Arc::new(LazyLock::new(Box::new(find))),
        }
    }

    /// Every secret: the known ones, and the environment's, found now if they were not.
    pub fn all(&self) -> impl Iterator<Item = &String> {
        self.known.iter().chain(LazyLock::force(&self.found).iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    /// The environment's secrets are looked for only when asked for, and once, whichever
    /// copy asks.
    #[test]
    fn the_environment_is_searched_once_and_only_when_asked() {
        static SEARCHES: AtomicUsize = AtomicUsize::new(0);
        let secrets = Secrets::new(vec!["header-value".into()], || {
            SEARCHES.fetch_add(1, SeqCst);
            vec!["from-the-environment".into()]
        });
        let copy = secrets.clone();
        assert_eq!(SEARCHES.load(SeqCst), 0);
        let all: Vec<&String> = copy.all().collect();
        assert_eq!(all, ["header-value", "from-the-environment"]);
        assert_eq!(secrets.all().count(), 2);
        assert_eq!(SEARCHES.load(SeqCst), 1);
    }
}
