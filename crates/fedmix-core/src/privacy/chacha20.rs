//! ChaCha20 (RFC 8439): the block function and a keystream read as numbers,
//! the cryptographically secure generator behind the distributed-DP noise
//! shares (a client's noise must be as unpredictable to the server as its
//! masks are). Keyed by 256 bits the caller draws from crypto.getRandomValues;
//! the block counter runs on into the first nonce word, so one key gives
//! 2^64 blocks before it would repeat (far past any vector).

/// "expand 32-byte k"
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

#[inline(always)]
fn quarter_round(s: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(16);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(12);
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(8);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(7);
}

/// One 64-byte block of keystream as 16 little-endian words (RFC 8439, 2.3).
pub fn chacha20_block(key: &[u32; 8], counter: u32, nonce: &[u32; 3]) -> [u32; 16] {
    let mut input = [0u32; 16];
    input[..4].copy_from_slice(&SIGMA);
    input[4..12].copy_from_slice(key);
    input[12] = counter;
    input[13..].copy_from_slice(nonce);
    let mut s = input;
    for _ in 0..10 {
        quarter_round(&mut s, 0, 4, 8, 12);
        quarter_round(&mut s, 1, 5, 9, 13);
        quarter_round(&mut s, 2, 6, 10, 14);
        quarter_round(&mut s, 3, 7, 11, 15);
        quarter_round(&mut s, 0, 5, 10, 15);
        quarter_round(&mut s, 1, 6, 11, 12);
        quarter_round(&mut s, 2, 7, 8, 13);
        quarter_round(&mut s, 3, 4, 9, 14);
    }
    for (o, i) in s.iter_mut().zip(input.iter()) {
        *o = o.wrapping_add(*i);
    }
    s
}

/// The 32-byte key as eight little-endian words.
pub fn key_words(key: &[u8; 32]) -> [u32; 8] {
    let mut k = [0u32; 8];
    for (i, w) in k.iter_mut().enumerate() {
        *w = u32::from_le_bytes([key[4 * i], key[4 * i + 1], key[4 * i + 2], key[4 * i + 3]]);
    }
    k
}

/// The ChaCha20 keystream (nonce 0, counter from 0) read as u32, u64 and uniform f64.
pub struct ChaCha20Rng {
    key: [u32; 8],
    /// the next block's number: low 32 bits the RFC counter, high 32 bits the first nonce word
    block: u64,
    buffer: [u32; 16],
    /// the next unread word of `buffer` (16: none left)
    at: usize,
}

impl ChaCha20Rng {
    pub fn new(key: &[u8; 32]) -> ChaCha20Rng {
        ChaCha20Rng { key: key_words(key), block: 0, buffer: [0; 16], at: 16 }
    }

    pub fn next_u32(&mut self) -> u32 {
        if self.at == 16 {
            let nonce = [(self.block >> 32) as u32, 0, 0];
            self.buffer = chacha20_block(&self.key, self.block as u32, &nonce);
            self.block = self.block.wrapping_add(1);
            self.at = 0;
        }
        let w = self.buffer[self.at];
        self.at += 1;
        w
    }

    /// Two words, the first the low half (the keystream's bytes read as a little-endian u64).
    pub fn next_u64(&mut self) -> u64 {
        let lo = self.next_u32() as u64;
        lo | (self.next_u32() as u64) << 32
    }

    /// Uniform on [0, 1): 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on (0, 1): never 0, so its logarithm is finite.
    pub fn next_open_f64(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(words: &[u32]) -> String {
        words.iter().flat_map(|w| w.to_le_bytes()).map(|b| format!("{:02x}", b)).collect()
    }

    #[test]
    fn rfc8439_block_test_vector() {
        // RFC 8439 2.3.2: key 00..1f, nonce 00:00:00:09:00:00:00:4a:00:00:00:00, counter 1
        let mut key = [0u8; 32];
        for (i, b) in key.iter_mut().enumerate() {
            *b = i as u8;
        }
        let nonce = [0x0900_0000, 0x4a00_0000, 0];
        let block = chacha20_block(&key_words(&key), 1, &nonce);
        assert_eq!(
            hex(&block),
            "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4ed2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
        );
    }

    #[test]
    fn the_stream_is_the_keystream_from_counter_zero() {
        // the all-zero key's first two blocks (RFC 8439 A.1 test vectors 1 and 2)
        let mut rng = ChaCha20Rng::new(&[0u8; 32]);
        let words: Vec<u32> = (0..32).map(|_| rng.next_u32()).collect();
        assert_eq!(
            hex(&words),
            "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586\
             9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f"
        );
        let mut rng = ChaCha20Rng::new(&[0u8; 32]);
        assert_eq!(rng.next_u64(), 0x903d_f1a0_ade0_b876);
    }
}
