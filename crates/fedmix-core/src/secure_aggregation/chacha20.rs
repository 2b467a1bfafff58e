//! ChaCha20 (RFC 8439): the stream cipher that expands 256-bit seeds into
//! masks and into the neighbour graph's permutation. Scalar code: one block
//! is 20 rounds over 16 words, fast enough that masking is bounded by memory
//! traffic (bench/secure-aggregation.mjs measures it).

const CONSTANTS: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

fn words<const N: usize>(bytes: &[u8]) -> [u32; N] {
    let mut w = [0u32; N];
    for (i, v) in w.iter_mut().enumerate() {
        *v = u32::from_le_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]]);
    }
    w
}

/// The ChaCha20 state for a key and nonce, whose block counter the caller advances.
#[derive(Clone)]
pub struct ChaCha20 {
    state: [u32; 16],
}

impl ChaCha20 {
    pub fn new(key: &[u8; 32], nonce: &[u8; 12], counter: u32) -> ChaCha20 {
        let mut state = [0u32; 16];
        state[..4].copy_from_slice(&CONSTANTS);
        state[4..12].copy_from_slice(&words::<8>(key));
        state[12] = counter;
        state[13..].copy_from_slice(&words::<3>(nonce));
        ChaCha20 { state }
    }

    /// The block at the current counter, as 16 little-endian words; advances the counter.
    /// The counter is 32 bits (RFC 8439): 256 GiB of stream per key and nonce, far
    /// beyond any vector wasm32 can hold, so it never wraps here.
    #[inline]
    pub fn next_block(&mut self) -> [u32; 16] {
        // sixteen locals rather than an array: the rounds stay in registers (WASM locals)
        let s = &self.state;
        let (mut x0, mut x1, mut x2, mut x3) = (s[0], s[1], s[2], s[3]);
        let (mut x4, mut x5, mut x6, mut x7) = (s[4], s[5], s[6], s[7]);
        let (mut x8, mut x9, mut x10, mut x11) = (s[8], s[9], s[10], s[11]);
        let (mut x12, mut x13, mut x14, mut x15) = (s[12], s[13], s[14], s[15]);
        macro_rules! qr {
            ($a:ident, $b:ident, $c:ident, $d:ident) => {
                $a = $a.wrapping_add($b);
                $d = ($d ^ $a).rotate_left(16);
                $c = $c.wrapping_add($d);
                $b = ($b ^ $c).rotate_left(12);
                $a = $a.wrapping_add($b);
                $d = ($d ^ $a).rotate_left(8);
                $c = $c.wrapping_add($d);
                $b = ($b ^ $c).rotate_left(7);
            };
        }
        for _ in 0..10 {
            qr!(x0, x4, x8, x12);
            qr!(x1, x5, x9, x13);
            qr!(x2, x6, x10, x14);
            qr!(x3, x7, x11, x15);
            qr!(x0, x5, x10, x15);
            qr!(x1, x6, x11, x12);
            qr!(x2, x7, x8, x13);
            qr!(x3, x4, x9, x14);
        }
        let x = [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15];
        let mut out = [0u32; 16];
        for ((o, v), si) in out.iter_mut().zip(x.iter()).zip(s.iter()) {
            *o = v.wrapping_add(*si);
        }
        self.state[12] = self.state[12].wrapping_add(1);
        out
    }

    /// XORs the key stream into `data` (encryption and decryption, RFC 8439 section 2.4).
    pub fn xor_into(&mut self, data: &mut [u8]) {
        for chunk in data.chunks_mut(64) {
            let block = self.next_block();
            for (i, b) in chunk.iter_mut().enumerate() {
                *b ^= (block[i / 4] >> (8 * (i % 4))) as u8;
            }
        }
    }
}

/// A stream of uniform integers from ChaCha20 (key, nonce, counter from 0).
pub struct Stream {
    cipher: ChaCha20,
    block: [u32; 16],
    next: usize,
}

impl Stream {
    pub fn new(key: &[u8; 32], nonce: &[u8; 12]) -> Stream {
        Stream { cipher: ChaCha20::new(key, nonce, 0), block: [0; 16], next: 16 }
    }

    pub fn next_u32(&mut self) -> u32 {
        if self.next == 16 {
            self.block = self.cipher.next_block();
            self.next = 0;
        }
        self.next += 1;
        self.block[self.next - 1]
    }

    /// Two consecutive words, the first the low half (the stream's bytes read as a u64 LE).
    pub fn next_u64(&mut self) -> u64 {
        let lo = self.next_u32() as u64;
        lo | (self.next_u32() as u64) << 32
    }

    /// A uniform integer in [0, bound) for bound >= 1, by rejection (no modulo bias).
    pub fn below(&mut self, bound: u32) -> u32 {
        let limit = u32::MAX - u32::MAX % bound;
        loop {
            let r = self.next_u32();
            if r < limit {
                return r % bound;
            }
        }
    }
}

/// vector += sign * mask mod 2^64, the mask being ChaCha20(key = seed, nonce = 0,
/// counter from 0) read as little-endian u64 words: word j is stream bytes 8j..8j+8.
pub fn apply_mask(vector: &mut [u64], seed: &[u8; 32], subtract: bool) {
    let mut cipher = ChaCha20::new(seed, &[0; 12], 0);
    for chunk in vector.chunks_mut(8) {
        let b = cipher.next_block();
        if subtract {
            for (i, v) in chunk.iter_mut().enumerate() {
                *v = v.wrapping_sub(b[2 * i] as u64 | (b[2 * i + 1] as u64) << 32);
            }
        } else {
            for (i, v) in chunk.iter_mut().enumerate() {
                *v = v.wrapping_add(b[2 * i] as u64 | (b[2 * i + 1] as u64) << 32);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace() && *c != ':').collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn key_0_to_31() -> [u8; 32] {
        let mut k = [0u8; 32];
        for (i, b) in k.iter_mut().enumerate() {
            *b = i as u8;
        }
        k
    }

    #[test]
    fn block_function_rfc8439_2_3_2() {
        let nonce: [u8; 12] = hex("000000090000004a00000000").try_into().unwrap();
        let block = ChaCha20::new(&key_0_to_31(), &nonce, 1).next_block();
        let mut bytes = Vec::new();
        for w in block.iter() {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        let expected = hex(
            "10 f1 e7 e4 d1 3b 59 15 50 0f dd 1f a3 20 71 c4 c7 d1 f4 c7 33 c0 68 03 04 22 aa 9a c3 d4 6c 4e
             d2 82 64 46 07 9f aa 09 14 c2 d7 05 d9 8b 02 a2 b5 12 9c d1 de 16 4e b9 cb d0 83 e8 a2 50 3c 4e",
        );
        assert_eq!(bytes, expected);
    }

    #[test]
    fn encryption_rfc8439_2_4_2() {
        let nonce: [u8; 12] = hex("000000000000004a00000000").try_into().unwrap();
        let mut data = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".to_vec();
        ChaCha20::new(&key_0_to_31(), &nonce, 1).xor_into(&mut data);
        let expected = hex(
            "6e 2e 35 9a 25 68 f9 80 41 ba 07 28 dd 0d 69 81 e9 7e 7a ec 1d 43 60 c2 0a 27 af cc fd 9f ae 0b
             f9 1b 65 c5 52 47 33 ab 8f 59 3d ab cd 62 b3 57 16 39 d6 24 e6 51 52 ab 8f 53 0c 35 9f 08 61 d8
             07 ca 0d bf 50 0d 6a 61 56 a3 8e 08 8a 22 b6 5e 52 bc 51 4d 16 cc f8 06 81 8c e9 1a b7 79 37 36
             5a f9 0b bf 74 a3 5b e6 b4 0b 8e ed f2 78 5e 42 87 4d",
        );
        assert_eq!(data, expected);
    }

    #[test]
    fn key_stream_rfc8439_a_1_vectors_1_and_2() {
        // A.1 test vector #1: all-zero key and nonce, counter 0
        let mut z = [0u8; 64];
        ChaCha20::new(&[0; 32], &[0; 12], 0).xor_into(&mut z);
        assert_eq!(
            z.to_vec(),
            hex("76 b8 e0 ad a0 f1 3d 90 40 5d 6a e5 53 86 bd 28 bd d2 19 b8 a0 8d ed 1a a8 36 ef cc 8b 77 0d c7
                 da 41 59 7c 51 57 48 8d 77 24 e0 3f b8 d8 4a 37 6a 43 b8 f4 15 18 a1 1c c3 87 b6 69 b2 ee 65 86")
        );
        // #2: the same, counter 1
        let mut z = [0u8; 64];
        ChaCha20::new(&[0; 32], &[0; 12], 1).xor_into(&mut z);
        assert_eq!(
            z.to_vec(),
            hex("9f 07 e7 be 55 51 38 7a 98 ba 97 7c 73 2d 08 0d cb 0f 29 a0 48 e3 65 69 12 c6 53 3e 32 ee 7a ed
                 29 b7 21 76 9c e6 4e 43 d5 71 33 b0 74 d8 39 d5 31 ed 1f 28 51 0a fb 45 ac e1 0a 1f 4b 79 4d 6f")
        );
    }

    #[test]
    fn mask_is_the_key_stream_as_u64_words_and_cancels() {
        let seed = key_0_to_31();
        let mut stream = vec![0u8; 8 * 19];
        ChaCha20::new(&seed, &[0; 12], 0).xor_into(&mut stream);
        let mut v = vec![5u64; 19];
        apply_mask(&mut v, &seed, false);
        for (j, w) in v.iter().enumerate() {
            let m = u64::from_le_bytes(stream[8 * j..8 * j + 8].try_into().unwrap());
            assert_eq!(*w, m.wrapping_add(5));
        }
        apply_mask(&mut v, &seed, true);
        assert_eq!(v, vec![5u64; 19]);
    }

    #[test]
    fn below_is_in_range_and_covers_it() {
        let mut s = Stream::new(&[7; 32], &[0; 12]);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            seen[s.below(7) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 850 && c < 1150), "{:?}", seen);
    }
}
