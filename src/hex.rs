//! Bytes as lower-case hexadecimal text: the one encoder for random names, run ids and the
//! digests that name files.

/// `bytes` as lower-case hex digits, two a byte.
pub fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        text.push(char::from(DIGITS[usize::from(b >> 4)]));
        text.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::encode;

    /// Every byte value, each checked against the digits written out by hand.
    #[test]
    fn every_byte_is_two_lower_case_digits() {
        let all: Vec<u8> = (0..=255).collect();
        let text = encode(&all);
        assert_eq!(text.len(), 512);
        let digits = "0123456789abcdef";
        for (b, pair) in all.iter().zip(text.as_bytes().chunks(2)) {
            let high = digits.as_bytes()[usize::from(b / 16)];
            let low = digits.as_bytes()[usize::from(b % 16)];
            assert_eq!(pair, [high, low], "byte {b}");
        }
        assert_eq!(encode(&[0x00, 0x7f, 0xa5, 0xff]), "007fa5ff");
        assert_eq!(encode(&[]), "");
    }
}
