//! One error type for the whole core. The kind maps to a status code at the WASM
//! boundary and to a typed error class in TypeScript.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The data (values, shape) cannot be used: NaN/Inf, empty, too few rows...
    InvalidData,
    /// An option or initial parameter is out of range or of the wrong shape.
    InvalidParameter,
    /// The numbers went bad during fitting (singular covariance, non-finite bound).
    Numerical,
    /// Memory for a buffer could not be allocated (crate::alloc): the request
    /// is too large for what is free, not wrong in itself.
    Allocation,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 4] = [ErrorKind::InvalidData, ErrorKind::InvalidParameter, ErrorKind::Numerical, ErrorKind::Allocation];

    /// Stable status code used across the C ABI (0 means success).
    pub const fn code(self) -> i32 {
        match self {
            ErrorKind::InvalidData => 1,
            ErrorKind::InvalidParameter => 2,
            ErrorKind::Numerical => 3,
            ErrorKind::Allocation => 4,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn data(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::InvalidData, message: message.into() }
    }
    pub fn param(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::InvalidParameter, message: message.into() }
    }
    pub fn numerical(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Numerical, message: message.into() }
    }
    /// `bytes` could not be allocated (an f64: a request may exceed the address space).
    pub fn allocation(bytes: f64) -> Self {
        Error { kind: ErrorKind::Allocation, message: format!("could not allocate {} bytes", show(bytes)) }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::show;

    #[test]
    fn numbers_read_as_in_javascript() {
        assert_eq!(show(1.0), "1");
        assert_eq!(show(-0.1), "-0.1");
        assert_eq!(show(1.1000000000000001), "1.1");
        assert_eq!(show(1e-301), "1e-301");
        assert_eq!(show(2.5e300), "2.5e300");
        assert_eq!(show(f64::NAN), "NaN");
        assert_eq!(show(f64::NEG_INFINITY), "-Infinity");
    }

    #[test]
    fn numbers_travel_as_their_bits() {
        assert_eq!(super::number_token(1.0), "\u{E000}3ff0000000000000");
        assert_eq!(super::number_token(-0.0), "\u{E000}8000000000000000");
        assert_eq!(super::number_token(f64::NAN).len(), 3 + 16);
        assert_eq!(super::token(super::DISPLAY_MARK, 0.5), "\u{E001}3fe0000000000000");
        assert_eq!(super::display(f64::INFINITY), "inf");
        assert_eq!(super::display(1e21), "1000000000000000000000");
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// A number as a message shows it to a JavaScript user: plain decimals for
/// ordinary magnitudes, exponent form for tiny or huge ones (Rust's `{}` would
/// print 1e-301 with 300 zeros), and NaN / Infinity spelled as JavaScript does.
///
/// In WebAssembly the number travels as its value, not as text: NUMBER_MARK
/// and the 16 hex digits of its bits, which TypeScript (ts/wasm/memory.ts)
/// replaces with the same text. Formatting an f64 (core::fmt's shortest and
/// exact float printing) would otherwise take about 20 KB of every module.
pub fn show(v: f64) -> String {
    if cfg!(target_arch = "wasm32") {
        number_token(v)
    } else {
        show_text(v)
    }
}

/// A number as Rust's `{}` writes it (inf, NaN, never an exponent), for the
/// messages that always did; in WebAssembly, DISPLAY_MARK and its bits, as show() does.
pub fn display(v: f64) -> String {
    if cfg!(target_arch = "wasm32") {
        token(DISPLAY_MARK, v)
    } else {
        display_text(v)
    }
}

/// What marks a number in a message made in WebAssembly (private-use characters):
/// written as show() writes it, or as Rust's `{}` (display()).
pub const NUMBER_MARK: char = '\u{E000}';
pub const DISPLAY_MARK: char = '\u{E001}';

/// NUMBER_MARK, then the bits of `v` as 16 lowercase hex digits.
pub fn number_token(v: f64) -> String {
    token(NUMBER_MARK, v)
}

/// `mark`, then the bits of `v` as 16 lowercase hex digits (written by hand:
/// integer formatting would do, but this needs none).
fn token(mark: char, v: f64) -> String {
    let bits = v.to_bits();
    let mut s = String::with_capacity(mark.len_utf8() + 16);
    s.push(mark);
    for i in (0..16).rev() {
        let nibble = ((bits >> (4 * i)) & 0xf) as u8;
        s.push(char::from(if nibble < 10 { b'0' + nibble } else { b'a' + nibble - 10 }));
    }
    s
}

#[cfg(not(target_arch = "wasm32"))]
fn show_text(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if v == 0.0 || (1e-6..1e21).contains(&v.abs()) {
        format!("{}", v)
    } else {
        format!("{:e}", v)
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn display_text(v: f64) -> String {
    format!("{}", v)
}

#[cfg(target_arch = "wasm32")]
fn show_text(v: f64) -> String {
    number_token(v)
}

#[cfg(target_arch = "wasm32")]
fn display_text(v: f64) -> String {
    token(DISPLAY_MARK, v)
}
