//! Small dense matrices and a least-squares line fit built on them.
pub mod fit;
pub mod matrix;

pub use matrix::Matrix;
