//! Least-squares straight-line fit via the normal equations (AᵀA)β = Aᵀy.
use crate::matrix::{Matrix, MatrixError};

#[derive(Debug, PartialEq)]
pub struct Line {
    pub slope: f64,
    pub intercept: f64,
}

pub fn fit_line(points: &[(f64, f64)]) -> Result<Line, MatrixError> {
    let a = Matrix::from_rows(&points.iter().map(|&(x, _)| vec![x, 1.0]).collect::<Vec<_>>());
    let y = Matrix::from_rows(&points.iter().map(|&(_, y)| vec![y]).collect::<Vec<_>>());
    let at = a.transpose();
    let ata = at.mul(&a)?;
    let aty = at.mul(&y)?;
    let beta = ata.solve(&[aty[(0, 0)], aty[(1, 0)]])?;
    Ok(Line { slope: beta[0], intercept: beta[1] })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn exact_line_through_three_points() {
        let line = fit_line(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]).unwrap();
        assert!(close(line.slope, 2.0) && close(line.intercept, 1.0), "{line:?}");
    }

    #[test]
    fn noisy_points() {
        let line = fit_line(&[(1.0, 2.0), (2.0, 2.5), (3.0, 4.5), (4.0, 5.0)]).unwrap();
        assert!(close(line.slope, 1.1) && close(line.intercept, 0.75), "{line:?}");
    }

    #[test]
    fn same_x_is_singular() {
        assert_eq!(fit_line(&[(1.0, 1.0), (1.0, 2.0), (1.0, 3.0)]), Err(MatrixError::Singular));
    }
}
