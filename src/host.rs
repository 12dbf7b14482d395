//! This machine's host name, as `hostname` prints it, read in one place: for the fail ping
//! of `crontap-run check` and the records a state server keeps of who holds a lock.

/// The host name; `None` if it cannot be read or is empty.
pub fn name() -> Option<String> {
    nix::unistd::gethostname()
        .ok()
        .map(|name| name.to_string_lossy().into_owned())
        .filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_name_is_the_kernels() {
        // The kernel's own copy, which gethostname(2) reads on Linux.
        let kernel = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(super::name().as_deref(), Some(kernel.trim_end()));
    }
}
