//! FedGEM (federated generalized EM for mixtures with an unknown number of
//! components): the numeric parts of its two roles.
//!
//! - client: an isotropic Gaussian mixture (covariance sigma^2 I, known sigma^2,
//!   fixed local weights) runs L EM steps on its means and reports, per
//!   component, the maximizer of the last M-step and the radius of its
//!   uncertainty ball;
//! - server: finds overlapping balls (a k-d tree or all pairs), moves each
//!   component to the average of the meeting points of its overlaps, and, at the
//!   end, merges overlapping components of different clients into
//!   super-clusters whose count estimates the global K.

pub mod client;
pub mod server;

#[cfg(test)]
mod tests;
