//! Randomness, from one source: the kernel's (`getrandom(2)`), for run ids, the names of
//! temporary files, and the random waits (`--jitter`, the spread of retry pauses).
//!
//! Nothing here is a secret: a run id is sent with the report, a temporary name is created
//! exclusively (a guess gains nothing), and a wait only spreads load. What matters is that
//! two runs started in the same instant on a fleet of hosts do not pick the same values.

use std::io;

use nix::errno::Errno;
use nix::sys::time::TimeSpec;
use nix::time::{ClockId, clock_gettime};

/// `N` bytes from the kernel's random source.
pub fn bytes<const N: usize>() -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    let mut filled = 0;
    while filled < N {
        let rest = &mut bytes[filled..];
        // SAFETY: getrandom writes at most `rest.len()` bytes at `rest`, a live &mut slice.
        // (nix has no getrandom; ring's, through the getrandom crate, costs one more
        // system call per run to probe for it.)
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        match n {
            1.. => filled += n as usize,
            -1 if Errno::last() == Errno::EINTR => continue,
            -1 => return Err(io::Error::last_os_error()),
            _ => return Err(io::ErrorKind::UnexpectedEof.into()),
        }
    }
    Ok(bytes)
}

/// 32 lowercase hex digits.
pub fn hex() -> io::Result<String> {
    Ok(crate::hex::encode(&bytes::<16>()?))
}

/// A random (version 4) UUID in its usual text form, `xxxxxxxx-xxxx-4xxx-Yxxx-xxxxxxxxxxxx`.
/// Where the kernel gives no random bytes (a kernel older than 3.17, or a seccomp filter
/// that refuses the call), the bytes come from the clock, the process id and the address
/// space's layout, which still differ between runs.
pub fn uuid_v4() -> String {
    let mut b = bytes::<16>().unwrap_or_else(|_| fallback());
    b[6] = (b[6] & 0x0f) | 0x40; // version 4
    b[8] = (b[8] & 0x3f) | 0x80; // the variant of RFC 9562
    let hex = crate::hex::encode(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// A number in [0, 1), for a random share of a wait; 0.5 where the kernel gives none.
pub fn fraction() -> f64 {
    match bytes::<8>() {
        // The top 53 bits: every value a double holds exactly in [0, 1).
        Ok(b) => (u64::from_ne_bytes(b) >> 11) as f64 / (1u64 << 53) as f64,
        Err(_) => 0.5,
    }
}

/// 16 bytes that differ between runs without the kernel's random source: the monotonic and
/// wall clocks, the process id and where the stack is, mixed (SplitMix64's finaliser).
fn fallback() -> [u8; 16] {
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let now = clock_gettime(ClockId::CLOCK_MONOTONIC).unwrap_or(TimeSpec::new(0, 0));
    let monotonic = (now.tv_sec() as u64).wrapping_mul(1_000_000_000) ^ now.tv_nsec() as u64;
    let place = &now as *const TimeSpec as u64;
    let seed =
        wall ^ monotonic.rotate_left(17) ^ place.rotate_left(31) ^ u64::from(std::process::id());
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let a = mix(seed);
    let b = mix(seed.wrapping_add(0x9e37_79b9_7f4a_7c15));
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&a.to_ne_bytes());
    out[8..].copy_from_slice(&b.to_ne_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout RFC 9562 gives a version 4 UUID, checked character by character.
    fn is_uuid_v4(text: &str) -> bool {
        let chars: Vec<char> = text.chars().collect();
        chars.len() == 36
            && chars.iter().enumerate().all(|(i, &c)| match i {
                8 | 13 | 18 | 23 => c == '-',
                14 => c == '4',
                19 => matches!(c, '8' | '9' | 'a' | 'b'),
                _ => c.is_ascii_digit() || ('a'..='f').contains(&c),
            })
    }

    #[test]
    fn run_ids_are_version_4_uuids_and_differ() {
        let ids: Vec<String> = (0..64).map(|_| uuid_v4()).collect();
        for id in &ids {
            assert!(is_uuid_v4(id), "{id}");
        }
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ids.len());
        assert!(
            !is_uuid_v4("6f1c2d3e-4a5b-3c7d-8e9f-0a1b2c3d4e5f"),
            "version 3"
        );
        assert!(
            !is_uuid_v4("6f1c2d3e-4a5b-4c7d-7e9f-0a1b2c3d4e5f"),
            "variant"
        );
    }

    #[test]
    fn the_fallback_still_differs_between_calls() {
        // The monotonic clock counts nanoseconds: it moves between two calls, and the
        // mixed values follow it.
        assert_ne!(fallback(), fallback());
    }

    #[test]
    fn fractions_are_in_range_and_spread() {
        let values: Vec<f64> = (0..1000).map(|_| fraction()).collect();
        assert!(values.iter().all(|v| (0.0..1.0).contains(v)));
        // Each tenth of the range gets some: 1000 draws leave one empty with
        // probability about 10 * 0.9^1000, which is nil.
        for tenth in 0..10 {
            let (lo, hi) = (f64::from(tenth) / 10.0, f64::from(tenth + 1) / 10.0);
            assert!(values.iter().any(|v| (lo..hi).contains(v)), "{lo}..{hi}");
        }
    }

    #[test]
    fn hex_is_32_lowercase_digits_and_differs() {
        let (a, b) = (hex().unwrap(), hex().unwrap());
        assert_eq!(a.len(), 32);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        );
        assert_ne!(a, b);
    }
}
