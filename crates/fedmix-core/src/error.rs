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
}

pub type Result<T> = std::result::Result<T, Error>;

/// A number as a message shows it to a JavaScript user: plain decimals for
/// ordinary magnitudes, exponent form for tiny or huge ones (Rust's `{}` would
/// print 1e-301 with 300 zeros), and NaN / Infinity spelled as JavaScript does.
pub fn show(v: f64) -> String {
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
